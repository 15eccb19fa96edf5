// How a task advances, and how it reads as an async operation. Pure: a task record and a time in, a
// task record or its JSON out. A task is INITIALIZED for the first 10% of its plan, RUNNING until the end,
// then SUCCEEDED or FAILED (its failure is decided when it is created).

import {
    type AsyncOperation,
    DATASTORE_TYPE,
    datastoreUri,
    GIB,
    operationUri,
    TASK_TYPE,
    type TaskLogMessage,
    type TaskState,
} from "../tasks/protocol/wire";
import type { TaskKind, TaskRecord } from "./records";

/** The share of a task spent INITIALIZED. */
export const INITIALIZED_FRACTION = 0.1;
/** The share at which the log says the task is half done. */
export const HALFWAY_FRACTION = 0.5;

/** How far along a task is, in [0, 1]: by elapsed time, or by polls (the n-th of n polls reaches 1). */
export function fractionDone(task: TaskRecord, nowMs: number): number {
    if ("durationMs" in task.plan) {
        const { durationMs } = task.plan;
        return durationMs <= 0 ? 1 : clamp((nowMs - task.createdAtMs) / durationMs, 0, 1);
    }
    const { completeAfterPolls } = task.plan;
    return task.polls >= completeAfterPolls ? 1 : clamp((task.polls - 1) / completeAfterPolls, 0, 1);
}

/**
 * The task with the milestones it has reached by `nowMs` filled in (the same object when none is new).
 * A timed task's milestones carry the moment they were reached, however late it is asked; a polled
 * task's carry the time of the poll that reached them.
 */
export function advanceTask(task: TaskRecord, nowMs: number): TaskRecord {
    if (task.endedAtMs !== undefined) return task;
    const fraction = fractionDone(task, nowMs);
    const at = (threshold: number): number =>
        "durationMs" in task.plan ? task.createdAtMs + Math.round(threshold * task.plan.durationMs) : nowMs;
    const startedAtMs = task.startedAtMs ?? (fraction >= INITIALIZED_FRACTION ? at(INITIALIZED_FRACTION) : undefined);
    const halfwayAtMs = task.halfwayAtMs ?? (fraction >= HALFWAY_FRACTION ? at(HALFWAY_FRACTION) : undefined);
    const endedAtMs = fraction >= 1 ? at(1) : undefined;
    if (startedAtMs === task.startedAtMs && halfwayAtMs === task.halfwayAtMs && endedAtMs === undefined) return task;
    return {
        ...task,
        ...(startedAtMs !== undefined ? { startedAtMs } : {}),
        ...(halfwayAtMs !== undefined ? { halfwayAtMs } : {}),
        ...(endedAtMs !== undefined ? { endedAtMs } : {}),
    };
}

/** The task's state from its milestones. */
export function taskState(task: TaskRecord): TaskState {
    if (task.endedAtMs !== undefined) return task.failure ? "FAILED" : "SUCCEEDED";
    return task.startedAtMs !== undefined ? "RUNNING" : "INITIALIZED";
}

/** "Create datastore ds19". */
export function taskName(kind: TaskKind, datastoreName: string): string {
    const verb = kind === "create" ? "Create" : kind === "resize" ? "Resize" : "Delete";
    return `${verb} datastore ${datastoreName}`;
}

/** The operation JSON of a task already advanced to `nowMs`. */
export function operationJson(
    task: TaskRecord,
    nowMs: number,
    suggestedPollingIntervalSeconds?: number,
): AsyncOperation {
    const state = taskState(task);
    const progressPercent =
        state === "INITIALIZED"
            ? 0
            : state === "RUNNING"
              ? clamp(Math.floor(fractionDone(task, nowMs) * 100), INITIALIZED_FRACTION * 100, 99)
              : 100;
    const log = logOf(task);
    const updatedAtMs = Math.max(task.createdAtMs, ...log.map((entry) => entry.atMs));
    return {
        id: task.id,
        type: TASK_TYPE,
        name: taskName(task.kind, task.datastoreName),
        state,
        progressPercent,
        ...(suggestedPollingIntervalSeconds !== undefined ? { suggestedPollingIntervalSeconds } : {}),
        associatedResources: [{ type: DATASTORE_TYPE, resourceUri: datastoreUri(task.datastoreId) }],
        resourceUri: operationUri(task.id),
        sourceResourceUri: task.kind === "create" && state === "SUCCEEDED" ? datastoreUri(task.datastoreId) : null,
        error: state === "FAILED" && task.failure ? task.failure : null,
        logMessages: log.map(({ message, atMs }): TaskLogMessage => ({ message, timestampAt: iso(atMs) })),
        createdAt: iso(task.createdAtMs),
        updatedAt: iso(updatedAtMs),
        ...(task.endedAtMs !== undefined ? { endedAt: iso(task.endedAtMs) } : {}),
    };
}

function logOf(task: TaskRecord): { message: string; atMs: number }[] {
    const name = task.datastoreName;
    const log = [{ message: `${taskName(task.kind, name)}: queued`, atMs: task.createdAtMs }];
    if (task.startedAtMs !== undefined) log.push({ message: startedMessage(task), atMs: task.startedAtMs });
    if (task.halfwayAtMs !== undefined)
        log.push({ message: `${taskName(task.kind, name)}: 50% done`, atMs: task.halfwayAtMs });
    if (task.endedAtMs !== undefined) {
        const message = task.failure
            ? `${taskName(task.kind, name)} failed: ${task.failure.message}`
            : `Datastore ${name} ${task.kind === "create" ? "created" : task.kind === "resize" ? "resized" : "deleted"}`;
        log.push({ message, atMs: task.endedAtMs });
    }
    return log;
}

function startedMessage(task: TaskRecord): string {
    switch (task.kind) {
        case "create":
            return `Creating datastore ${task.datastoreName}`;
        case "resize":
            return `Resizing datastore ${task.datastoreName} to ${formatSize(task.resizeToBytes ?? 0)}`;
        case "delete":
            return `Deleting datastore ${task.datastoreName}`;
    }
}

/** "32 GiB", or bytes when not a whole number of GiB. */
export function formatSize(bytes: number): string {
    return bytes % GIB === 0 ? `${bytes / GIB} GiB` : `${bytes} bytes`;
}

function iso(ms: number): string {
    return new Date(ms).toISOString();
}

function clamp(value: number, min: number, max: number): number {
    return Math.min(max, Math.max(min, value));
}
