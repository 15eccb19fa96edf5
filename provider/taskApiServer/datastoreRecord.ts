// A datastore's record as the real API shapes it (wire.ts, DatastoreRecord): what a create asked for,
// under the names the API gives it back (`sizeInBytes` -> `capacityInBytes`, `storageSystemId` ->
// `hciClusterUuid`, `targetHypervisorClusterId` -> `clusterInfo.id`), with what the API knows of its
// cluster (`clusterInfo.name`, `datacentersInfo`). This server has no inventory of clusters, so their
// names and datacenter are made up from the cluster's id: the same on every run, and told apart by a
// hash of it.
// Pure.

import { createHash } from "node:crypto";
import {
    type ClusterInfo,
    DATASTORE_TYPE,
    type DatastoreRecord,
    type DatastoreType,
    datastoreUri,
    HYPERVISOR_CLUSTER_TYPE,
    HYPERVISOR_CLUSTERS_PATH,
    type ResourceInfo,
} from "../tasks/protocol/wire";

/** What a new record is made of. */
export interface NewDatastore {
    readonly id: string;
    readonly name: string;
    readonly storageSystemId: string;
    readonly targetHypervisorClusterId: string;
    readonly sizeInBytes: number;
    readonly datastoreType: DatastoreType;
    /** ISO 8601: its createdAt and updatedAt. */
    readonly at: string;
    /** Shown only by a server started with `echoIdempotencyKey`. */
    readonly idempotencyKey?: string;
}

/** A new datastore's record: CREATING, generation 1. */
export function newDatastoreRecord(made: NewDatastore): DatastoreRecord {
    return {
        id: made.id,
        type: DATASTORE_TYPE,
        name: made.name,
        displayName: made.name,
        resourceUri: datastoreUri(made.id),
        hciClusterUuid: made.storageSystemId,
        clusterInfo: clusterInfoOf(made.targetHypervisorClusterId),
        datacentersInfo: [datacenterOf(made.targetHypervisorClusterId)],
        capacityInBytes: made.sizeInBytes,
        datastoreType: made.datastoreType,
        state: "CREATING",
        status: "OK",
        ...(made.idempotencyKey !== undefined ? { idempotencyKey: made.idempotencyKey } : {}),
        createdAt: made.at,
        updatedAt: made.at,
        generation: 1,
    };
}

/** A datastore as version 1 of the data file kept it: the shape this server answered before it followed the API's. */
export interface VersionOneRecord
    extends Omit<
        DatastoreRecord,
        "displayName" | "resourceUri" | "clusterInfo" | "datacentersInfo" | "capacityInBytes" | "status"
    > {
    readonly clusterInfo: { readonly id: string };
    readonly sizeInBytes: number;
}

/** A version 1 record in the API's shape, with its state, times and generation as they were. */
export function upgradedRecord(old: VersionOneRecord): DatastoreRecord {
    const { sizeInBytes, clusterInfo, ...kept } = old;
    const made = newDatastoreRecord({
        id: old.id,
        name: old.name,
        storageSystemId: old.hciClusterUuid,
        targetHypervisorClusterId: clusterInfo.id,
        sizeInBytes,
        datastoreType: old.datastoreType,
        at: old.createdAt,
    });
    return { ...made, ...kept, status: statusOf(old.state) };
}

/** The health the API reports beside a state: ERROR for a datastore in ERROR, else OK. */
export function statusOf(state: DatastoreRecord["state"]): DatastoreRecord["status"] {
    return state === "ERROR" ? "ERROR" : "OK";
}

/** A hypervisor cluster as a datastore's `clusterInfo` names it (the fields of the captured record). */
export function clusterInfoOf(clusterId: string): ClusterInfo {
    const name = `cluster-${shortOf(clusterId)}`;
    return {
        id: clusterId,
        name,
        displayName: name,
        type: HYPERVISOR_CLUSTER_TYPE,
        resourceUri: `${HYPERVISOR_CLUSTERS_PATH}/${encodeURIComponent(clusterId)}`,
    };
}

/** The datacenter a cluster is in: one per cluster, with an id of the API's UUID shape. */
export function datacenterOf(clusterId: string): ResourceInfo {
    const hex = createHash("sha256").update(`datacenter\n${clusterId.toLowerCase()}`).digest("hex");
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    return { id, name: `datacenter-${shortOf(clusterId)}` };
}

/** Eight hexadecimal digits of the id's hash: tells clusters apart in a name, whatever their ids share. */
function shortOf(id: string): string {
    return createHash("sha256").update(`name\n${id.toLowerCase()}`).digest("hex").slice(0, 8);
}
