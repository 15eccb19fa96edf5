// `tasks.Datastore`: a datastore created, resized and deleted by asynchronous tasks of a
// GreenLake-style API, with its whole lifecycle: tainted and partial state, untaint, Ctrl-C, natural
// keys and create tokens (see datastoreProvider.ts).
//
// Type token: pulumi-nodejs:dynamic/tasks:Datastore. Id: the natural key
// "<hciClusterUuid>/<clusterId>/<name>", known before the create task ends; `datastoreId` is the API's id.

import type * as pulumi from "@pulumi/pulumi";

import { ShimmedResource } from "../shared/shimmedResource";
import { DATASTORE_MODULE, DATASTORE_SHIM, DATASTORE_TYPE_NAME } from "./datastoreSchema";
import type { DatastoreState, DatastoreType } from "./protocol/wire";
import type { OperationTimeoutsArgs } from "./timeoutsSchema";
import { warnIfTokenInClear } from "./tokenWarning";

/** The arguments of a `tasks.Datastore`. */
export interface DatastoreArgs {
    /** The HCI cluster's UUID. Part of the natural key: changing it replaces the datastore. */
    hciClusterUuid: pulumi.Input<string>;
    /** The hypervisor cluster's UUID. Part of the natural key: changing it replaces the datastore. */
    clusterId: pulumi.Input<string>;
    /** Unique per cluster; 1-80 letters, digits, ".", "_", "-". Part of the natural key. */
    name: pulumi.Input<string>;
    /** At least 1 GiB. Grows in place (a resize task); a datastore cannot shrink. */
    sizeInBytes: pulumi.Input<number>;
    /** VMFS, NFS or VVOL. Changing it replaces the datastore (deleting first: the name is taken). */
    datastoreType: pulumi.Input<DatastoreType>;
    /**
     * Sent as the create's Idempotency-Key: a create retried after a lost answer, or resumed after an
     * interrupted `pulumi up`, never makes a second datastore. Use a value that is stable for the
     * resource, such as `new random.RandomUuid(...).result`.
     */
    createToken?: pulumi.Input<string>;
    /**
     * Longest time per operation, as durations ("30m", "1h30m"): 20m each for create, update and delete
     * (they wait for tasks), 5m for read (refresh, `Datastore.get`, import).
     */
    timeouts?: OperationTimeoutsArgs;
    /** Take over an existing datastore with the same natural key (size and type must match, state OK). */
    adopt?: pulumi.Input<boolean>;
    /**
     * Keep a tainted datastore (one whose create did not finish) instead of replacing it: the next `up`
     * looks it up by natural key; found, it is kept; gone, it is created again. Remove it afterwards.
     */
    untaint?: pulumi.Input<boolean>;
}

/** What `Datastore.get` may know besides the id: settings the API does not hold. */
export interface DatastoreLookupState {
    createToken?: pulumi.Input<string>;
    timeouts?: DatastoreArgs["timeouts"];
}

/** A datastore whose create, resize and delete are asynchronous tasks. */
export class Datastore extends ShimmedResource {
    /** The HCI cluster's UUID, lowercase. */
    declare readonly hciClusterUuid: pulumi.Output<string>;
    /** The hypervisor cluster's UUID, lowercase. */
    declare readonly clusterId: pulumi.Output<string>;
    /** The datastore's name, unique per cluster. */
    declare readonly name: pulumi.Output<string>;
    /** Its size in bytes, as last created or resized. */
    declare readonly sizeInBytes: pulumi.Output<number>;
    /** VMFS, NFS or VVOL. */
    declare readonly datastoreType: pulumi.Output<DatastoreType>;
    /** The create's Idempotency-Key, when given (a secret when the program made it one). */
    declare readonly createToken: pulumi.Output<string | undefined>;
    /** The longest waits per operation, as given. */
    declare readonly timeouts: pulumi.Output<
        { create?: string; read?: string; update?: string; delete?: string } | undefined
    >;
    /** Whether an existing datastore with the same natural key may be taken over on create. */
    declare readonly adopt: pulumi.Output<boolean>;
    /** Whether a tainted datastore is kept instead of replaced. */
    declare readonly untaint: pulumi.Output<boolean>;
    /** The API's id of the datastore, once known. */
    declare readonly datastoreId: pulumi.Output<string | undefined>;
    /** The datastore's state at the API when last seen. */
    declare readonly state: pulumi.Output<DatastoreState | undefined>;
    /** The last task Pulumi started for it. */
    declare readonly taskId: pulumi.Output<string | undefined>;
    /** True when its create did not finish: the next `up` replaces it unless `untaint` is set. */
    declare readonly tainted: pulumi.Output<boolean>;
    /** Why it is tainted. */
    declare readonly taintReason: pulumi.Output<string | undefined>;

    /** Declares a datastore. */
    constructor(name: string, args: DatastoreArgs, opts?: pulumi.CustomResourceOptions) {
        warnIfTokenInClear();
        const outputs = {
            datastoreId: undefined,
            state: undefined,
            taskId: undefined,
            tainted: undefined,
            taintReason: undefined,
        };
        super(
            { module: DATASTORE_MODULE, type: DATASTORE_TYPE_NAME, shim: DATASTORE_SHIM, recordsCustomTimeouts: true },
            name,
            { ...args, ...outputs },
            opts,
        );
    }

    /**
     * Looks up an existing datastore by its natural-key id ("<hciClusterUuid>/<clusterId>/<name>")
     * without managing it, in the same shape as `HostEntry.get`. `state` may carry the settings the API
     * does not hold (its createToken, its timeouts), which its outputs then keep. Fails when no datastore
     * has that key.
     */
    static get(
        name: string,
        id: pulumi.Input<pulumi.ID>,
        state?: DatastoreLookupState,
        opts?: pulumi.CustomResourceOptions,
    ): Datastore {
        const props = {
            hciClusterUuid: undefined,
            clusterId: undefined,
            name: undefined,
            sizeInBytes: undefined,
            datastoreType: undefined,
            ...state,
        } as unknown as DatastoreArgs;
        return new Datastore(name, props, { ...opts, id });
    }
}
