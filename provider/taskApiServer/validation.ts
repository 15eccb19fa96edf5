// Checks of decoded JSON that every request body shares. Each failure is a 400 whose message names the
// field (as a path such as `fault.task.durationMs`) and the problem, so a client's author can fix the
// request from the message alone.

import { quote } from "../shared/text";
import { badRequest } from "./apiError";

/** A decoded JSON object. */
export type JsonObject = Record<string, unknown>;

/** `value` as an object with no fields but `allowed`; `what` names it in messages ("the body", "fault"). */
export function objectWithFields(value: unknown, what: string, allowed: readonly string[]): JsonObject {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw badRequest(`${what} must be a JSON object, not ${describeJson(value)}.`);
    }
    const object = value as JsonObject;
    for (const key of Object.keys(object)) {
        if (!allowed.includes(key)) {
            const expected = allowed.length === 0 ? "no fields" : `only ${allowed.join(", ")}`;
            throw badRequest(`${fieldPath(what, key)}: unknown field; ${what} takes ${expected}.`);
        }
    }
    return object;
}

/** A required string field. */
export function requiredString(object: JsonObject, field: string, what: string): string {
    const value = object[field];
    if (value === undefined) throw badRequest(`${fieldPath(what, field)} is required.`);
    if (typeof value !== "string") {
        throw badRequest(`${fieldPath(what, field)} must be a string, not ${describeJson(value)}.`);
    }
    return value;
}

/** An optional string field. */
export function optionalString(object: JsonObject, field: string, what: string): string | undefined {
    return object[field] === undefined ? undefined : requiredString(object, field, what);
}

/** A required whole number within [min, max]. */
export function requiredInteger(
    object: JsonObject,
    field: string,
    what: string,
    range: { readonly min: number; readonly max?: number; readonly unit?: string },
): number {
    const value = object[field];
    const name = fieldPath(what, field);
    if (value === undefined) throw badRequest(`${name} is required.`);
    if (typeof value !== "number") throw badRequest(`${name} must be a number, not ${describeJson(value)}.`);
    if (!Number.isSafeInteger(value)) throw badRequest(`${name} must be a whole number, not ${value}.`);
    const unit = range.unit ? ` ${range.unit}` : "";
    if (value < range.min) throw badRequest(`${name} must be at least ${range.min}${unit}, not ${value}.`);
    if (range.max !== undefined && value > range.max) {
        throw badRequest(`${name} must be at most ${range.max}${unit}, not ${value}.`);
    }
    return value;
}

/** An optional whole number within [min, max]. */
export function optionalInteger(
    object: JsonObject,
    field: string,
    what: string,
    range: { readonly min: number; readonly max?: number; readonly unit?: string },
): number | undefined {
    return object[field] === undefined ? undefined : requiredInteger(object, field, what, range);
}

/** `true`, the only value flag faults take. */
export function requiredTrue(object: JsonObject, field: string, what: string): true {
    if (object[field] !== true) {
        throw badRequest(`${fieldPath(what, field)} must be true, not ${describeJson(object[field])}.`);
    }
    return true;
}

/** `what.field`, or just `field` for the top level of a body. */
export function fieldPath(what: string, field: string): string {
    return what === "the body" ? field : `${what}.${field}`;
}

/** A JSON value described for a message: its type, and short scalars themselves. */
export function describeJson(value: unknown): string {
    if (value === null) return "null";
    if (Array.isArray(value)) return "an array";
    if (typeof value === "string") return value.length <= 40 ? `the string ${quote(value)}` : "a long string";
    if (typeof value === "number" || typeof value === "boolean") return String(value);
    if (value === undefined) return "nothing";
    return "an object";
}

/**
 * The canonical JSON of a value: object keys sorted at every level, no whitespace. Two requests that
 * differ only in key order or formatting have the same canonical JSON.
 */
export function canonicalJson(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
    if (typeof value === "object" && value !== null) {
        const entries = Object.keys(value)
            .sort()
            .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as JsonObject)[key])}`);
        return `{${entries.join(",")}}`;
    }
    return JSON.stringify(value) ?? "null";
}
