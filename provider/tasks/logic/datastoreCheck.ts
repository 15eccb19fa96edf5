// Pure validation and normalization of Datastore inputs (the provider's `check`). Nothing reaches a
// request unvalidated: ids are UUIDs, names use the API's alphabet, the create token is printable ASCII
// (it becomes a header), sizes are whole bytes the API accepts, and timeouts parse.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { describeCharacter, describeInput, quote } from "../../shared/text";
import { unexpectedInputs } from "../../shared/unexpectedInputs";
import { isUnknown } from "../../shared/unknown";
import { DATASTORE_INPUT_KEYS, DATASTORE_STATE_KEYS, type DatastoreInputs } from "../datastoreSchema";
import {
    DATASTORE_NAME_CHARACTER,
    DATASTORE_NAME_PATTERN,
    DATASTORE_TYPES,
    type DatastoreType,
    MIN_DATASTORE_SIZE_IN_BYTES,
    UUID_PATTERN,
} from "../protocol/wire";
import { createToken, type Fail, flag, recordedCustomTimeouts, timeouts } from "./checkFields";

/** The inputs a program sets (the resource class records `customTimeouts` from its options). */
const USER_INPUTS = DATASTORE_INPUT_KEYS.filter((key) => key !== "customTimeouts");

/** Validates and normalizes raw inputs; `olds` are the previous inputs (for the no-shrink rule). */
export function checkDatastore(
    olds: Partial<DatastoreInputs> | undefined,
    news: Record<string, unknown>,
): { inputs: DatastoreInputs; failures: dynamic.CheckFailure[] } {
    const failures = unexpectedInputs("Datastore", news, USER_INPUTS, [...DATASTORE_STATE_KEYS, "customTimeouts"]);
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
    const recorded = recordedCustomTimeouts(news.customTimeouts);
    if (recorded !== undefined) inputs.customTimeouts = recorded;
    return { inputs, failures };
}

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
        fail(property, `${describeInput(value)} is not a UUID (8-4-4-4-12 hexadecimal digits)`);
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
                ? `must be a string, not ${describeInput(value)}`
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
            `${describeInput(value)} is not a whole number of bytes of at least ${MIN_DATASTORE_SIZE_IN_BYTES} (1 GiB)`,
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
        fail("datastoreType", `${describeInput(value)} is not one of ${DATASTORE_TYPES.join(", ")}`);
        return "VMFS";
    }
    return upper as DatastoreType;
}
