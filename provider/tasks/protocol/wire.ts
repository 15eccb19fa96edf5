// The JSON the task API server speaks, in one place, so that the client (provider/tasks) and the server
// are compiled against the same shapes. Only types and constants live here: importing this module
// pulls in no server code.

/** The resource type of a datastore, in its JSON and in a task's associated resources. */
export const DATASTORE_TYPE = "virtualization/datastore";

/** The type of an async operation. */
export const TASK_TYPE = "task";

/** Where datastores are listed and created; `<DATASTORES_PATH>/<id>` is one datastore. */
export const DATASTORES_PATH = "/virtualization/v1beta1/datastores";

/** `<ASYNC_OPERATIONS_PATH>/<id>` is one async operation: what a 202's Location names. */
export const ASYNC_OPERATIONS_PATH = "/data-services/v1beta1/async-operations";

/** One gibibyte: the smallest datastore. */
export const GIB = 1024 ** 3;

/** The smallest `sizeInBytes` a datastore may have. */
export const MIN_DATASTORE_SIZE_IN_BYTES = GIB;

/** Request bodies above this many bytes are answered 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The header whose value makes a mutating request safe to retry. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

/**
 * The shape of every id the API issues (datastores, async operations): one path segment of RFC 3986
 * unreserved characters, starting with a letter or digit, at most 128 long. It takes the UUIDs the API
 * issues and refuses whatever could leave the collection or change the request once put into a path:
 * `.`, `..`, `/`, `?`, `#`, `%`, the empty id.
 */
export const API_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$/;

/** Whether `value` is an id the API could have issued (API_ID_PATTERN). */
export function isApiId(value: unknown): value is string {
    return typeof value === "string" && API_ID_PATTERN.test(value);
}

/** The path of one datastore; its id is encoded as one path segment. */
export function datastoreUri(id: string): string {
    return `${DATASTORES_PATH}/${encodeURIComponent(id)}`;
}

/** The path of one async operation (the Location of the 202 that started it); its id is encoded as one path segment. */
export function operationUri(id: string): string {
    return `${ASYNC_OPERATIONS_PATH}/${encodeURIComponent(id)}`;
}

/** A UUID as the API writes them: 8-4-4-4-12 hexadecimal digits, either case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A datastore name: 1-80 letters, digits, `.`, `_`, `-`. */
export const DATASTORE_NAME_PATTERN = /^[A-Za-z0-9._-]{1,80}$/;

/** One character a datastore name may hold. */
export const DATASTORE_NAME_CHARACTER = /[A-Za-z0-9._-]/;

/** The storage technology of a datastore. */
export type DatastoreType = "VMFS" | "NFS" | "VVOL";

/** Every DatastoreType, for validation and documentation. */
export const DATASTORE_TYPES: readonly DatastoreType[] = ["VMFS", "NFS", "VVOL"];

/**
 * Where a datastore is in its life. CREATING, UPDATING and DELETING last while the task that put it there
 * runs; ERROR is a datastore whose create task failed (it exists, and must be deleted).
 */
export type DatastoreState = "CREATING" | "OK" | "UPDATING" | "DELETING" | "ERROR";

/** A datastore, as GET answers it. */
export interface DatastoreRecord {
    readonly id: string;
    readonly type: typeof DATASTORE_TYPE;
    readonly name: string;
    readonly hciClusterUuid: string;
    readonly clusterInfo: { readonly id: string };
    readonly sizeInBytes: number;
    readonly datastoreType: DatastoreType;
    readonly state: DatastoreState;
    /**
     * The Idempotency-Key of the POST that created it, only from a server started with
     * `echoIdempotencyKey` (the real API has no such field): clients must not rely on it.
     */
    readonly idempotencyKey?: string;
    /** ISO 8601. */
    readonly createdAt: string;
    /** ISO 8601. */
    readonly updatedAt: string;
    /** 1 when created, +1 per change (state or size). */
    readonly generation: number;
}

/** The body of `POST /virtualization/v1beta1/datastores`. Every field is required; no other is allowed. */
export interface CreateDatastoreRequest {
    /** 1-80 characters: letters, digits, `-`, `_`, `.`. Unique per (hciClusterUuid, clusterId). */
    readonly name: string;
    readonly hciClusterUuid: string;
    /** Reported back as `clusterInfo.id`. */
    readonly clusterId: string;
    /** A whole number of bytes, at least MIN_DATASTORE_SIZE_IN_BYTES. */
    readonly sizeInBytes: number;
    readonly datastoreType: DatastoreType;
}

/** The body of `PATCH /virtualization/v1beta1/datastores/<id>`: a datastore can only grow. */
export interface ResizeDatastoreRequest {
    readonly sizeInBytes: number;
}

/** The body of every 202: the same path as the Location header. */
export interface TaskAccepted {
    readonly taskUri: string;
}

/** The answer of `GET /virtualization/v1beta1/datastores[?filter=...]`. */
export interface DatastoreList {
    readonly items: readonly DatastoreRecord[];
    readonly count: number;
}

/** Where an async operation is. Clients must treat any other value as an unknown state. */
export type TaskState = "QUEUED" | "RUNNING" | "SUCCEEDED" | "FAILED";

/** Why an operation failed. */
export interface TaskError {
    readonly errorCode: string;
    readonly message: string;
}

/** One line of an operation's log, oldest first. */
export interface TaskLogMessage {
    readonly message: string;
    /** ISO 8601. */
    readonly timestampAt: string;
}

/** A resource an operation acts on. */
export interface AssociatedResource {
    readonly type: typeof DATASTORE_TYPE;
    /** The datastore's path, e.g. `/virtualization/v1beta1/datastores/<id>`. */
    readonly resourceUri: string;
}

/** An async operation (a task), as `GET /data-services/v1beta1/async-operations/<id>` answers it. */
export interface AsyncOperation {
    readonly id: string;
    readonly type: typeof TASK_TYPE;
    /** "Create datastore ds19", "Resize datastore ds19" or "Delete datastore ds19". */
    readonly name: string;
    /** A TaskState, or (under the `taskState` fault) a state the client does not know. */
    readonly state: TaskState | (string & {});
    readonly progressPercent: number;
    /** Present only when the server was given a suggestion. */
    readonly suggestedPollingIntervalSeconds?: number;
    readonly associatedResources: readonly AssociatedResource[];
    /** Set when the state is FAILED. */
    readonly error: TaskError | null;
    readonly logMessages: readonly TaskLogMessage[];
    /** ISO 8601. */
    readonly createdAt: string;
    /** ISO 8601. */
    readonly updatedAt: string;
    /** ISO 8601; present only once the operation has ended (SUCCEEDED or FAILED). */
    readonly endedAt?: string;
}

/** The `error` of an error body, one per HTTP status the server answers with. */
export type ErrorCode =
    | "bad_request" // 400
    | "unauthorized" // 401
    | "not_found" // 404
    | "method_not_allowed" // 405
    | "conflict" // 409
    | "payload_too_large" // 413
    | "unsupported_media_type" // 415
    | "idempotency_key_reused" // 422
    | "rate_limited" // 429
    | "internal_error" // 500
    | "bad_gateway" // 502
    | "service_unavailable" // 503
    | "gateway_timeout"; // 504

/** The body of every error response. */
export interface ErrorBody {
    readonly error: ErrorCode;
    /** A sentence for a human, naming the field or header and the problem. */
    readonly message: string;
}

/** The body of a 409 answering a POST for a datastore that already exists. */
export interface ConflictBody extends ErrorBody {
    readonly error: "conflict";
    /** The id of the datastore with that name; absent when the conflict is about a datastore's state. */
    readonly existingId?: string;
}
