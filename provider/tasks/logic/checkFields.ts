// Pure checks of the fields every async resource shares (the create token, timeouts, flags), and the
// one way a bad value is described in a check failure.

import { parseDuration } from "../../shared/duration";
import { describeCharacter, describeInput } from "../../shared/text";
import { isUnknown } from "../../shared/unknown";
import { type CustomTimeouts, type OperationTimeouts, TIMEOUT_KEYS } from "../timeoutsSchema";

/** Reports a check failure: the property and why. */
export type Fail = (property: string, reason: string) => void;

const TOKEN_CHARACTER = /^[\x21-\x7e]$/;

export function createToken(value: unknown, fail: Fail): string | undefined {
    if (value === undefined || value === null || isUnknown(value)) return (value ?? undefined) as string | undefined;
    // 240, not the header's 255: the keys of later creates append "~<n>" (see createKey).
    if (typeof value !== "string" || value.length === 0 || value.length > 240) {
        fail("createToken", `${describeInput(value)} is not a token of 1 to 240 characters`);
        return undefined;
    }
    const bad = [...value].find((c) => !TOKEN_CHARACTER.test(c));
    if (bad !== undefined) {
        fail(
            "createToken",
            `contains ${describeCharacter(bad)}; a token is printable ASCII without spaces (it is sent as a header)`,
        );
        return undefined;
    }
    return value;
}

export function timeouts(value: unknown, fail: Fail): OperationTimeouts | undefined {
    if (value === undefined || value === null || isUnknown(value))
        return (value ?? undefined) as OperationTimeouts | undefined;
    if (typeof value !== "object" || Array.isArray(value)) {
        fail("timeouts", `must be an object such as { create: "30m" }, not ${describeInput(value)}`);
        return undefined;
    }
    const result: OperationTimeouts = {};
    for (const [key, duration] of Object.entries(value as Record<string, unknown>)) {
        if (!(TIMEOUT_KEYS as readonly string[]).includes(key)) {
            fail(`timeouts.${key}`, `is not an operation with a timeout; use ${TIMEOUT_KEYS.join(", ")}`);
            continue;
        }
        if (duration === undefined || isUnknown(duration)) continue;
        if (typeof duration !== "string") {
            fail(`timeouts.${key}`, `must be a duration string such as "30m", not ${describeInput(duration)}`);
            continue;
        }
        const parsed = parseDuration(duration);
        if (typeof parsed !== "number") fail(`timeouts.${key}`, parsed.problem);
        else result[key as keyof OperationTimeouts] = duration;
    }
    return result;
}

/**
 * The customTimeouts option the resource class recorded: the create, update and delete strings kept
 * as given (the engine already accepted them; one this package cannot parse is ignored when used).
 */
export function recordedCustomTimeouts(value: unknown): CustomTimeouts | undefined {
    if (value === null || typeof value !== "object" || Array.isArray(value) || isUnknown(value)) return undefined;
    const kept: CustomTimeouts = {};
    for (const key of ["create", "update", "delete"] as const) {
        const duration = (value as Record<string, unknown>)[key];
        if (typeof duration === "string" && duration.trim() !== "") kept[key] = duration;
    }
    return Object.keys(kept).length > 0 ? kept : undefined;
}

export function flag(property: string, value: unknown, fail: Fail): boolean {
    if (value === undefined || value === null) return false;
    if (isUnknown(value)) return value as unknown as boolean;
    if (typeof value !== "boolean") fail(property, `must be true or false, not ${describeInput(value)}`);
    return value === true;
}
