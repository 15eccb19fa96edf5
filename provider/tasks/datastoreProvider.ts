// The Datastore resource provider: glue from each engine operation to DatastoreLifecycle (io/), which
// makes these task API calls:
//
//   check  -> checkDatastore: validate and normalize (no I/O)
//   diff   -> diffDatastore: the natural key and type replace, size grows in place, taint replaces
//   create -> GET by natural key (found, and no createToken: adopt when asked, else DatastoreExistsError);
//             POST (Idempotency-Key from createToken, one key after another while a key proves spent),
//             follow the task, take what it made from its associatedResources and GET that by id: full
//             state. 409: adopt when asked, else DatastoreExistsError saying how. Task failed or
//             deadline passed: partial state, tainted. Outcome unknown (no answer, 5xx) or Ctrl-C:
//             partial state, not tainted, which the next up resumes (replaying the key, or the task).
//   read   -> GET by natural key (within timeouts.read, 5m by default): none -> gone from state;
//             several -> error; one -> refreshed. A listed record that does not match the whole natural
//             key is a contract error, never taken (so neither is it adopted nor deleted).
//   update -> untaint: GET by natural key; found -> full state; none -> created again; error -> stays
//             partial. Size: a PATCH task. A resize of unknown outcome is recorded, and the next up waits.
//   delete -> DELETE task, after any task of ours still running on it; 404 is success. A task that
//             succeeds is confirmed by GET (404); a datastore still there fails the delete, so the engine
//             keeps it in state (DatastoreDeleteUnconfirmedError).

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { type DatastoreInputs, type DatastoreOutputs, describeDatastore, type NaturalKey } from "./datastoreSchema";
import type { DatastoreApi } from "./io/datastoreApi";
import { DatastoreLifecycle } from "./io/datastoreLifecycle";
import { checkDatastore } from "./logic/datastoreCheck";
import { diffDatastore } from "./logic/datastoreDiff";
import { keyOf, type RawInputs } from "./logic/datastoreState";
import { namedFailure } from "./logic/operationErrors";
import type { TaskProcessContext } from "./processContext";
import { settingsFrom, type TaskApiSettings } from "./taskApiSettings";

/** Implements `pulumi-nodejs:dynamic/tasks:Datastore`: glue between the engine and DatastoreLifecycle. */
export class DatastoreProvider implements dynamic.ResourceProvider<DatastoreInputs, DatastoreOutputs> {
    private settings: TaskApiSettings;
    private operations: DatastoreLifecycle | undefined;

    /** `connect` builds the task API client once the settings are known (see runtime.ts). */
    constructor(
        private readonly context: TaskProcessContext,
        private readonly env: NodeJS.ProcessEnv,
        private readonly connect: (settings: TaskApiSettings) => DatastoreApi,
    ) {
        this.settings = settingsFrom(undefined, env);
    }

    async configure(request: dynamic.ConfigureRequest): Promise<void> {
        this.settings = settingsFrom(request, this.env);
        this.operations = undefined;
    }

    async check(olds: DatastoreInputs, news: DatastoreInputs): Promise<dynamic.CheckResult<DatastoreInputs>> {
        const { inputs, failures } = checkDatastore(olds, { ...news });
        return { inputs, failures };
    }

    async diff(_id: string, olds: DatastoreOutputs, news: DatastoreInputs): Promise<dynamic.DiffResult> {
        return diffDatastore(olds, news);
    }

    create(inputs: DatastoreInputs): Promise<dynamic.CreateResult<DatastoreOutputs>> {
        return this.context.track(
            this.named(
                "create",
                () => inputs,
                () => this.lifecycle().create(inputs as RawInputs),
            ),
        );
    }

    read(id: string, props?: DatastoreOutputs): Promise<dynamic.ReadResult<DatastoreOutputs>> {
        return this.named(
            "read",
            () => keyOf(id, props),
            () => this.lifecycle().read(id, props),
        );
    }

    update(
        _id: string,
        olds: DatastoreOutputs,
        news: DatastoreInputs,
    ): Promise<dynamic.UpdateResult<DatastoreOutputs>> {
        return this.context.track(
            this.named(
                "update",
                () => news,
                () => this.lifecycle().update(olds, news as RawInputs),
            ),
        );
    }

    delete(id: string, props: DatastoreOutputs): Promise<void> {
        return this.context.track(
            this.named(
                "delete",
                () => keyOf(id, props),
                () => this.lifecycle().delete(id, props),
            ),
        );
    }

    /** Runs an operation; whatever it fails with names its datastore (when the key can be told) and is a LifecycleError. */
    private async named<T>(
        operation: "create" | "read" | "update" | "delete",
        key: () => NaturalKey,
        work: () => Promise<T>,
    ): Promise<T> {
        try {
            return await work();
        } catch (error) {
            let known: NaturalKey;
            try {
                known = key();
            } catch {
                throw error;
            }
            throw namedFailure(error, describeDatastore(known), known.name, operation);
        }
    }

    private lifecycle(): DatastoreLifecycle {
        this.operations ??= new DatastoreLifecycle(this.connect(this.settings), this.context, this.settings.schedule);
        return this.operations;
    }
}
