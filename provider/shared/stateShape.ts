// The shape of what each resource keeps in the stack's state, and how a newer package reads an older one.
//
// Every create and update records `stateVersion` in the outputs. Reads keep whatever version was on
// record (a refresh of a stack that has not changed must show no change, even across an upgrade), and
// every operation reads the outputs through the migration of its resource kind, so a package that changes
// the shape later reads the older shapes without a change showing. State with no version on record has
// the shape of version 1 (every version of the package before versioning wrote it).
//
// Refresh also records the resource's inputs as read (`inputs` of a read, SDK 3.216+): the input
// fields of the outputs as the file or the API has them now, so a change made outside Pulumi shows in
// `pulumi preview --diff` on the field that drifted instead of as an unexplained `~ update`.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { NewerStateError } from "./errors/newerStateError";

/** The state-shape version this package writes. */
export const STATE_VERSION = 1;

/** Outputs with the state-shape version of this package. */
export function stamped<T extends object>(outputs: T): T & { stateVersion: number } {
    return { ...outputs, stateVersion: STATE_VERSION };
}

/**
 * The state-shape version of stored outputs (1 when none is on record); refuses state that a newer
 * package wrote, naming `resource`, rather than misread it.
 */
export function stateVersionOf(outputs: object | undefined, resource: string): number {
    const recorded = (outputs as { stateVersion?: unknown } | undefined)?.stateVersion;
    const version = typeof recorded === "number" && Number.isInteger(recorded) && recorded > 0 ? recorded : 1;
    if (version > STATE_VERSION) throw new NewerStateError(resource, version, STATE_VERSION);
    return version;
}

/** Keeps the version on record (or its absence) in outputs a read produced. */
export function keepingVersion<T extends object>(outputs: T, stored: object | undefined): T {
    const { stateVersion: _, ...rest } = outputs as T & { stateVersion?: number };
    const recorded = (stored as { stateVersion?: unknown } | undefined)?.stateVersion;
    return (recorded === undefined ? rest : { ...rest, stateVersion: recorded }) as T;
}

/** The inputs a refresh records: the given input fields of the outputs as read, those that are set. */
export function inputsAsRead<T extends object, K extends keyof T>(outputs: T, keys: readonly K[]): Pick<T, K> {
    const inputs = {} as Pick<T, K>;
    for (const key of keys) if (outputs[key] !== undefined) inputs[key] = outputs[key];
    return inputs;
}

/** A read's answer: the resource as read, and its inputs as read (the SDK types `inputs` as outputs). */
export function readAnswer<O extends object>(id: string, props: O, inputs: object): dynamic.ReadResult<O> {
    return { id, props, inputs: inputs as O };
}
