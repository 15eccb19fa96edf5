// The stack's state as the harness keeps it between runs: a JSON file, like a local backend's checkpoint,
// holding what the engine stores per resource (pkg/resource/state.go: ID, Inputs, Outputs, InitErrors,
// External, Delete, Taint).

import { readFile, writeFile } from "node:fs/promises";
import type { Props } from "../support/providerServer";

/** One resource in state. */
export interface ResourceState {
    readonly urn: string;
    readonly type: string;
    readonly name: string;
    /** False for component resources, which have no provider. */
    readonly custom: boolean;
    id?: string;
    inputs: Props;
    outputs: Props;
    /** Set when the last Create or Update was a partial failure (ErrorResourceInitFailed). */
    initErrors?: string[];
    /** Read with `get`: never created or deleted by the engine. */
    external?: boolean;
    /** The old half of a create-before-delete replacement, deleted after the program finishes. */
    delete?: boolean;
    /** `pulumi state taint`: replaced on the next `up`. */
    taint?: boolean;
}

/** The whole stack, resources in registration order (dependencies before dependents). */
export interface StackState {
    version: 1;
    resources: ResourceState[];
}

/** An empty stack. */
export function emptyState(): StackState {
    return { version: 1, resources: [] };
}

/** Loads a state file; a missing file is an empty stack. */
export async function loadState(file: string): Promise<StackState> {
    try {
        return JSON.parse(await readFile(file, "utf8")) as StackState;
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyState();
        throw error;
    }
}

/** Saves a state file. */
export async function saveState(file: string, state: StackState): Promise<void> {
    await writeFile(file, `${JSON.stringify(state, null, 2)}\n`);
}

/** The URN the engine gives a top-level resource. */
export function urnOf(stack: string, project: string, type: string, name: string): string {
    return `urn:pulumi:${stack}::${project}::${type}::${name}`;
}

/** Dynamic resources go to the dynamic-provider server; everything else gets a plain mock. */
export function isDynamic(type: string): boolean {
    return type.startsWith("pulumi-nodejs:dynamic");
}
