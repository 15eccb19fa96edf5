// The shape of what each resource keeps in the stack's state, and how a newer package reads an older one.
//
// Every create and update records `stateVersion` in the outputs. Reads keep whatever version was on
// record (a refresh of a stack that has not changed must show no change, even across an upgrade), and
// every operation reads the outputs through the migration of its resource kind, so a package that changes
// the shape later reads the older shapes without a change showing. State with no version on record has
// the shape of version 1 (every version of the package before versioning wrote it).
//
// A refresh that finds drift also records the resource's inputs as read (`inputs` of a read, SDK
// 3.216+): the input fields of the outputs as the file or the API has them now, so a change made outside
// Pulumi shows in `pulumi preview --diff` on the field that drifted instead of as an unexplained
// `~ update`. Without drift the inputs on record stay exactly as they are (a read keeps the state).

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { canonicalJson } from "./canonicalJson";
import { NewerStateError } from "./errors/newerStateError";

/**
 * `true` when `Listed` names every field of `T`, else `never`: a list of a resource's fields checked as
 * `const every: ListsEvery<T, Listed> = true` stops compiling when a field is added to `T` and not to it.
 */
export type ListsEvery<T, Listed> = Exclude<keyof T, Listed> extends never ? true : never;

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

/**
 * The inputs a refresh records: the given input fields of the outputs as read, when one of them differs
 * from the outputs on record (`stored`); undefined when nothing drifted.
 */
export function driftedInputs<T extends object, K extends keyof T>(
    asRead: T,
    stored: Partial<T> | undefined,
    keys: readonly K[],
): Pick<T, K> | undefined {
    if (!stored) return undefined;
    const drifted = keys.some((key) => !sameJson(asRead[key], stored[key]));
    if (!drifted) return undefined;
    const inputs = {} as Pick<T, K>;
    for (const key of keys) if (asRead[key] !== undefined) inputs[key] = asRead[key];
    return inputs;
}

/** Whether two JSON values are equal; a refresh asks for every field of every resource, mostly scalars. */
function sameJson(a: unknown, b: unknown): boolean {
    if (a === b) return true;
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, at) => item === b[at])) {
        return true;
    }
    return canonicalJson(a) === canonicalJson(b);
}

/** A read's answer: the resource as read, and its inputs as read when they drifted (the SDK types `inputs` as outputs). */
export function readAnswer<O extends object>(id: string, props: O, inputs: object | undefined): dynamic.ReadResult<O> {
    return inputs === undefined ? { id, props } : { id, props, inputs: inputs as O };
}
