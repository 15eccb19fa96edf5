// Validation of the datastore request bodies and headers: decoded JSON in, typed request out, or a 400
// naming the field and the problem. Pure.

import { quote } from "../shared/text";
import {
    CREATABLE_DATASTORE_TYPES,
    type CreateDatastoreRequest,
    DATASTORE_NAME_CHARACTER,
    DATASTORE_NAME_PATTERN,
    type DatastoreType,
    IDEMPOTENCY_KEY_HEADER,
    MIN_DATASTORE_SIZE_IN_BYTES,
    type ResizeDatastoreRequest,
    UUID_PATTERN,
    type VolumeInfo,
} from "../tasks/protocol/wire";
import { badRequest } from "./apiError";
import { describeJson, type JsonObject, objectWithFields, requiredInteger, requiredString } from "./validation";

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;

/**
 * What HPE's provider always sends (doCreate in hpegl-pcbe-terraform-resources
 * `internal/resources/datastore/resource.go`; the request it captured from the API is
 * `internal/simulator/fixtures/datastores/create/post-request.json`, with exactly these five fields).
 */
const REQUIRED_CREATE_FIELDS = ["name", "sizeInBytes", "storageSystemId", "targetHypervisorClusterId", "datastoreType"];
/** The optional fields of the POST body in HPE's client (`v1beta1_datastores_post_request_body.go`). */
const OPTIONAL_CREATE_FIELDS = ["volumeInfo", "protectionPolicyId"];
const SIZE_RANGE = { min: MIN_DATASTORE_SIZE_IN_BYTES, unit: "bytes (1 GiB)" } as const;

/** The body of a create, checked field by field. */
export function parseCreateDatastore(body: unknown): CreateDatastoreRequest {
    const object = objectWithFields(body, "the body", [...REQUIRED_CREATE_FIELDS, ...OPTIONAL_CREATE_FIELDS]);
    for (const field of REQUIRED_CREATE_FIELDS) {
        if (object[field] === undefined) {
            throw badRequest(`${field} is required; a datastore needs ${REQUIRED_CREATE_FIELDS.join(", ")}.`);
        }
    }
    if (object.protectionPolicyId !== undefined) {
        // The real API checks the id against its protection policies; this server has none to match.
        throw badRequest(
            `protectionPolicyId: this server has no protection policies, so ${describeJson(object.protectionPolicyId)} names none; leave it out.`,
        );
    }
    const volumeInfo = object.volumeInfo === undefined ? undefined : parseVolumeInfo(object.volumeInfo);
    return {
        name: datastoreName(requiredString(object, "name", "the body")),
        sizeInBytes: requiredInteger(object, "sizeInBytes", "the body", SIZE_RANGE),
        storageSystemId: uuid(requiredString(object, "storageSystemId", "the body"), "storageSystemId"),
        targetHypervisorClusterId: uuid(
            requiredString(object, "targetHypervisorClusterId", "the body"),
            "targetHypervisorClusterId",
        ),
        datastoreType: datastoreType(requiredString(object, "datastoreType", "the body")),
        ...(volumeInfo ? { volumeInfo } : {}),
    };
}

/** `volumeInfo`, with the fields and types of HPE's client (`..._volume_info.go`, `_encryption.go`, `_qos.go`). */
function parseVolumeInfo(value: unknown): VolumeInfo {
    const what = "volumeInfo";
    const object = objectWithFields(value, what, ["allFlash", "dataReduction", "deduplication", "encryption", "qos"]);
    for (const field of ["allFlash", "dataReduction", "deduplication"]) optionalBoolean(object, field, what);
    if (object.encryption !== undefined) {
        const encryption = objectWithFields(object.encryption, `${what}.encryption`, ["cipher"]);
        const cipher = encryption.cipher;
        if (cipher !== undefined && cipher !== "AES_256_XTS" && cipher !== "None") {
            throw badRequest(`${what}.encryption.cipher must be AES_256_XTS or None, not ${describeJson(cipher)}.`);
        }
    }
    if (object.qos !== undefined) {
        const qos = objectWithFields(object.qos, `${what}.qos`, ["iopsLimit", "mbpsLimit"]);
        for (const field of ["iopsLimit", "mbpsLimit"]) {
            const limit = qos[field];
            if (limit !== undefined && (typeof limit !== "number" || !Number.isFinite(limit) || limit < -1)) {
                throw badRequest(
                    `${what}.qos.${field} must be a number of at least -1 (no limit), not ${describeJson(limit)}.`,
                );
            }
        }
    }
    return object as VolumeInfo;
}

function optionalBoolean(object: JsonObject, field: string, what: string): void {
    const value = object[field];
    if (value !== undefined && typeof value !== "boolean") {
        throw badRequest(`${what}.${field} must be true or false, not ${describeJson(value)}.`);
    }
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
    const known = CREATABLE_DATASTORE_TYPES.find((type) => type === value);
    if (known) return known;
    throw badRequest(
        `datastoreType ${quote(value)} is not one of ${CREATABLE_DATASTORE_TYPES.join(", ")}: the types a create may ask for.`,
    );
}
