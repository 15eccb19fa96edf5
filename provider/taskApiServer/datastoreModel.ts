// What the API does to datastores and tasks, on the data in memory: no sockets and no files. Time and
// randomness come in through the constructor, so tests drive task progression with an injected clock.
// Every change is reported through `onChange`, which the server uses to persist before answering.
//
// One task at a time per datastore: creates, resizes and deletes refuse a datastore whose task is still
// running, so a task's effect never races another's.

import { createHash, randomUUID } from "node:crypto";
import type { Filter } from "../tasks/protocol/filter";
import {
    type AsyncOperation,
    type CreateDatastoreRequest,
    type DatastoreRecord,
    datastoreUri,
    operationUri,
    type ResizeDatastoreRequest,
    type TaskError,
} from "../tasks/protocol/wire";
import { ApiError, badRequest } from "./apiError";
import type { TaskShape } from "./control";
import { newDatastoreRecord, statusOf } from "./datastoreRecord";
import { matchesFilter, sameUuid } from "./filterParser";
import type { IdempotencyRecord, TaskApiData, TaskKind, TaskPlan, TaskRecord } from "./records";
import { advanceTask, formatSize, operationJson, taskName } from "./taskProgress";
import { canonicalJson } from "./validation";

/** How tasks behave when a request does not shape them. */
export interface TaskDefaults {
    readonly plan: TaskPlan;
    /** Probability in [0, 1] that a task fails. */
    readonly failureRate: number;
    /** Present in every operation when set. */
    readonly suggestedPollingIntervalSeconds?: number;
}

/** A mutating request's identity for idempotency: its Idempotency-Key and what it asked. */
export interface Idempotency {
    readonly key: string;
    readonly method: string;
    readonly path: string;
    readonly body: unknown;
}

/** What a mutating request was answered: the Location of its task. */
export interface Accepted {
    readonly location: string;
    /** True when an Idempotency-Key matched an earlier request and nothing was done. */
    readonly replayed: boolean;
}

/** The datastores and tasks of one server. */
export class DatastoreModel {
    /** Timed tasks not yet ended: the only ones that advance without being asked. */
    private readonly running = new Set<string>();

    constructor(
        private readonly data: TaskApiData,
        private readonly settings: {
            readonly now: () => number;
            readonly random: () => number;
            readonly defaults: TaskDefaults;
            readonly onChange: () => void;
            /** Shows the creating Idempotency-Key in the datastore, which the real API does not. */
            readonly echoIdempotencyKey?: boolean;
        },
    ) {
        for (const task of data.tasks.values()) {
            if (task.endedAtMs === undefined && "durationMs" in task.plan) this.running.add(task.id);
        }
    }

    /** Brings every timed task up to the clock, applying the effects of those that ended, in order. */
    advance(): void {
        const now = this.settings.now();
        const advanced = [...this.running]
            .map((id) => this.data.tasks.get(id))
            .filter((task): task is TaskRecord => task !== undefined)
            .map((task) => ({ before: task, after: advanceTask(task, now) }))
            .filter(({ before, after }) => before !== after)
            .sort((a, b) => (a.after.endedAtMs ?? now) - (b.after.endedAtMs ?? now));
        for (const { after } of advanced) this.saveTask(after);
    }

    /**
     * Datastores satisfying `filter` (all without one), oldest first: the map keeps creation order (an
     * update replaces a value in place, and the data file stores them in that order), which timestamps
     * alone cannot give when several share a millisecond.
     */
    list(filter: Filter | undefined): DatastoreRecord[] {
        return [...this.data.datastores.values()].filter(
            (datastore) => filter === undefined || matchesFilter(filter, datastore),
        );
    }

    /** One datastore, or undefined when there is none with that id (ids compare case-insensitively). */
    get(id: string): DatastoreRecord | undefined {
        return this.data.datastores.get(id.toLowerCase());
    }

    /** How many datastores exist, in any state. */
    get count(): number {
        return this.data.datastores.size;
    }

    /** A GET of an operation: counts the poll (for tasks that complete after polls) and answers the JSON. */
    poll(id: string): AsyncOperation {
        const task = this.data.tasks.get(id.toLowerCase());
        if (!task) throw notFound(`there is no async operation with id ${JSON.stringify(id)}`);
        let current = task;
        if (task.endedAtMs === undefined && "completeAfterPolls" in task.plan) {
            current = advanceTask({ ...task, polls: task.polls + 1 }, this.settings.now());
            this.saveTask(current);
        }
        return operationJson(current, this.settings.now(), this.settings.defaults.suggestedPollingIntervalSeconds);
    }

    /** An operation's JSON without counting a poll, for the server's own inspection. */
    peek(id: string): AsyncOperation | undefined {
        const task = this.data.tasks.get(id.toLowerCase());
        return task && operationJson(task, this.settings.now(), this.settings.defaults.suggestedPollingIntervalSeconds);
    }

    /** Creates a datastore (state CREATING) and the task that brings it to OK, or ERROR if it fails. */
    create(request: CreateDatastoreRequest, idempotency: Idempotency | undefined, shape?: TaskShape): Accepted {
        return this.idempotently(idempotency, () => {
            const existing = this.list(undefined).find(
                (datastore) =>
                    datastore.name === request.name &&
                    sameUuid(datastore.hciClusterUuid, request.storageSystemId) &&
                    sameUuid(datastore.clusterInfo.id, request.targetHypervisorClusterId),
            );
            if (existing) {
                throw new ApiError(
                    409,
                    "conflict",
                    `a datastore named ${request.name} already exists in hypervisor cluster ` +
                        `${request.targetHypervisorClusterId} of storage system ${request.storageSystemId} ` +
                        `(id ${existing.id}, state ${existing.state}).`,
                    { body: { existingId: existing.id } },
                );
            }
            const datastore = newDatastoreRecord({
                id: randomUUID(),
                name: request.name,
                storageSystemId: request.storageSystemId,
                targetHypervisorClusterId: request.targetHypervisorClusterId,
                sizeInBytes: request.sizeInBytes,
                datastoreType: request.datastoreType,
                at: this.iso(),
                ...(idempotency && this.settings.echoIdempotencyKey ? { idempotencyKey: idempotency.key } : {}),
            });
            this.data.datastores.set(datastore.id, datastore);
            this.data.counters.datastoresCreated++;
            return this.startTask("create", datastore, shape);
        });
    }

    /** Starts growing a datastore (state UPDATING); its size changes when the task succeeds. */
    resize(
        id: string,
        request: ResizeDatastoreRequest,
        idempotency: Idempotency | undefined,
        shape?: TaskShape,
    ): Accepted {
        return this.idempotently(idempotency, () => {
            const datastore = this.existing(id);
            if (datastore.state !== "OK") throw this.busy(datastore, "resized");
            if (request.sizeInBytes < datastore.capacityInBytes) {
                throw badRequest(
                    `sizeInBytes ${request.sizeInBytes} (${formatSize(request.sizeInBytes)}) is smaller than the ` +
                        `datastore's ${datastore.capacityInBytes} (${formatSize(datastore.capacityInBytes)}); a datastore ` +
                        "cannot shrink: create a smaller one and move the data.",
                );
            }
            this.update(datastore, { state: "UPDATING" });
            return this.startTask("resize", datastore, shape, { resizeToBytes: request.sizeInBytes });
        });
    }

    /**
     * Starts deleting a datastore (state DELETING); it is removed when the task succeeds. A datastore
     * already being deleted answers its delete task again, so a retried DELETE is harmless.
     */
    delete(id: string, idempotency: Idempotency | undefined, shape?: TaskShape): Accepted {
        return this.idempotently(idempotency, () => {
            const datastore = this.existing(id);
            if (datastore.state === "DELETING") {
                const running = [...this.data.tasks.values()].find(
                    (task) =>
                        task.datastoreId === datastore.id && task.kind === "delete" && task.endedAtMs === undefined,
                );
                if (running) return { location: operationUri(running.id), replayed: false };
            }
            if (datastore.state === "CREATING" || datastore.state === "UPDATING") throw this.busy(datastore, "deleted");
            this.update(datastore, { state: "DELETING" });
            return this.startTask("delete", datastore, shape, { stateBefore: datastore.state });
        });
    }

    /** Runs `action` unless the Idempotency-Key was used before: then answers as then, or 422. */
    private idempotently(idempotency: Idempotency | undefined, action: () => Accepted): Accepted {
        if (!idempotency) return action();
        const fingerprint = createHash("sha256")
            .update(canonicalJson([idempotency.method.toUpperCase(), idempotency.path, idempotency.body ?? null]))
            .digest("hex");
        const previous = this.data.idempotencyKeys.get(idempotency.key);
        if (previous) {
            if (previous.fingerprint === fingerprint) return { location: previous.location, replayed: true };
            throw new ApiError(
                422,
                "idempotency_key_reused",
                `Idempotency-Key ${JSON.stringify(idempotency.key)} was used for a different request ` +
                    `(${previous.location} was its answer); use a new key for a new request.`,
            );
        }
        const accepted = action();
        const record: IdempotencyRecord = {
            key: idempotency.key,
            fingerprint,
            location: accepted.location,
            createdAtMs: this.settings.now(),
        };
        this.data.idempotencyKeys.set(idempotency.key, record);
        this.settings.onChange();
        return accepted;
    }

    private startTask(
        kind: TaskKind,
        datastore: DatastoreRecord,
        shape: TaskShape | undefined,
        extra: Pick<TaskRecord, "resizeToBytes" | "stateBefore"> = {},
    ): Accepted {
        const plan: TaskPlan =
            shape?.durationMs !== undefined
                ? { durationMs: shape.durationMs }
                : shape?.completeAfterPolls !== undefined
                  ? { completeAfterPolls: shape.completeAfterPolls }
                  : this.settings.defaults.plan;
        const failure = this.failureFor(kind, datastore.name, shape);
        const task: TaskRecord = {
            id: randomUUID(),
            kind,
            datastoreId: datastore.id,
            datastoreName: datastore.name,
            createdAtMs: this.settings.now(),
            plan,
            ...(failure ? { failure } : {}),
            ...extra,
            polls: 0,
        };
        this.data.counters.tasksCreated++;
        if ("durationMs" in plan) this.running.add(task.id);
        // A zero-length task ends at once, in the same change as its creation.
        this.saveTask(advanceTask(task, task.createdAtMs));
        return { location: operationUri(task.id), replayed: false };
    }

    private failureFor(kind: TaskKind, name: string, shape: TaskShape | undefined): TaskError | undefined {
        if (shape?.fails !== undefined) return { errorCode: "INJECTED_FAILURE", message: shape.fails };
        const rate = this.settings.defaults.failureRate;
        if (rate > 0 && this.settings.random() < rate) {
            return {
                errorCode: "SIMULATED_FAILURE",
                message: `${taskName(kind, name)} failed: simulated failure (the server fails ${Math.round(rate * 100)}% of tasks).`,
            };
        }
        return undefined;
    }

    /** Stores a task; when it has just ended, applies its effect on the datastore. */
    private saveTask(task: TaskRecord): void {
        const before = this.data.tasks.get(task.id);
        this.data.tasks.set(task.id, task);
        this.settings.onChange();
        if (task.endedAtMs === undefined || before?.endedAtMs !== undefined) return;
        this.running.delete(task.id);
        const datastore = this.data.datastores.get(task.datastoreId);
        if (!datastore) return;
        const at = new Date(task.endedAtMs).toISOString();
        switch (task.kind) {
            case "create":
                this.update(datastore, { state: task.failure ? "ERROR" : "OK" }, at);
                break;
            case "resize":
                this.update(
                    datastore,
                    task.failure
                        ? { state: "OK" }
                        : { state: "OK", capacityInBytes: task.resizeToBytes ?? datastore.capacityInBytes },
                    at,
                );
                break;
            case "delete":
                if (task.failure) this.update(datastore, { state: task.stateBefore ?? "OK" }, at);
                else this.data.datastores.delete(datastore.id);
                break;
        }
    }

    private update(
        datastore: DatastoreRecord,
        change: Partial<Pick<DatastoreRecord, "state" | "capacityInBytes">>,
        at = this.iso(),
    ): void {
        this.data.datastores.set(datastore.id, {
            ...datastore,
            ...change,
            status: statusOf(change.state ?? datastore.state),
            updatedAt: at,
            generation: datastore.generation + 1,
        });
        this.settings.onChange();
    }

    private existing(id: string): DatastoreRecord {
        const datastore = this.get(id);
        if (!datastore) throw notFound(`there is no datastore with id ${JSON.stringify(id)}`);
        return datastore;
    }

    private busy(datastore: DatastoreRecord, what: string): ApiError {
        const task = [...this.data.tasks.values()].find(
            (candidate) => candidate.datastoreId === datastore.id && candidate.endedAtMs === undefined,
        );
        const wait = task ? `; wait for ${operationUri(task.id)} to end` : "";
        return new ApiError(
            409,
            "conflict",
            `datastore ${datastore.name} (${datastoreUri(datastore.id)}) is ${datastore.state} and cannot be ${what} now${wait}.`,
        );
    }

    private iso(): string {
        return new Date(this.settings.now()).toISOString();
    }
}

function notFound(message: string): ApiError {
    return new ApiError(404, "not_found", `${message}.`);
}
