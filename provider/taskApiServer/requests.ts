// Validation of the datastore request bodies and headers: decoded JSON in, typed request out, or a 400
// naming the field and the problem. Pure.

import { quote } from "../shared/text";
import {
    type CreateDatastoreRequest,
    DATASTORE_NAME_CHARACTER,
    DATASTORE_NAME_PATTERN,
    DATASTORE_TYPES,
    type DatastoreType,
    IDEMPOTENCY_KEY_HEADER,
    MIN_DATASTORE_SIZE_IN_BYTES,
    type ResizeDatastoreRequest,
    UUID_PATTERN,
} from "../tasks/protocol/wire";
import { badRequest } from "./apiError";
import { objectWithFields, requiredInteger, requiredString } from "./validation";

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;

const CREATE_FIELDS = ["name", "hciClusterUuid", "clusterId", "sizeInBytes", "datastoreType"];
const SIZE_RANGE = { min: MIN_DATASTORE_SIZE_IN_BYTES, unit: "bytes (1 GiB)" } as const;

/** The body of a create, checked field by field. */
export function parseCreateDatastore(body: unknown): CreateDatastoreRequest {
    const object = objectWithFields(body, "the body", CREATE_FIELDS);
    for (const field of CREATE_FIELDS) {
        if (object[field] === undefined) {
            throw badRequest(`${field} is required; a datastore needs ${CREATE_FIELDS.join(", ")}.`);
        }
    }
    return {
        name: datastoreName(requiredString(object, "name", "the body")),
        hciClusterUuid: uuid(requiredString(object, "hciClusterUuid", "the body"), "hciClusterUuid"),
        clusterId: uuid(requiredString(object, "clusterId", "the body"), "clusterId"),
        sizeInBytes: requiredInteger(object, "sizeInBytes", "the body", SIZE_RANGE),
        datastoreType: datastoreType(requiredString(object, "datastoreType", "the body")),
    };
}

/** The body of a resize. Whether the new size is a shrink depends on the datastore, so it is checked later. */
export function parseResizeDatastore(body: unknown): ResizeDatastoreRequest {
    const object = objectWithFields(body, "the body", ["sizeInBytes"]);
    return { sizeInBytes: requiredInteger(object, "sizeInBytes", "the body", SIZE_RANGE) };
}

/** The Idempotency-Key header, or undefined when the request has none. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
    if (header === undefined) return undefined;
    const value = Array.isArray(header) ? header.join(", ") : header;
    if (!PRINTABLE_ASCII.test(value)) {
        const problem =
            value.length === 0
                ? "is empty"
                : value.length > 255
                  ? `is ${value.length} characters long`
                  : "contains a character that is not printable ASCII";
        throw badRequest(`${IDEMPOTENCY_KEY_HEADER} ${problem}; it must be 1-255 printable ASCII characters.`);
    }
    return value;
}

function datastoreName(name: string): string {
    if (DATASTORE_NAME_PATTERN.test(name)) return name;
    const problem =
        name.length === 0
            ? "is empty"
            : name.length > 80
              ? `is ${name.length} characters long`
              : `contains ${quote([...name].find((character) => !DATASTORE_NAME_CHARACTER.test(character)) ?? "")}`;
    throw badRequest(`name ${problem}; a name is 1-80 letters, digits, "-", "_" or ".".`);
}

function uuid(value: string, field: string): string {
    if (UUID_PATTERN.test(value)) return value;
    throw badRequest(`${field} ${quote(value)} is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hexadecimal).`);
}

function datastoreType(value: string): DatastoreType {
    const known = DATASTORE_TYPES.find((type) => type === value);
    if (known) return known;
    throw badRequest(`datastoreType ${quote(value)} is not one of ${DATASTORE_TYPES.join(", ")}.`);
}
