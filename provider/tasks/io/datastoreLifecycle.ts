// What each operation of the Datastore provider does at the task API: the create (its create-key
// chain, the task followed to its end, identity from what the task made), the read, the resize or
// resumed create of an update, and the delete. Built by the provider for the client its settings name.

import { randomUUID } from "node:crypto";
import { parseDuration } from "../../shared/duration";
import { messageOf } from "../../shared/text";
import type { PollSchedule } from "../client/pollSchedule";
import { type DatastoreOutputs, describeDatastore, formatNaturalKeyId, type NaturalKey } from "../datastoreSchema";
import { CreateTokenSpentError } from "../errors/createTokenSpentError";
import { DatastoreDeleteUnconfirmedError } from "../errors/datastoreDeleteUnconfirmedError";
import { DatastoreMissingError } from "../errors/datastoreMissingError";
import { TaskApiContractError } from "../errors/taskApiContractError";
import type { TaskApiError } from "../errors/taskApiError";
import { TaskFailedError } from "../errors/taskFailedError";
import { TaskInterruptedError } from "../errors/taskInterruptedError";
import { TaskWaitError } from "../errors/taskWaitError";
import { afterFailedPost } from "../logic/createFailure";
import { createKey, MAX_CREATE_GENERATIONS, spentKeyBackoffMs } from "../logic/createKeys";
import {
    createRequestOf,
    inErrorReason,
    isPendingCreate,
    keptOutputs,
    keyOf,
    naturalKeyOf,
    outputsOf,
    partialState,
    type RawInputs,
    refreshed,
    resumedByName,
    resumedInputs,
    single,
    takeOver,
} from "../logic/datastoreState";
import { progressReporter } from "../logic/taskProgress";
import type { TaskProcessContext } from "../processContext";
import { type AsyncOperation, DATASTORE_TYPE, type DatastoreRecord } from "../protocol/wire";
import type { CallOptions, DatastoreApi } from "./datastoreApi";

/** How long create, update and delete may take by default: tasks of the API take minutes. */
const DEFAULT_TIMEOUT_MS = 20 * 60_000;
/** How long a read may take by default: one lookup, retried through throttling and transient failures. */
export const DEFAULT_READ_TIMEOUT_MS = 5 * 60_000;

/** When an operation must be over, and the setting that says so (for messages). */
interface Deadline {
    readonly at: number;
    readonly setting: string;
}

/** The Datastore operations against one task API. */
export class DatastoreLifecycle {
    constructor(
        private readonly api: DatastoreApi,
        private readonly context: TaskProcessContext,
        private readonly schedule: PollSchedule,
    ) {}

    /** Read: the datastore with the natural key as the API has it now; nothing when it is gone. */
    async read(id: string, props?: DatastoreOutputs): Promise<{ id?: string; props?: DatastoreOutputs }> {
        const key = keyOf(id, props);
        const deadline = this.deadline("read", props?.timeouts?.read, DEFAULT_READ_TIMEOUT_MS);
        const found = await this.api.findByNaturalKey(key, this.call(deadline));
        if (found.length === 0) return {};
        const datastore = single(describeDatastore(key), found);
        return { id: formatNaturalKeyId(key), props: refreshed(props, datastore) };
    }

    /** Create: the id (the natural key) and the outputs recorded. */
    async create(inputs: RawInputs): Promise<{ id: string; outs: DatastoreOutputs }> {
        const key = naturalKeyOf(inputs);
        const label = describeDatastore(key);
        const deadline = this.deadline("create", inputs.timeouts?.create);
        const found = await this.findOne(label, key, deadline);
        const outs =
            found && !inputs.createToken
                ? takeOver(inputs, key, label, found)
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
        inputs: RawInputs,
        key: NaturalKey,
        label: string,
        deadline: Deadline,
        found: DatastoreRecord | undefined,
        claimed: boolean,
    ): Promise<DatastoreOutputs> {
        const token = inputs.createToken;
        if (!token) {
            if (found) return claimed ? resumedByName(inputs, key, label, found) : takeOver(inputs, key, label, found);
            const outcome = await this.createOnce(inputs, key, label, deadline, undefined, found);
            if (outcome === "spent") throw new DatastoreMissingError(label, undefined, "create");
            return outcome;
        }
        for (let generation = 0; generation < MAX_CREATE_GENERATIONS; generation++) {
            const outcome = await this.createOnce(inputs, key, label, deadline, createKey(token, generation), found);
            if (outcome !== "spent") return outcome;
            // A server that replays every key as spent must not make this a loop of POSTs past the deadline.
            const left = deadline.at - this.context.clock();
            if (left <= 0) throw new CreateTokenSpentError(label, generation + 1, deadline.setting);
            if (generation === 0)
                this.context.report(`${label}: createToken ${token} was spent earlier; trying its next key`);
            await this.context.sleep(Math.min(spentKeyBackoffMs(generation, this.schedule), left), this.context.signal);
        }
        throw new CreateTokenSpentError(label, MAX_CREATE_GENERATIONS);
    }

    /**
     * One POST and its task: the outputs of the datastore it made, or "spent" when the server replayed a
     * key whose create is over and whose datastore is gone. Every outcome after the POST may have made
     * something, so every failure from here on is partial state.
     */
    private async createOnce(
        inputs: RawInputs,
        key: NaturalKey,
        label: string,
        deadline: Deadline,
        idempotencyKey: string | undefined,
        found: DatastoreRecord | undefined,
    ): Promise<DatastoreOutputs | "spent"> {
        const api = this.api;
        const startedAt = this.context.clock();
        let taskUri: string;
        try {
            taskUri = await api.create(createRequestOf(inputs), idempotencyKey, this.call(deadline));
        } catch (error) {
            const failure = afterFailedPost(error, this.context.signal.aborted, {
                inputs,
                key,
                label,
                idempotencyKey,
                found,
            });
            if (failure.kind === "spent") return "spent";
            if (failure.kind === "fail") throw failure.error;
            const existing = found ?? (await this.existingAfterConflict(label, key, failure.conflict, deadline));
            return takeOver(inputs, key, label, existing);
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
                throw partialState(
                    inputs,
                    key,
                    outputsOf(inputs, undefined, { taskId: error.taskId, tainted: false }),
                    reason,
                );
            }
            const stopped = { taskId: error.taskId, tainted: true, taintReason: error.message };
            throw partialState(inputs, key, outputsOf(inputs, undefined, stopped), error.message);
        }
        const replayed = endedAtFirstLook === true && idempotencyKey !== undefined;
        let made: DatastoreRecord | "gone" | undefined;
        try {
            made = await this.madeBy(operation, label, key, deadline, operation.state === "SUCCEEDED" && !replayed);
        } catch (error) {
            // The task ended; only reading what it made failed. Succeeded, not tainted: the next up looks
            // again. Failed, what it made (if anything) is in ERROR: tainted, so the next up replaces it.
            const reason = `the create task ${operation.id} ended ${operation.state}, but reading its datastore failed: ${messageOf(error)}`;
            const failed = operation.state === "FAILED";
            const extra = { taskId: operation.id, tainted: failed, ...(failed ? { taintReason: reason } : {}) };
            throw partialState(inputs, key, outputsOf(inputs, undefined, extra), reason);
        }
        if (made === "gone") return "spent";
        if (operation.state === "SUCCEEDED") {
            if (made) return outputsOf(inputs, made, { taskId: operation.id, tainted: false });
            if (replayed) return "spent";
            const reason = `task ${operation.id} succeeded but named no datastore, and no ${label} is listed`;
            throw partialState(
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
        throw partialState(inputs, key, outputsOf(inputs, made, failed), reason);
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
        deadline: Deadline,
        lookUpUnnamed: boolean,
    ): Promise<DatastoreRecord | "gone" | undefined> {
        const resource = (operation.associatedResources ?? []).find((r) => r.type === DATASTORE_TYPE);
        if (!resource) return lookUpUnnamed ? await this.findOne(label, key, deadline) : undefined;
        const id = this.api.datastoreIdOf(resource.resourceUri, operation.id);
        return (await this.api.getWithKey(id, key, `task ${operation.id}`, this.call(deadline))) ?? "gone";
    }

    /** The datastore that answered a POST with 409: the one the conflict names, or the one listed. */
    private async existingAfterConflict(
        label: string,
        key: NaturalKey,
        conflict: TaskApiError,
        deadline: Deadline,
    ): Promise<DatastoreRecord> {
        const existingId = (conflict.body as { existingId?: unknown } | undefined)?.existingId;
        const existing =
            existingId !== undefined && existingId !== null
                ? await this.api.getWithKey(existingId, key, "the 409 refusing the create", this.call(deadline))
                : await this.findOne(label, key, deadline);
        if (!existing) {
            throw new TaskApiContractError(
                `${label}: the API refused the create because the name is taken (409), but lists no such datastore; retry once it does`,
            );
        }
        return existing;
    }

    /** Update: resize in place, or resume a create that did not finish; the outputs recorded. */
    async update(olds: DatastoreOutputs, news: RawInputs): Promise<{ outs: DatastoreOutputs }> {
        const api = this.api;
        const key = naturalKeyOf(news);
        const label = describeDatastore(key);
        const deadline = this.deadline("update", news.timeouts?.update);
        let taskId = olds.taskId;
        let current: DatastoreRecord | undefined;
        if (isPendingCreate(olds)) {
            // Let its task end, then find what it made (by the key it was sent with), or create it now.
            const found = await this.lookUpKeeping(olds, news, key, label, async () => {
                if (olds.taskId) {
                    await this.follow(this.api.taskPath(olds.taskId), this.context.clock(), deadline, (error) =>
                        error instanceof TaskFailedError ? undefined : error,
                    );
                }
                return await this.findOne(label, key, deadline);
            });
            const resumed = resumedInputs(olds, news, found !== undefined);
            return { outs: await this.createOrFollow(resumed, key, label, deadline, found, true) };
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
                await this.follow(this.api.taskPath(olds.taskId), this.context.clock(), deadline, (error) =>
                    partialState(news, key, keptOutputs(olds, news), error.message),
                );
                current = (await api.get(current.id, this.call(deadline))) ?? current;
            }
        } else {
            current = await api.get(olds.datastoreId, this.call(deadline));
            if (!current) {
                throw new DatastoreMissingError(label, olds.datastoreId, "update");
            }
        }
        if (current.state === "UPDATING" && olds.taskId) {
            // A resize of ours whose end was not seen (interrupted, timed out): let it finish first.
            await this.follow(this.api.taskPath(olds.taskId), this.context.clock(), deadline, (error) => error);
            current = (await api.get(current.id, this.call(deadline))) ?? current;
        }
        if (current.state === "ERROR") {
            // Tainted, so the next up replaces it.
            const reason = inErrorReason(label, news.untaint);
            const outputs = outputsOf(news, current, { taskId, tainted: true, taintReason: reason });
            throw partialState(news, key, outputs, reason);
        }
        if (news.sizeInBytes !== current.capacityInBytes) {
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
                return partialState(news, key, pending, `resize of unknown outcome: ${error.message}`);
            });
            current = (await api.get(resizing.id, this.call(deadline))) ?? resizing;
        }
        return { outs: outputsOf(news, current, { taskId, tainted: false }) };
    }

    /** Delete: after any task of ours still running on it; gone already is success. */
    async delete(id: string, props: DatastoreOutputs): Promise<void> {
        const api = this.api;
        const key = keyOf(id, props);
        const label = describeDatastore(key);
        const deadline = this.deadline("delete", props.timeouts?.delete);
        let current = props.datastoreId
            ? await api.get(props.datastoreId, this.call(deadline))
            : await this.findOne(label, key, deadline);
        if (!current) return;
        if ((current.state === "CREATING" || current.state === "UPDATING") && props.taskId) {
            // A task of ours may still run on it (an interrupted create or resize): it must end first.
            await this.follow(this.api.taskPath(props.taskId), this.context.clock(), deadline, (error) =>
                error instanceof TaskFailedError ? undefined : error,
            );
            current = await api.get(current.id, this.call(deadline));
            if (!current) return;
        }
        const startedAt = this.context.clock();
        const taskUri = await api.delete(current.id, this.call(deadline));
        if (!taskUri) return;
        const taskId = await this.follow(taskUri, startedAt, deadline, (error) => error);
        // The task's word is not enough: only a datastore the API no longer has is forgotten.
        const left = await api.get(current.id, this.call(deadline));
        if (left) throw new DatastoreDeleteUnconfirmedError(label, left.id, taskId, left.state);
    }

    /**
     * Follows a task to success and resolves with its id. When waiting ends otherwise, `onStop` decides:
     * an error to throw, or undefined to carry on as if the task had ended.
     */
    private async follow(
        taskUri: string,
        startedAt: number,
        deadline: Deadline,
        onStop: (error: TaskWaitError) => Error | undefined,
        observe?: (operation: AsyncOperation) => void,
    ): Promise<string> {
        const report = progressReporter(this.context.report);
        try {
            const { operation } = await this.api.followTask(taskUri, {
                startedAt,
                deadline: deadline.at,
                signal: this.context.signal,
                clock: this.context.clock,
                sleep: this.context.sleep,
                random: this.context.random,
                schedule: this.schedule,
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
        news: RawInputs,
        key: NaturalKey,
        label: string,
        lookUp: () => Promise<T>,
    ): Promise<T> {
        try {
            return await lookUp();
        } catch (error) {
            throw partialState(news, key, keptOutputs(olds, news), `could not look ${label} up: ${messageOf(error)}`);
        }
    }

    /** Follows a task until it ends: resolves with it SUCCEEDED or FAILED; other stops are TaskWaitErrors. */
    private async followToEnd(
        taskUri: string,
        startedAt: number,
        deadline: Deadline,
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

    private async findOne(label: string, key: NaturalKey, deadline: Deadline): Promise<DatastoreRecord | undefined> {
        const found = await this.api.findByNaturalKey(key, this.call(deadline));
        return found.length === 0 ? undefined : single(label, found);
    }

    private call(deadline: Deadline): CallOptions {
        return { signal: this.context.signal, deadline: deadline.at, deadlineSetting: deadline.setting };
    }

    private deadline(operation: string, timeout: string | undefined, byDefault = DEFAULT_TIMEOUT_MS): Deadline {
        const parsed = timeout === undefined ? byDefault : parseDuration(timeout);
        const at = this.context.clock() + (typeof parsed === "number" ? parsed : byDefault);
        return { at, setting: `timeouts.${operation}` };
    }
}
