// The Datastore resource provider: seed 003 in Pulumi terms.
//
//   check  -> checkDatastore: validate and normalize (no I/O)
//   diff   -> diffDatastore: the natural key and type replace, size grows in place, taint replaces
//   create -> GET by natural key, then POST (Idempotency-Key = createToken), poll the task, GET: full
//             state. Found with our token: resume (the server replays the same task). Found otherwise:
//             fail, saying how to adopt. Task failed, deadline passed, polling failed, or SIGINT:
//             partial state, tainted, so the engine records what exists.
//   read   -> GET by natural key: none -> gone from state; several -> error; one -> refreshed
//   update -> untaint: GET by natural key; found -> full state; none -> created again; error -> stays
//             partial. Size: a PATCH task. A resize of unknown outcome is recorded, and the next up waits.
//   delete -> DELETE task, after any task of ours still running on it; 404 is success

import { randomUUID } from "node:crypto";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { readConfig } from "../shared/config";
import type { Clock, Sleep } from "../shared/time";
import { CrossOriginError } from "./core/crossOriginError";
import { parseDuration } from "./core/duration";
import { MalformedResponseError } from "./core/malformedResponseError";
import { DEFAULT_POLL_SCHEDULE, type PollSchedule } from "./core/pollSchedule";
import { TaskApiClient } from "./core/taskApiClient";
import { TaskApiError } from "./core/taskApiError";
import { TaskApiUnreachableError } from "./core/taskApiUnreachableError";
import { TaskFailedError } from "./core/taskFailedError";
import { TaskInterruptedError } from "./core/taskInterruptedError";
import { TaskWaitError } from "./core/taskWaitError";
import { waitForTask } from "./core/waitForTask";
import { type CallOptions, DatastoreApi } from "./datastoreApi";
import { checkDatastore } from "./datastoreCheck";
import { diffDatastore } from "./datastoreDiff";
import { DatastoreExistsError } from "./datastoreExistsError";
import {
    type DatastoreInputs,
    type DatastoreOutputs,
    describeDatastore,
    formatNaturalKeyId,
    type NaturalKey,
    parseNaturalKeyId,
} from "./datastoreSchema";
import { PartialStateError } from "./partialStateError";
import { TaskApiConfigError } from "./taskApiConfigError";
import { type AsyncOperation, DATASTORE_TYPE, type Datastore, operationUri } from "./wire";

/** What the operations of one provider process share. */
export interface TaskProcessContext {
    readonly clock: Clock;
    readonly sleep: Sleep;
    readonly random: () => number;
    /** Aborted when the process receives SIGINT (a second Ctrl-C): every wait ends at once. */
    readonly signal: AbortSignal;
    /** Shows a progress line to the user. */
    readonly report: (message: string) => void;
    /** Registers an operation, so an interrupted process answers it before exiting. */
    readonly track: <T>(work: Promise<T>) => Promise<T>;
}

/** The config keys and environment variables the provider reads. */
export const TASK_CONFIG = {
    url: ["pulumi-lifecycle:taskApiUrl", "TASK_API_URL"],
    token: ["pulumi-lifecycle:taskApiToken", "TASK_API_TOKEN"],
    pollInitialMs: ["pulumi-lifecycle:taskPollInitialMs", "TASK_POLL_INITIAL_MS"],
    pollMaxMs: ["pulumi-lifecycle:taskPollMaxMs", "TASK_POLL_MAX_MS"],
    requestTimeoutMs: ["pulumi-lifecycle:taskRequestTimeoutMs", "TASK_REQUEST_TIMEOUT_MS"],
} as const;

const DEFAULT_TIMEOUT_MS = 20 * 60_000;
/** How many creates one createToken may stand for (each replacement or re-creation uses one). */
const MAX_CREATE_GENERATIONS = 1000;

interface Settings {
    readonly url: string | undefined;
    readonly token: string | undefined;
    readonly schedule: PollSchedule;
    readonly requestTimeoutMs: number | undefined;
}

type Raw = DatastoreInputs & Record<string, unknown>;

/** Implements `pulumi-nodejs:dynamic/tasks:Datastore`. */
export class DatastoreProvider implements dynamic.ResourceProvider<DatastoreInputs, DatastoreOutputs> {
    private settings: Settings;
    private client: DatastoreApi | undefined;

    constructor(
        private readonly context: TaskProcessContext,
        private readonly env: NodeJS.ProcessEnv,
    ) {
        this.settings = settingsFrom(undefined, env);
    }

    async configure(request: dynamic.ConfigureRequest): Promise<void> {
        this.settings = settingsFrom(request, this.env);
        this.client = undefined;
    }

    async check(olds: DatastoreInputs, news: DatastoreInputs): Promise<dynamic.CheckResult<DatastoreInputs>> {
        const { inputs, failures } = checkDatastore(olds, { ...news });
        return { inputs, failures };
    }

    async diff(_id: string, olds: DatastoreOutputs, news: DatastoreInputs): Promise<dynamic.DiffResult> {
        return diffDatastore(olds, news);
    }

    create(inputs: DatastoreInputs): Promise<dynamic.CreateResult<DatastoreOutputs>> {
        return this.context.track(this.createDatastore(inputs as Raw));
    }

    async read(id: string, props?: DatastoreOutputs): Promise<dynamic.ReadResult<DatastoreOutputs>> {
        const key = keyOf(id, props);
        const found = await this.api().findByNaturalKey(key, { signal: this.context.signal });
        if (found.length === 0) return {};
        const datastore = single(describeDatastore(key), found);
        return { id: formatNaturalKeyId(key), props: refreshed(props, datastore) };
    }

    update(
        _id: string,
        olds: DatastoreOutputs,
        news: DatastoreInputs,
    ): Promise<dynamic.UpdateResult<DatastoreOutputs>> {
        return this.context.track(this.updateDatastore(olds, news as Raw));
    }

    delete(id: string, props: DatastoreOutputs): Promise<void> {
        return this.context.track(this.deleteDatastore(id, props));
    }

    private async createDatastore(inputs: Raw): Promise<dynamic.CreateResult<DatastoreOutputs>> {
        const key = naturalKeyOf(inputs);
        const label = describeDatastore(key);
        const deadline = this.deadline(inputs.timeouts?.create);
        const found = await this.findOne(label, key, deadline);
        const outs =
            found && !inputs.createToken
                ? this.takeOver(inputs, key, label, found)
                : await this.createOrFollow(inputs, key, label, deadline, found, false);
        return { id: formatNaturalKeyId(key), outs };
    }

    /**
     * Creates the datastore, or finds the one an earlier create of this resource made.
     *
     * Which datastore a create made is told by its task alone (`associatedResources`), never by the
     * datastore's fields. With a createToken, the idempotency keys form a chain (token, token~1, ...):
     * a resource may be created several times (replaced after a failed task, created again after it was
     * deleted), one key each. Each key is POSTed in turn: the server replays the operation of a key it
     * has seen. A replayed task whose datastore exists names ours (followed to its end if still running);
     * one whose datastore is gone (404), or that failed without one, spent its key: the next key is
     * tried, after a backoff. A key never seen creates the datastore, or, when the name is taken, gets 409:
     * that datastore was made by none of this resource's creates. So one create makes at most one
     * datastore, whatever the server's lists show.
     *
     * `claimed`: the state says an earlier create of this resource may have made `found` (its outcome
     * was unknown); without a token, the natural key is then the only identity there is.
     */
    private async createOrFollow(
        inputs: Raw,
        key: NaturalKey,
        label: string,
        deadline: number,
        found: Datastore | undefined,
        claimed: boolean,
    ): Promise<DatastoreOutputs> {
        const token = inputs.createToken;
        if (!token) {
            if (found)
                return claimed ? this.claimed(inputs, key, label, found) : this.takeOver(inputs, key, label, found);
            const outcome = await this.createOnce(inputs, key, label, deadline, undefined, found);
            if (outcome === "spent") throw new Error(`${label}: the create task succeeded but its datastore is gone`);
            return outcome;
        }
        for (let generation = 0; generation < MAX_CREATE_GENERATIONS; generation++) {
            const outcome = await this.createOnce(inputs, key, label, deadline, createKey(token, generation), found);
            if (outcome !== "spent") return outcome;
            if (generation === 0)
                this.context.report(`${label}: createToken ${token} was spent earlier; trying its next key`);
            await this.context.sleep(spentKeyBackoffMs(generation, this.settings.schedule), this.context.signal);
        }
        throw new Error(
            `${label}: ${MAX_CREATE_GENERATIONS} creates with this createToken were spent; give the resource a new createToken`,
        );
    }

    /**
     * One POST and its task: the outputs of the datastore it made, or "spent" when the server replayed a
     * key whose create is over and whose datastore is gone. Every outcome after the POST may have made
     * something, so every failure from here on is partial state.
     */
    private async createOnce(
        inputs: Raw,
        key: NaturalKey,
        label: string,
        deadline: number,
        idempotencyKey: string | undefined,
        found: Datastore | undefined,
    ): Promise<DatastoreOutputs | "spent"> {
        const api = this.api();
        const startedAt = this.context.clock();
        let taskUri: string;
        try {
            taskUri = await api.create(createRequestOf(inputs), idempotencyKey, this.call(deadline));
        } catch (error) {
            if (error instanceof TaskApiError && error.status === 409) {
                const existing = found ?? (await this.existingAfterConflict(label, key, error, deadline));
                return this.takeOver(inputs, key, label, existing);
            }
            if (outcomeUnknown(error)) throw this.pendingCreate(inputs, key, error, idempotencyKey);
            throw error;
        }
        let endedAtFirstLook: boolean | undefined;
        let operation: AsyncOperation;
        try {
            operation = await this.followToEnd(taskUri, startedAt, deadline, (seen) => {
                endedAtFirstLook ??= seen.state === "SUCCEEDED" || seen.state === "FAILED";
            });
        } catch (error) {
            if (!(error instanceof TaskWaitError)) throw error;
            if (error instanceof TaskInterruptedError) {
                // Ctrl-C: the task runs on at the API. Not tainted: the next up follows it to its end.
                const reason = `${error.message}; the next \`pulumi up\` follows the task to its end`;
                throw this.partial(
                    inputs,
                    key,
                    outputsOf(inputs, undefined, { taskId: error.taskId, tainted: false }),
                    reason,
                );
            }
            const stopped = { taskId: error.taskId, tainted: true, taintReason: error.message };
            throw this.partial(inputs, key, outputsOf(inputs, undefined, stopped), error.message);
        }
        const replayed = endedAtFirstLook === true && idempotencyKey !== undefined;
        let made: Datastore | "gone" | undefined;
        try {
            made = await this.madeBy(operation, label, key, deadline, operation.state === "SUCCEEDED" && !replayed);
        } catch (error) {
            // The task ended; only reading what it made failed. Not tainted: the next up looks again.
            const reason = `the create task ${operation.id} ended ${operation.state}, but reading its datastore failed: ${messageOf(error)}`;
            throw this.partial(
                inputs,
                key,
                outputsOf(inputs, undefined, { taskId: operation.id, tainted: false }),
                reason,
            );
        }
        if (made === "gone") return "spent";
        if (operation.state === "SUCCEEDED") {
            if (made) return outputsOf(inputs, made, { taskId: operation.id, tainted: false });
            if (replayed) return "spent";
            const reason = `task ${operation.id} succeeded but named no datastore, and no ${label} is listed`;
            throw this.partial(
                inputs,
                key,
                outputsOf(inputs, undefined, { taskId: operation.id, tainted: true, taintReason: reason }),
                reason,
            );
        }
        // FAILED: a replayed failure that left nothing spent its key; otherwise record what failed.
        if (!made && replayed) return "spent";
        const reason = new TaskFailedError(taskUri, operation).message;
        const failed = { taskId: operation.id, tainted: true, taintReason: reason };
        throw this.partial(inputs, key, outputsOf(inputs, made, failed), reason);
    }

    /**
     * The datastore a task made, from its associatedResources: the datastore, "gone" when it no longer
     * exists (404), or undefined when the task names none. A server that names none is asked by natural
     * key instead, when `lookUpUnnamed` (a fresh create that succeeded: the one listed is ours).
     */
    private async madeBy(
        operation: AsyncOperation,
        label: string,
        key: NaturalKey,
        deadline: number,
        lookUpUnnamed: boolean,
    ): Promise<Datastore | "gone" | undefined> {
        const resource = (operation.associatedResources ?? []).find((r) => r.type === DATASTORE_TYPE);
        if (!resource) return lookUpUnnamed ? await this.findOne(label, key, deadline) : undefined;
        const datastoreIdOf = resource.resourceUri.slice(resource.resourceUri.lastIndexOf("/") + 1);
        const datastore = await this.api().get(datastoreIdOf, this.call(deadline));
        if (!datastore) return "gone";
        if (datastore.name !== key.name) {
            throw new Error(
                `task ${operation.id} names datastore ${datastore.id} (${datastore.name}), not ${label}; the API answered for another request`,
            );
        }
        return datastore;
    }

    /** The datastore that answered a POST with 409: the one the conflict names, or the one listed. */
    private async existingAfterConflict(
        label: string,
        key: NaturalKey,
        conflict: TaskApiError,
        deadline: number,
    ): Promise<Datastore> {
        const existingId = (conflict.body as { existingId?: unknown } | undefined)?.existingId;
        const existing =
            typeof existingId === "string"
                ? await this.api().get(existingId, this.call(deadline))
                : await this.findOne(label, key, deadline);
        if (!existing) {
            throw new Error(
                `${label}: the API refused the create because the name is taken (409), but lists no such datastore; retry once it does`,
            );
        }
        return existing;
    }

    /** A datastore with this natural key exists, not made by this resource: adopt it, or refuse like row 4. */
    private takeOver(inputs: Raw, key: NaturalKey, label: string, found: Datastore): DatastoreOutputs {
        if (!inputs.adopt) throw new DatastoreExistsError(label, found, !!inputs.createToken);
        // A datastore in ERROR never becomes OK: take it over tainted, so the next up replaces it.
        if (found.state === "ERROR")
            throw this.takenInError(inputs, key, `adopted in state ERROR (id ${found.id})`, found);
        return adopted(label, inputs, found);
    }

    /** A create without a token whose outcome was unknown, resumed: the datastore with its name is the one. */
    private claimed(inputs: Raw, key: NaturalKey, label: string, found: Datastore): DatastoreOutputs {
        if (found.state === "ERROR")
            throw this.takenInError(inputs, key, `${label} (id ${found.id}) is in state ERROR`, found);
        return outputsOf(inputs, found, { tainted: false });
    }

    /** A datastore in ERROR taken as this resource's: partial state, tainted, so the next up replaces it. */
    private takenInError(inputs: Raw, key: NaturalKey, what: string, found: Datastore): PartialStateError {
        const reason = `${what}; the next \`pulumi up\` replaces it`;
        return this.partial(inputs, key, outputsOf(inputs, found, { tainted: true, taintReason: reason }), reason);
    }

    /**
     * A POST whose outcome is unknown (no answer, a 5xx, an answer without a task, SIGINT while it was in
     * flight): the datastore may exist. Recorded as partial state without a datastore id, which the next
     * `up` resolves (by replaying the token, or by the natural key).
     */
    private pendingCreate(
        inputs: Raw,
        key: NaturalKey,
        error: unknown,
        idempotencyKey: string | undefined,
    ): PartialStateError {
        const how = idempotencyKey ? "replaying its createToken" : "its name";
        const reason =
            `the create request's outcome is unknown (${messageOf(error)}). The datastore may exist: the next ` +
            `\`pulumi up\` finds it by ${how} and records it, or creates it`;
        return this.partial(inputs, key, outputsOf(inputs, undefined, { tainted: false }), reason);
    }

    private async updateDatastore(olds: DatastoreOutputs, news: Raw): Promise<dynamic.UpdateResult<DatastoreOutputs>> {
        const api = this.api();
        const key = naturalKeyOf(news);
        const label = describeDatastore(key);
        const deadline = this.deadline(news.timeouts?.update);
        let taskId = olds.taskId;
        let current: Datastore | undefined;
        if (!olds.datastoreId && !olds.tainted) {
            // A create that was interrupted, or whose outcome was unknown: let its task end, then find
            // what it made, or create it now.
            const found = await this.lookUpKeeping(olds, news, key, label, async () => {
                if (olds.taskId) {
                    await this.follow(operationUri(olds.taskId), this.context.clock(), deadline, (error) =>
                        error instanceof TaskFailedError ? undefined : error,
                    );
                }
                return await this.findOne(label, key, deadline);
            });
            return { outs: await this.createOrFollow(news, key, label, deadline, found, true) };
        }
        if ((olds.tainted && news.untaint) || !olds.datastoreId) {
            // Untaint, or a create that stopped short: look the datastore up by its natural key.
            const found = await this.lookUpKeeping(olds, news, key, label, () =>
                api.findByNaturalKey(key, this.call(deadline)),
            );
            if (found.length === 0) {
                this.context.report(`${label}: not found at the API; creating it again`);
                return { outs: await this.createOrFollow(news, key, label, deadline, undefined, false) };
            }
            current = single(label, found);
            if (current.state === "CREATING" && olds.taskId) {
                await this.follow(operationUri(olds.taskId), this.context.clock(), deadline, (error) =>
                    this.partial(news, key, keptOutputs(olds, news), error.message),
                );
                current = (await api.get(current.id, this.call(deadline))) ?? current;
            }
            if (current.state === "ERROR") {
                const reason = `${label} is in state ERROR at the API; remove untaint so the next up replaces it`;
                throw this.partial(
                    news,
                    key,
                    outputsOf(news, current, { taskId, tainted: true, taintReason: reason }),
                    reason,
                );
            }
        } else {
            current = await api.get(olds.datastoreId, this.call(deadline));
            if (!current) {
                throw new Error(
                    `${label} (id ${olds.datastoreId}) no longer exists at the API (deleted outside Pulumi). ` +
                        'Run "pulumi refresh" so the stack forgets it; the next "pulumi up" creates it again.',
                );
            }
        }
        if (current.state === "UPDATING" && olds.taskId) {
            // A resize of ours whose end was not seen (interrupted, timed out): let it finish first.
            await this.follow(operationUri(olds.taskId), this.context.clock(), deadline, (error) => error);
            current = (await api.get(current.id, this.call(deadline))) ?? current;
        }
        if (news.sizeInBytes !== current.sizeInBytes) {
            const resizing = current;
            const startedAt = this.context.clock();
            const taskUri = await api.resize(resizing.id, news.sizeInBytes, randomUUID(), this.call(deadline));
            taskId = await this.follow(taskUri, startedAt, deadline, (error) => {
                // FAILED: the API rolled the resize back, so the state on record is still true.
                if (error instanceof TaskFailedError) return error;
                const pending = outputsOf(
                    news,
                    { ...resizing, state: "UPDATING" },
                    { taskId: error.taskId, tainted: false },
                );
                return this.partial(news, key, pending, `resize of unknown outcome: ${error.message}`);
            });
            current = (await api.get(resizing.id, this.call(deadline))) ?? resizing;
        }
        return { outs: outputsOf(news, current, { taskId, tainted: false }) };
    }

    private async deleteDatastore(id: string, props: DatastoreOutputs): Promise<void> {
        const api = this.api();
        const key = keyOf(id, props);
        const label = describeDatastore(key);
        const deadline = this.deadline(props.timeouts?.delete);
        let current = props.datastoreId
            ? await api.get(props.datastoreId, this.call(deadline))
            : await this.findOne(label, key, deadline);
        if (!current) return;
        if ((current.state === "CREATING" || current.state === "UPDATING") && props.taskId) {
            // A task of ours may still run on it (an interrupted create or resize): it must end first.
            await this.follow(operationUri(props.taskId), this.context.clock(), deadline, (error) =>
                error instanceof TaskFailedError ? undefined : error,
            );
            current = await api.get(current.id, this.call(deadline));
            if (!current) return;
        }
        const startedAt = this.context.clock();
        const taskUri = await api.delete(current.id, this.call(deadline));
        if (!taskUri) return;
        await this.follow(taskUri, startedAt, deadline, (error) => error);
    }

    /**
     * Follows a task to success and resolves with its id. When waiting ends otherwise, `onStop` decides:
     * an error to throw, or undefined to carry on as if the task had ended.
     */
    private async follow(
        taskUri: string,
        startedAt: number,
        deadline: number,
        onStop: (error: TaskWaitError) => Error | undefined,
        observe?: (operation: AsyncOperation) => void,
    ): Promise<string> {
        const report = this.progress();
        try {
            const { operation } = await waitForTask({
                client: this.api().client,
                taskUri,
                startedAt,
                deadline,
                signal: this.context.signal,
                clock: this.context.clock,
                sleep: this.context.sleep,
                random: this.context.random,
                schedule: this.settings.schedule,
                onProgress: (operation) => {
                    observe?.(operation);
                    report(operation);
                },
            });
            return operation.id;
        } catch (error) {
            if (!(error instanceof TaskWaitError)) throw error;
            const failure = onStop(error);
            if (failure) throw failure;
            return error.taskId;
        }
    }

    /** Looks the datastore up for an update; when that fails, the state on record stays, as partial state. */
    private async lookUpKeeping<T>(
        olds: DatastoreOutputs,
        news: Raw,
        key: NaturalKey,
        label: string,
        lookUp: () => Promise<T>,
    ): Promise<T> {
        try {
            return await lookUp();
        } catch (error) {
            throw this.partial(news, key, keptOutputs(olds, news), `could not look ${label} up: ${messageOf(error)}`);
        }
    }

    /** Follows a task until it ends: resolves with it SUCCEEDED or FAILED; other stops are TaskWaitErrors. */
    private async followToEnd(
        taskUri: string,
        startedAt: number,
        deadline: number,
        observe: (operation: AsyncOperation) => void,
    ): Promise<AsyncOperation> {
        let ended: AsyncOperation | undefined;
        await this.follow(
            taskUri,
            startedAt,
            deadline,
            (error) => {
                if (!(error instanceof TaskFailedError) || !error.lastSeen) return error;
                ended = error.lastSeen;
                return undefined;
            },
            (operation) => {
                observe(operation);
                ended = operation;
            },
        );
        return ended as AsyncOperation;
    }

    private async findOne(label: string, key: NaturalKey, deadline: number): Promise<Datastore | undefined> {
        const found = await this.api().findByNaturalKey(key, this.call(deadline));
        return found.length === 0 ? undefined : single(label, found);
    }

    /** Reports each new state of a task: "Create datastore ds19: RUNNING 40% (Creating datastore ds19)". */
    private progress(): (operation: AsyncOperation) => void {
        let last = "";
        return (operation) => {
            const latest = operation.logMessages?.at(-1)?.message;
            const line = `${operation.name}: ${operation.state} ${operation.progressPercent}%${latest ? ` (${latest})` : ""}`;
            if (line !== last) this.context.report(line);
            last = line;
        };
    }

    /**
     * Partial state for the engine: the raw inputs (with `__provider`) and what is known. Undefined values
     * are left out: the SDK server cannot encode them, and would never answer the engine.
     */
    private partial(inputs: Raw, key: NaturalKey, outputs: DatastoreOutputs, reason: string): PartialStateError {
        const message = `${describeDatastore(key)}: ${reason}`;
        const properties = Object.fromEntries(
            Object.entries({ ...inputs, ...outputs }).filter(([, value]) => value !== undefined),
        );
        return new PartialStateError(message, formatNaturalKeyId(key), properties, [message]);
    }

    private api(): DatastoreApi {
        if (!this.client) {
            const { url, token, schedule, requestTimeoutMs } = this.settings;
            if (!url) throw new TaskApiConfigError("url");
            if (!token) throw new TaskApiConfigError("token");
            this.client = new DatastoreApi(
                new TaskApiClient({
                    baseUrl: url,
                    token,
                    clock: this.context.clock,
                    sleep: this.context.sleep,
                    random: this.context.random,
                    schedule,
                    ...(requestTimeoutMs ? { requestTimeoutMs } : {}),
                }),
            );
        }
        return this.client;
    }

    private call(deadline: number): CallOptions {
        return { signal: this.context.signal, deadline };
    }

    private deadline(timeout: string | undefined): number {
        const parsed = timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDuration(timeout);
        return this.context.clock() + (typeof parsed === "number" ? parsed : DEFAULT_TIMEOUT_MS);
    }
}

function settingsFrom(request: dynamic.ConfigureRequest | undefined, env: NodeJS.ProcessEnv): Settings {
    const value = ([configKey, envKey]: readonly [string, string]) =>
        (request ? readConfig(request, configKey) : undefined) || env[envKey] || undefined;
    const number = (keys: readonly [string, string]) => {
        const parsed = Number(value(keys));
        return Number.isFinite(parsed) && parsed > 0 ? parsed : undefined;
    };
    const url = value(TASK_CONFIG.url);
    if (url !== undefined) validateUrl(url);
    return {
        url,
        token: value(TASK_CONFIG.token),
        schedule: {
            initialMs: number(TASK_CONFIG.pollInitialMs) ?? DEFAULT_POLL_SCHEDULE.initialMs,
            maxMs: number(TASK_CONFIG.pollMaxMs) ?? DEFAULT_POLL_SCHEDULE.maxMs,
        },
        requestTimeoutMs: number(TASK_CONFIG.requestTimeoutMs),
    };
}

function validateUrl(url: string): void {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        throw new Error(
            `pulumi-lifecycle:taskApiUrl ${JSON.stringify(url)} is not a URL; write it as http://host:port`,
        );
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
        throw new Error(`pulumi-lifecycle:taskApiUrl must be an http:// or https:// URL, not ${parsed.protocol}`);
    }
    if (parsed.username || parsed.password) {
        throw new Error(
            "pulumi-lifecycle:taskApiUrl must not carry credentials; set pulumi-lifecycle:taskApiToken instead",
        );
    }
}

/** The wait before trying the key after a spent one: the poll schedule's backoff, doubling. */
function spentKeyBackoffMs(spentBefore: number, schedule: PollSchedule): number {
    return Math.min(schedule.initialMs * 2 ** spentBefore, schedule.maxMs);
}

/** The idempotency key of the `generation`-th create of a resource with this token: token, token~1, ... */
export function createKey(token: string, generation: number): string {
    return generation === 0 ? token : `${token}~${generation}`;
}

function naturalKeyOf(values: NaturalKey): NaturalKey {
    return { hciClusterUuid: values.hciClusterUuid, clusterId: values.clusterId, name: values.name };
}

/** The key of a known datastore: from its state when there is one (read, delete), else from its id (import). */
function keyOf(id: string, props: DatastoreOutputs | undefined): NaturalKey {
    const key = props?.name ? naturalKeyOf(props) : parseNaturalKeyId(id);
    if (!key)
        throw new Error(`${JSON.stringify(id)} is not a Datastore id: ids are "<hciClusterUuid>/<clusterId>/<name>"`);
    return key;
}

function createRequestOf(inputs: DatastoreInputs) {
    return {
        name: inputs.name,
        hciClusterUuid: inputs.hciClusterUuid,
        clusterId: inputs.clusterId,
        sizeInBytes: inputs.sizeInBytes,
        datastoreType: inputs.datastoreType,
    };
}

/** State from inputs and what the API says (the API wins for what it knows). */
function outputsOf(
    inputs: DatastoreInputs,
    found: Datastore | undefined,
    extra: { taskId?: string | undefined; tainted: boolean; taintReason?: string },
): DatastoreOutputs {
    const outputs: DatastoreOutputs = {
        hciClusterUuid: inputs.hciClusterUuid,
        clusterId: inputs.clusterId,
        name: inputs.name,
        sizeInBytes: found?.sizeInBytes ?? inputs.sizeInBytes,
        datastoreType: found?.datastoreType ?? inputs.datastoreType,
        adopt: inputs.adopt,
        untaint: inputs.untaint,
        tainted: extra.tainted,
    };
    if (inputs.createToken !== undefined) outputs.createToken = inputs.createToken;
    if (inputs.timeouts !== undefined) outputs.timeouts = inputs.timeouts;
    if (found) {
        outputs.datastoreId = found.id;
        outputs.state = found.state;
    }
    if (extra.taskId !== undefined) outputs.taskId = extra.taskId;
    if (extra.taintReason !== undefined) outputs.taintReason = extra.taintReason;
    return outputs;
}

/** The outputs a failed update leaves on record: the old state, with the new inputs' settings. */
function keptOutputs(olds: DatastoreOutputs, news: DatastoreInputs): DatastoreOutputs {
    const { __provider: _, ...rest } = olds as DatastoreOutputs & { __provider?: unknown };
    return { ...rest, createToken: news.createToken ?? rest.createToken, untaint: news.untaint } as DatastoreOutputs;
}

/** Refresh: the API's view of the datastore, with the settings and taint only the state knows. */
function refreshed(props: Partial<DatastoreOutputs> | undefined, found: Datastore): DatastoreOutputs {
    const outputs: DatastoreOutputs = {
        hciClusterUuid: found.hciClusterUuid,
        clusterId: found.clusterInfo.id,
        name: found.name,
        sizeInBytes: found.sizeInBytes,
        datastoreType: found.datastoreType,
        adopt: props?.adopt ?? false,
        untaint: props?.untaint ?? false,
        tainted: props?.tainted ?? false,
        datastoreId: found.id,
        state: found.state,
    };
    for (const key of ["createToken", "timeouts", "taskId", "taintReason"] as const) {
        if (props?.[key] !== undefined) (outputs as unknown as Record<string, unknown>)[key] = props[key];
    }
    return outputs;
}

/** `adopt: true`: take over an existing datastore that matches the program, or name each difference. */
function adopted(label: string, inputs: DatastoreInputs, found: Datastore): DatastoreOutputs {
    const differences: string[] = [];
    if (found.sizeInBytes !== inputs.sizeInBytes) {
        differences.push(`sizeInBytes: the API has ${found.sizeInBytes}, the program has ${inputs.sizeInBytes}`);
    }
    if (found.datastoreType !== inputs.datastoreType) {
        differences.push(`datastoreType: the API has ${found.datastoreType}, the program has ${inputs.datastoreType}`);
    }
    if (found.state !== "OK") differences.push(`state: it is ${found.state}; adopt it once it is OK`);
    if (differences.length > 0) {
        throw new Error(
            `cannot adopt ${label} (id ${found.id}): ${differences.join("; ")}. Change the program to match, or choose another name.`,
        );
    }
    return outputsOf(inputs, found, { tainted: false });
}

function single(label: string, found: readonly Datastore[]): Datastore {
    if (found.length > 1) {
        throw new Error(
            `${label} matches ${found.length} datastores (ids ${found.map((d) => d.id).join(", ")}); the natural key must name one`,
        );
    }
    return found[0] as Datastore;
}

/**
 * Whether a failed request may still have been carried out by the server: no answer, a 5xx or 408, an
 * accepted answer that cannot be read (no Location, not JSON), or an abort while it was in flight.
 */
function outcomeUnknown(error: unknown): boolean {
    if (error instanceof TaskApiUnreachableError || error instanceof MalformedResponseError) return true;
    if (error instanceof TaskApiError) return error.status >= 500 || error.status === 408;
    return !(error instanceof TaskApiConfigError || error instanceof CrossOriginError);
}

function messageOf(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}
