// Pure validation and normalization of Datastore inputs (the provider's `check`). Nothing reaches a
// request unvalidated: ids are UUIDs, names use the API's alphabet, the create token is printable ASCII
// (it becomes a header), sizes are whole bytes the API accepts, and timeouts parse.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { parseDuration } from "../../shared/duration";
import { describeCharacter, quote } from "../../shared/text";
import { isUnknown } from "../../shared/unknown";
import type { DatastoreInputs, DatastoreTimeouts } from "../datastoreSchema";
import { TIMEOUT_KEYS } from "../datastoreSchema";
import {
    DATASTORE_NAME_CHARACTER,
    DATASTORE_NAME_PATTERN,
    DATASTORE_TYPES,
    type DatastoreType,
    MIN_DATASTORE_SIZE_IN_BYTES,
    UUID_PATTERN,
} from "../protocol/wire";

const TOKEN_CHARACTER = /^[\x21-\x7e]$/;

/** Validates and normalizes raw inputs; `olds` are the previous inputs (for the no-shrink rule). */
export function checkDatastore(
    olds: Partial<DatastoreInputs> | undefined,
    news: Record<string, unknown>,
): { inputs: DatastoreInputs; failures: dynamic.CheckFailure[] } {
    const failures: dynamic.CheckFailure[] = [];
    const fail = (property: string, reason: string) => failures.push({ property, reason });
    const inputs: DatastoreInputs = {
        hciClusterUuid: uuid("hciClusterUuid", news.hciClusterUuid, fail),
        clusterId: uuid("clusterId", news.clusterId, fail),
        name: name(news.name, fail),
        // The no-shrink rule is about this datastore: a replacement (new key or type) is a new one.
        sizeInBytes: size(news.sizeInBytes, sameDatastore(olds, news) ? olds?.sizeInBytes : undefined, fail),
        datastoreType: datastoreType(news.datastoreType, fail),
        adopt: flag("adopt", news.adopt, fail),
        untaint: flag("untaint", news.untaint, fail),
    };
    const token = createToken(news.createToken, fail);
    if (token !== undefined) inputs.createToken = token;
    const limits = timeouts(news.timeouts, fail);
    if (limits !== undefined) inputs.timeouts = limits;
    return { inputs, failures };
}

type Fail = (property: string, reason: string) => void;

/** Whether the new inputs describe the datastore the old ones did (same natural key and type). */
function sameDatastore(olds: Partial<DatastoreInputs> | undefined, news: Record<string, unknown>): boolean {
    if (!olds) return false;
    const same = (a: unknown, b: unknown) =>
        typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();
    return (
        same(olds.hciClusterUuid, news.hciClusterUuid) &&
        same(olds.clusterId, news.clusterId) &&
        olds.name === news.name &&
        same(olds.datastoreType, news.datastoreType)
    );
}

function uuid(property: string, value: unknown, fail: Fail): string {
    if (isUnknown(value)) return value as string;
    if (typeof value !== "string" || !UUID_PATTERN.test(value)) {
        fail(property, `${describe(value)} is not a UUID (8-4-4-4-12 hexadecimal digits)`);
        return typeof value === "string" ? value : "";
    }
    return value.toLowerCase();
}

function name(value: unknown, fail: Fail): string {
    if (isUnknown(value)) return value as string;
    if (typeof value !== "string" || !DATASTORE_NAME_PATTERN.test(value)) {
        const bad = typeof value === "string" ? [...value].find((c) => !DATASTORE_NAME_CHARACTER.test(c)) : undefined;
        const why =
            typeof value !== "string"
                ? `must be a string, not ${describe(value)}`
                : value.length === 0 || value.length > 80
                  ? `${quote(value)} has ${value.length} characters; a name has 1 to 80`
                  : `${quote(value)} contains ${describeCharacter(bad ?? "")}; use letters, digits, ".", "_" and "-"`;
        fail("name", why);
        return typeof value === "string" ? value : "";
    }
    return value;
}

function size(value: unknown, previous: number | undefined, fail: Fail): number {
    if (isUnknown(value)) return value as unknown as number;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < MIN_DATASTORE_SIZE_IN_BYTES) {
        fail(
            "sizeInBytes",
            `${describe(value)} is not a whole number of bytes of at least ${MIN_DATASTORE_SIZE_IN_BYTES} (1 GiB)`,
        );
        return typeof value === "number" ? value : 0;
    }
    if (typeof previous === "number" && !isUnknown(previous) && value < previous) {
        fail(
            "sizeInBytes",
            `${value} is smaller than the current ${previous}: a datastore cannot shrink in place. ` +
                "Keep the size, or replace the datastore (a new name) and move its data.",
        );
    }
    return value;
}

function datastoreType(value: unknown, fail: Fail): DatastoreType {
    if (isUnknown(value)) return value as DatastoreType;
    const upper = typeof value === "string" ? value.toUpperCase() : undefined;
    if (!upper || !(DATASTORE_TYPES as readonly string[]).includes(upper)) {
        fail("datastoreType", `${describe(value)} is not one of ${DATASTORE_TYPES.join(", ")}`);
        return "VMFS";
    }
    return upper as DatastoreType;
}

function createToken(value: unknown, fail: Fail): string | undefined {
    if (value === undefined || value === null || isUnknown(value)) return (value ?? undefined) as string | undefined;
    // 240, not the header's 255: the keys of later creates append "~<n>" (see createKey).
    if (typeof value !== "string" || value.length === 0 || value.length > 240) {
        fail("createToken", `${describe(value)} is not a token of 1 to 240 characters`);
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

function timeouts(value: unknown, fail: Fail): DatastoreTimeouts | undefined {
    if (value === undefined || value === null || isUnknown(value))
        return (value ?? undefined) as DatastoreTimeouts | undefined;
    if (typeof value !== "object" || Array.isArray(value)) {
        fail("timeouts", `must be an object such as { create: "30m" }, not ${describe(value)}`);
        return undefined;
    }
    const result: DatastoreTimeouts = {};
    for (const [key, duration] of Object.entries(value as Record<string, unknown>)) {
        if (!(TIMEOUT_KEYS as readonly string[]).includes(key)) {
            fail(`timeouts.${key}`, `is not an operation with a timeout; use ${TIMEOUT_KEYS.join(", ")}`);
            continue;
        }
        if (duration === undefined || isUnknown(duration)) continue;
        if (typeof duration !== "string") {
            fail(`timeouts.${key}`, `must be a duration string such as "30m", not ${describe(duration)}`);
            continue;
        }
        const parsed = parseDuration(duration);
        if (typeof parsed !== "number") fail(`timeouts.${key}`, parsed.problem);
        else result[key as keyof DatastoreTimeouts] = duration;
    }
    return result;
}

function flag(property: string, value: unknown, fail: Fail): boolean {
    if (value === undefined || value === null) return false;
    if (isUnknown(value)) return value as unknown as boolean;
    if (typeof value !== "boolean") fail(property, `must be true or false, not ${describe(value)}`);
    return value === true;
}

function describe(value: unknown): string {
    if (value === undefined) return "nothing (it is required)";
    if (typeof value === "string") return quote(value);
    if (typeof value === "object") return value === null ? "null" : Array.isArray(value) ? "a list" : "an object";
    return String(value);
}
