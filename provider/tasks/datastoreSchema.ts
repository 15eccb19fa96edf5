// The resolved shapes of a tasks.Datastore, shared by the program side and the provider side.

import type { ListsEvery } from "../shared/stateShape";
import type { DatastoreState, DatastoreType } from "./protocol/wire";
import type { CustomTimeouts, OperationTimeouts } from "./timeoutsSchema";

/** @deprecated The timeouts of every tasks resource: use {@link OperationTimeouts}. */
export type DatastoreTimeouts = OperationTimeouts;

/** Resolved inputs of a `tasks.Datastore`, as `check` returns them. */
export interface DatastoreInputs {
    /** The HCI cluster (UUID, lowercase). Part of the natural key. */
    hciClusterUuid: string;
    /** The hypervisor cluster (UUID, lowercase). Part of the natural key. */
    clusterId: string;
    /** Unique per cluster. Part of the natural key. */
    name: string;
    sizeInBytes: number;
    datastoreType: DatastoreType;
    /** Idempotency key of the create request: a retried or interrupted create never makes a second datastore. */
    createToken?: string;
    timeouts?: OperationTimeouts;
    /** The resource's customTimeouts option, recorded by the resource class; never a change. */
    customTimeouts?: CustomTimeouts;
    /** Take over an existing datastore with the same natural key (size and type must match). */
    adopt: boolean;
    /** Keep a tainted datastore: the next `up` looks it up instead of replacing it. */
    untaint: boolean;
}

/** Every input field, in the order a refresh records them (the type check keeps the list whole). */
export const DATASTORE_INPUT_KEYS = [
    "hciClusterUuid",
    "clusterId",
    "name",
    "sizeInBytes",
    "datastoreType",
    "createToken",
    "timeouts",
    "customTimeouts",
    "adopt",
    "untaint",
] as const satisfies readonly (keyof DatastoreInputs)[];
const everyDatastoreInput: ListsEvery<DatastoreInputs, (typeof DATASTORE_INPUT_KEYS)[number]> = true;
void everyDatastoreInput;

/** What the state adds to the inputs (which `pulumi import` passes back as inputs). */
export const DATASTORE_STATE_KEYS = [
    "stateVersion",
    "datastoreId",
    "state",
    "taskId",
    "tainted",
    "taintReason",
    "createKey",
    "keyHeldBy",
] as const satisfies readonly (keyof DatastoreOutputs)[];
const everyDatastoreField: ListsEvery<
    DatastoreOutputs,
    (typeof DATASTORE_INPUT_KEYS)[number] | (typeof DATASTORE_STATE_KEYS)[number]
> = true;
void everyDatastoreField;

/** State of a `tasks.Datastore`. */
export interface DatastoreOutputs extends DatastoreInputs {
    /** The shape of this state (shared/stateShape.ts); absent in state written before versions were recorded. */
    stateVersion?: number;
    /** The API's id of the datastore, once known. */
    datastoreId?: string;
    /** The datastore's state at the API when last seen (OK, CREATING, ...). */
    state?: DatastoreState;
    /** The last task Pulumi started for it. */
    taskId?: string;
    /** Set when a create did not finish (task failed, timed out, interrupted): the next `up` replaces it. */
    tainted: boolean;
    /** Why it is tainted. */
    taintReason?: string;
    /**
     * The key a create of unknown outcome was sent with when the program gave no createToken: the next
     * up, or a delete, replays it, so what that create made is found even before a lookup shows it.
     */
    createKey?: string;
    /**
     * The id of the datastore that already had this name when a create of unknown end was sent (someone
     * else's, unless that create's task is seen to succeed): until then no refresh records it as this
     * resource and no delete removes it.
     */
    keyHeldBy?: string;
}

/** Resource type token module and name: `pulumi-nodejs:dynamic/tasks:Datastore`. */
export const DATASTORE_MODULE = "tasks";
export const DATASTORE_TYPE_NAME = "Datastore";
/** The package subpath of the Datastore shim (datastoreShim.ts), which every stack's state names. */
export const DATASTORE_SHIM = "pulumi-lifecycle/provider/datastore";

/** What identifies a datastore before the API gives it an id. */
export interface NaturalKey {
    readonly hciClusterUuid: string;
    readonly clusterId: string;
    readonly name: string;
}

/** The resource id: the natural key, `<hciClusterUuid>/<clusterId>/<name>`, known before the task ends. */
export function formatNaturalKeyId(key: NaturalKey): string {
    return `${key.hciClusterUuid}/${key.clusterId}/${key.name}`;
}

/** Parses a resource id; undefined when it is not a natural key. */
export function parseNaturalKeyId(id: string): NaturalKey | undefined {
    const parts = id.split("/");
    if (parts.length !== 3 || parts.some((part) => part.length === 0)) return undefined;
    const [hciClusterUuid, clusterId, name] = parts as [string, string, string];
    return { hciClusterUuid, clusterId, name };
}

/** How a datastore is named in messages. */
export function describeDatastore(key: NaturalKey): string {
    return `datastore ${JSON.stringify(key.name)} (cluster ${key.clusterId}, HCI cluster ${key.hciClusterUuid})`;
}
