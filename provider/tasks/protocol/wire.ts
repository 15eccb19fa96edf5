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

/** The storage technology of a datastore, as a `tasks.Datastore` names it. */
export type DatastoreType = "VMFS" | "NFS" | "VVOL";

/** Every DatastoreType, for validation and documentation. */
export const DATASTORE_TYPES: readonly DatastoreType[] = ["VMFS", "NFS", "VVOL"];

/**
 * The types a create may ask for: the enum of the POST body in HPE's own client of the API
 * (hpegl-pcbe-terraform-resources, `internal/sdk/virt/virtualization/v1beta1/datastores/
 * datastores_post_request_body_escaped_datastore_type.go`: VMFS, VVOL). A record may be of other types
 * (its GET enum adds NFS and VSAN): datastores made otherwise can be read and adopted.
 */
export const CREATABLE_DATASTORE_TYPES: readonly DatastoreType[] = ["VMFS", "VVOL"];

/**
 * Where a datastore is in its life. CREATING, UPDATING and DELETING last while the task that put it there
 * runs; ERROR is a datastore whose create task failed (it exists, and must be deleted). The real API has
 * more (REFRESHING, RESTORING, MOUNTED, DELETED: the GET enum of HPE's client), which clients must read
 * as states they do not act on.
 */
export type DatastoreState = "CREATING" | "OK" | "UPDATING" | "DELETING" | "ERROR";

/** Another resource a record points to, as the API names them (`clusterInfo`, `datacentersInfo[]`). */
export interface ResourceInfo {
    readonly id: string;
    readonly name: string;
}

/** The hypervisor cluster a datastore is in: the create's `targetHypervisorClusterId`. */
export interface ClusterInfo extends ResourceInfo {
    readonly displayName: string;
    readonly type: typeof HYPERVISOR_CLUSTER_TYPE;
    /** `/virtualization/v1beta1/hypervisor-clusters/<id>`. */
    readonly resourceUri: string;
}

/** The resource type of a hypervisor cluster, in a datastore's `clusterInfo`. */
export const HYPERVISOR_CLUSTER_TYPE = "virtualization/hypervisor-cluster";

/** Where hypervisor clusters are; `<HYPERVISOR_CLUSTERS_PATH>/<id>` is one, as `clusterInfo.resourceUri` names it. */
export const HYPERVISOR_CLUSTERS_PATH = "/virtualization/v1beta1/hypervisor-clusters";

/**
 * A datastore, as GET answers it (alone, or as an item of a list). The shape is the real API's: the
 * fields HPE's own provider reads (hpegl-pcbe-terraform-resources `internal/resources/datastore/
 * resource.go`, doRead: `id`, `hciClusterUuid`, `name`, `clusterInfo {id, name}`, `capacityInBytes`,
 * `datastoreType`, `datacentersInfo [{id, name}]`), with the others of the record it captured from the
 * API (`internal/simulator/fixtures/datastores/create/get.json`) that this server can know. The size a
 * create asked for as `sizeInBytes` comes back as `capacityInBytes`; the real record has many more
 * fields (volumes, hosts, protection), and clients must ignore the fields they do not know.
 */
export interface DatastoreRecord {
    readonly id: string;
    readonly type: typeof DATASTORE_TYPE;
    readonly name: string;
    readonly displayName: string;
    /** The datastore's own path: `<DATASTORES_PATH>/<id>`. */
    readonly resourceUri: string;
    /** The storage system (HCI cluster) it is on: the create's `storageSystemId`. */
    readonly hciClusterUuid: string;
    readonly clusterInfo: ClusterInfo;
    /** The datacenters of its cluster; HPE's provider refuses a record with none. */
    readonly datacentersInfo: readonly ResourceInfo[];
    /** Its size in bytes: the create's (or the last resize's) `sizeInBytes`. */
    readonly capacityInBytes: number;
    /** What this server makes; the real API's records may also say VSAN, which the provider reads as it is. */
    readonly datastoreType: DatastoreType;
    /** What this server answers; the provider reads the real API's other states as they are (see DatastoreState). */
    readonly state: DatastoreState;
    /** Its health: OK, or ERROR once its create failed (WARNING is the API's third value). */
    readonly status: "OK" | "ERROR" | "WARNING";
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

/**
 * The attributes of the volume behind a new datastore, as the POST body of HPE's client has them
 * (`v1beta1_datastores_post_request_body_escaped_volume_info*.go`). HPE's provider leaves them out
 * ("Allow setting ... when FF-29512 is fixed"), and so does tasks.Datastore.
 */
export interface VolumeInfo {
    readonly allFlash?: boolean;
    readonly dataReduction?: boolean;
    readonly deduplication?: boolean;
    readonly encryption?: { readonly cipher?: "AES_256_XTS" | "None" };
    /** Limits of the volume; -1 is no limit. */
    readonly qos?: { readonly iopsLimit?: number; readonly mbpsLimit?: number };
}

/**
 * The body of `POST /virtualization/v1beta1/datastores`, as HPE's provider sends it (doCreate; the
 * request it captured is `internal/simulator/fixtures/datastores/create/post-request.json`): every field
 * but `volumeInfo` is required.
 */
export interface CreateDatastoreRequest {
    /** 1-80 characters: letters, digits, `-`, `_`, `.`. Unique per (storage system, hypervisor cluster). */
    readonly name: string;
    /** A whole number of bytes, at least MIN_DATASTORE_SIZE_IN_BYTES; read back as `capacityInBytes`. */
    readonly sizeInBytes: number;
    /** The HCI cluster's UUID (HPE's provider sends its `hci_cluster_uuid`); read back as `hciClusterUuid`. */
    readonly storageSystemId: string;
    /** The hypervisor cluster's id; read back as `clusterInfo.id`. */
    readonly targetHypervisorClusterId: string;
    /** One of CREATABLE_DATASTORE_TYPES. */
    readonly datastoreType: DatastoreType;
    readonly volumeInfo?: VolumeInfo;
}

/** A field a record lacks, or holds in another type: `field` is its path (`clusterInfo.id`). */
export interface RecordProblem {
    readonly field: string;
    /** What is there: "there is none", "it is a string". */
    readonly found: string;
    /** What the field must be: "a number of bytes". */
    readonly expected: string;
}

/** The fields of a datastore record the provider reads, and what each must be. */
const NEEDED_FIELDS: readonly {
    readonly path: readonly string[];
    readonly expected: string;
    readonly is: (value: unknown) => boolean;
}[] = [
    { path: ["name"], expected: "a string", is: (value) => typeof value === "string" },
    {
        path: ["hciClusterUuid"],
        expected: "a string (the storage system's UUID)",
        is: (value) => typeof value === "string",
    },
    {
        path: ["clusterInfo", "id"],
        expected: "a string (the hypervisor cluster's id)",
        is: (value) => typeof value === "string",
    },
    {
        path: ["capacityInBytes"],
        expected: "a whole number of bytes (the size)",
        is: (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0,
    },
    { path: ["datastoreType"], expected: "a string", is: (value) => typeof value === "string" },
    { path: ["state"], expected: "a string", is: (value) => typeof value === "string" },
];

/**
 * Why `value` cannot be read as a datastore record: the first field the provider reads that it lacks
 * or holds in another type (`id` first: an id must be of the API's shape before it goes into a path).
 * Undefined when it can be read. Fields the provider does not read (`clusterInfo.name`,
 * `datacentersInfo`, whatever else the API adds) are never a problem.
 */
export function datastoreRecordProblem(value: unknown): RecordProblem | undefined {
    if (!isJsonObject(value)) return { field: "", found: `it is ${jsonKind(value)}`, expected: "an object" };
    if (!isApiId(value.id)) {
        return {
            field: "id",
            found: typeof value.id === "string" ? "it is not of the API's shape" : foundOf(value.id),
            expected: "an id of the API (one path segment of letters, digits, '.', '_', '~', '-')",
        };
    }
    for (const { path, expected, is } of NEEDED_FIELDS) {
        let at: unknown = value;
        for (const step of path) at = isJsonObject(at) && Object.hasOwn(at, step) ? at[step] : undefined;
        if (!is(at)) return { field: path.join("."), found: foundOf(at), expected };
    }
    return undefined;
}

function foundOf(value: unknown): string {
    return value === undefined ? "there is none" : `it is ${jsonKind(value)}`;
}

function jsonKind(value: unknown): string {
    if (value === null) return "null";
    if (Array.isArray(value)) return "an array";
    if (typeof value === "number") return Number.isFinite(value) ? `the number ${value}` : "not a finite number";
    return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
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
    /** Where this page starts; the server answers every match in one page, so always 0. */
    readonly offset: number;
    /** How many datastores match in all (HPE's provider reads `total`, and refuses a list without it). */
    readonly total: number;
}

/** Where an async operation is. Clients must treat any other value as an unknown state. */
export type TaskState = "INITIALIZED" | "RUNNING" | "SUCCEEDED" | "FAILED";

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
    /** The operation's own path (`<ASYNC_OPERATIONS_PATH>/<id>`), as the real API gives it. */
    readonly resourceUri?: string;
    /**
     * The datastore a create made, once it SUCCEEDED; null before, and for other operations. HPE's
     * provider reads a create's datastore here, the real API's associatedResources being empty (FF-31311).
     */
    readonly sourceResourceUri?: string | null;
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
