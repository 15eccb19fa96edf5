// What the server keeps about tasks and idempotency keys, in memory and in the data file. Datastores are
// kept as their wire JSON (wire.ts), which is all there is to know about them. Times are epoch
// milliseconds of the server's clock.

import type { DatastoreRecord, DatastoreState, TaskError } from "../tasks/protocol/wire";

/** What a task does to its datastore when it succeeds. */
export type TaskKind = "create" | "resize" | "delete";

/** When a task ends: a span of the server's clock after its creation, or on the n-th poll of it. */
export type TaskPlan = { readonly durationMs: number } | { readonly completeAfterPolls: number };

/** A task, with the milestones it has reached so far. */
export interface TaskRecord {
    readonly id: string;
    readonly kind: TaskKind;
    readonly datastoreId: string;
    /** For the task's name and log: the datastore may be gone when the task is read. */
    readonly datastoreName: string;
    readonly createdAtMs: number;
    readonly plan: TaskPlan;
    /** Decided when the task is created, so a restart or a replay cannot change the outcome. */
    readonly failure?: TaskError;
    /** A resize's new size. */
    readonly resizeToBytes?: number;
    /** A delete's datastore state before it, restored when the delete fails. */
    readonly stateBefore?: DatastoreState;
    /** GETs of the operation so far; counted only for tasks that complete after polls. */
    readonly polls: number;
    readonly startedAtMs?: number;
    readonly halfwayAtMs?: number;
    readonly endedAtMs?: number;
}

/** A mutating request made with an Idempotency-Key, and what it was answered. */
export interface IdempotencyRecord {
    readonly key: string;
    /** Hash of the method, path and canonical JSON body: a retry must match it. */
    readonly fingerprint: string;
    /** The Location of the 202. */
    readonly location: string;
    readonly createdAtMs: number;
}

/** Counters that only ever grow. */
export interface TaskApiCounters {
    datastoresCreated: number;
    tasksCreated: number;
}

/** Everything the server knows; the data file holds exactly this. */
export interface TaskApiData {
    readonly datastores: Map<string, DatastoreRecord>;
    readonly tasks: Map<string, TaskRecord>;
    readonly idempotencyKeys: Map<string, IdempotencyRecord>;
    readonly counters: TaskApiCounters;
}

/** A server that has never run. */
export function emptyData(): TaskApiData {
    return {
        datastores: new Map(),
        tasks: new Map(),
        idempotencyKeys: new Map(),
        counters: { datastoresCreated: 0, tasksCreated: 0 },
    };
}
