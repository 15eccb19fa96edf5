// The Datastore resource provider: a definition on the async engine (io/asyncLifecycle.ts) in the
// GreenLake dialect (logic/datastoreSpec.ts), keeping the state shape programs and stacks know. Each
// method below states its contract, as the SDK's ResourceProvider does. A create is looked up by
// natural key first, POSTed with the createToken's key chain, its task followed, and what it made read
// back and checked to be this datastore. Every failure after a request that may have made something is
// partial state in the Datastore's shape.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { driftedInputs, keepingVersion, readAnswer, stamped, stateVersionOf } from "../shared/stateShape";
import type { TaskApiClient } from "./client/taskApiClient";
import {
    DATASTORE_INPUT_KEYS,
    type DatastoreInputs,
    type DatastoreOutputs,
    describeDatastore,
    type NaturalKey,
} from "./datastoreSchema";
import { PartialStateError } from "./errors/partialStateError";
import { AsyncApi } from "./io/asyncApi";
import { AsyncLifecycle } from "./io/asyncLifecycle";
import { type SentCreates, sentCreatesIn } from "./io/sentCreates";
import { checkDatastore } from "./logic/datastoreCheck";
import { diffDatastore } from "./logic/datastoreDiff";
import { datastoreSpec, datastoreState, engineInputs, engineState } from "./logic/datastoreSpec";
import { keyOf, naturalKeyOf, type RawInputs } from "./logic/datastoreState";
import { namedFailure } from "./logic/operationErrors";
import type { TaskProcessContext } from "./processContext";
import { settingsFrom, type TaskApiSettings } from "./taskApiSettings";

/** Implements `pulumi-nodejs:dynamic/tasks:Datastore`. */
export class DatastoreProvider implements dynamic.ResourceProvider<DatastoreInputs, DatastoreOutputs> {
    private settings: TaskApiSettings;
    /** The keyed creates this user's processes sent and did not see end (sentCreates.ts). */
    private readonly sent: SentCreates;
    private client: TaskApiClient | undefined;

    /** `connect` builds the task API client once the settings are known (see tasksRuntime.ts). */
    constructor(
        private readonly context: TaskProcessContext,
        private readonly env: NodeJS.ProcessEnv,
        private readonly connect: (settings: TaskApiSettings) => TaskApiClient,
    ) {
        this.settings = settingsFrom(undefined, env);
        this.sent = sentCreatesIn(env, context.report);
    }

    /** Takes the stack's task API settings (URL, token); the client is built again on first use, nothing is sent. */
    async configure(request: dynamic.ConfigureRequest): Promise<void> {
        this.settings = settingsFrom(request, this.env);
        this.client = undefined;
    }

    /** Validates and normalizes the inputs without any I/O; every failure names its field and what to write. */
    async check(olds: DatastoreInputs, news: DatastoreInputs): Promise<dynamic.CheckResult<DatastoreInputs>> {
        const { inputs, failures } = checkDatastore(olds, { ...news });
        return { inputs, failures };
    }

    /** Says what changes without a request: the natural key and type replace, a larger size grows in place, a taint replaces. */
    async diff(id: string, olds: DatastoreOutputs, news: DatastoreInputs): Promise<dynamic.DiffResult> {
        stateVersionOf(olds, describeDatastore(keyOf(id, olds)));
        return diffDatastore(olds, news);
    }

    /** Creates the datastore; if this fails, what may exist is recorded as partial state, never forgotten. */
    create(inputs: DatastoreInputs): Promise<dynamic.CreateResult<DatastoreOutputs>> {
        return this.context.track(
            this.run("create", naturalKeyOf(inputs), async (lifecycle, lastTask) => {
                const { id, outs } = await lifecycle.create(engineInputs(inputs as RawInputs));
                return { id, outs: stamped(datastoreState(outs as unknown as Record<string, unknown>, lastTask())) };
            }),
        );
    }

    /** Reads the datastore with the natural key as the API has it now (and its inputs so); nothing when it is gone. */
    async read(id: string, props?: DatastoreOutputs): Promise<dynamic.ReadResult<DatastoreOutputs>> {
        const key = keyOf(id, props);
        stateVersionOf(props, describeDatastore(key));
        const known = props?.name ? props : ({ ...key, adopt: false, untaint: false } as unknown as DatastoreOutputs);
        return this.run("read", key, async (lifecycle, lastTask) => {
            const read = await lifecycle.read(engineState(known as DatastoreOutputs & Record<string, unknown>));
            if (!read) return {};
            const outputs = datastoreState(read.props as unknown as Record<string, unknown>, lastTask());
            return readAnswer(
                read.id,
                keepingVersion(outputs, props),
                driftedInputs(outputs, props, DATASTORE_INPUT_KEYS),
            );
        });
    }

    /** Resizes, untaints or resumes the datastore; if this fails, the state on record stays true. */
    update(
        _id: string,
        olds: DatastoreOutputs,
        news: DatastoreInputs,
    ): Promise<dynamic.UpdateResult<DatastoreOutputs>> {
        stateVersionOf(olds, describeDatastore(naturalKeyOf(news)));
        return this.context.track(
            this.run("update", naturalKeyOf(news), async (lifecycle, lastTask) => {
                const { outs } = await lifecycle.update(
                    engineState(olds as DatastoreOutputs & Record<string, unknown>),
                    engineInputs(news as RawInputs),
                );
                return { outs: stamped(datastoreState(outs as unknown as Record<string, unknown>, lastTask())) };
            }),
        );
    }

    /** Deletes the datastore; if this fails, it stays in the stack's state. */
    delete(id: string, props: DatastoreOutputs): Promise<void> {
        stateVersionOf(props, describeDatastore(keyOf(id, props)));
        return this.context.track(
            this.run("delete", keyOf(id, props), (lifecycle) =>
                lifecycle.delete(engineState(props as DatastoreOutputs & Record<string, unknown>)),
            ),
        );
    }

    /**
     * Runs an operation on the engine, with the task it last followed at hand; whatever it fails with
     * names its datastore and is a LifecycleError, and partial state is in the Datastore's shape.
     */
    private async run<T>(
        operation: "create" | "read" | "update" | "delete",
        key: NaturalKey,
        work: (lifecycle: AsyncLifecycle, lastTask: () => string | undefined) => Promise<T>,
    ): Promise<T> {
        let lastTask: string | undefined;
        const lifecycle = new AsyncLifecycle(
            () =>
                new AsyncApi(datastoreSpec(key), this.api(), this.context, this.settings.schedule, (handle) => {
                    lastTask = handle.ref;
                }),
            this.context.clock,
            this.context.sleep,
            this.context.signal,
            this.context.report,
            this.settings.schedule,
            this.context.engineCall,
            this.sent,
        );
        try {
            return await work(lifecycle, () => lastTask);
        } catch (error) {
            const failure =
                error instanceof PartialStateError
                    ? new PartialStateError(
                          error.message,
                          error.id,
                          withProvider(
                              stamped(datastoreState(error.properties, lastTask)),
                              error.properties.__provider,
                          ),
                          error.reasons,
                      )
                    : error;
            throw namedFailure(failure, describeDatastore(key), JSON.stringify(key.name), operation);
        }
    }

    private api(): TaskApiClient {
        this.client ??= this.connect(this.settings);
        return this.client;
    }
}

/** Partial state must carry `__provider`, or later operations on the resource cannot run; undefined values cannot be encoded. */
function withProvider(state: DatastoreOutputs, provider: unknown): Record<string, unknown> {
    const properties: Record<string, unknown> = {
        ...state,
        ...(provider === undefined ? {} : { __provider: provider }),
    };
    return Object.fromEntries(Object.entries(properties).filter(([, value]) => value !== undefined));
}
