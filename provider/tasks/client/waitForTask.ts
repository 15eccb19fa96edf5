// Follows an asynchronous task to its end: polls the operation at the waits of pollSchedule.ts (the
// server's suggested interval when it gives one; otherwise backoff aimed at the task's estimated end),
// reports progress, and stops at the deadline, on abort, or when looking at the task keeps failing.
// Every way of stopping short is a TaskWaitError, so callers can keep what the task may have created.

import type { Clock, Sleep } from "../../shared/time";
import { MalformedResponseError } from "../errors/malformedResponseError";
import { TaskDeadlineError } from "../errors/taskDeadlineError";
import { TaskFailedError } from "../errors/taskFailedError";
import { TaskInterruptedError } from "../errors/taskInterruptedError";
import { TaskPollingError } from "../errors/taskPollingError";
import { describeValue } from "../protocol/answers";
import { type AsyncOperation, isApiId } from "../protocol/wire";
import { backoffBand, estimateRemaining, nextWait, type PollSchedule, suggestedWaitMs } from "./pollSchedule";
import type { TaskApiClient } from "./taskApiClient";

const KNOWN_STATES = new Set(["QUEUED", "RUNNING", "SUCCEEDED", "FAILED"]);

/** What waiting needs. */
export interface WaitForTaskOptions {
    readonly client: TaskApiClient;
    /** The task's URI (the Location of the 202). */
    readonly taskUri: string;
    /** When the task was started (clock ms): progress is timed from here. */
    readonly startedAt: number;
    /** The clock time by which the task must have ended. */
    readonly deadline: number;
    readonly signal?: AbortSignal | undefined;
    readonly clock: Clock;
    readonly sleep: Sleep;
    readonly random: () => number;
    readonly schedule: PollSchedule;
    /** Called with every state of the task seen. */
    readonly onProgress?: (operation: AsyncOperation) => void;
}

/** What waiting saw, besides the end: how many times it looked. */
export interface TaskOutcome {
    readonly operation: AsyncOperation;
    readonly polls: number;
}

/**
 * Resolves with the task once it has SUCCEEDED. Rejects with TaskFailedError (FAILED),
 * TaskDeadlineError (the deadline passed), TaskInterruptedError (the signal was aborted) or
 * TaskPollingError (a poll failed after the client's own retries, or the answer was not a task).
 */
export async function waitForTask(options: WaitForTaskOptions): Promise<TaskOutcome> {
    const { client, taskUri, clock } = options;
    let last: AsyncOperation | undefined;
    let polls = 0;
    let polledEarly = false;
    for (let attempt = 0; ; attempt++) {
        if (options.signal?.aborted) throw new TaskInterruptedError(taskUri, last);
        try {
            const response = await client.send<AsyncOperation>({
                method: "GET",
                path: taskUri,
                signal: options.signal,
                deadline: options.deadline,
            });
            polls++;
            last = validOperation(response.body, taskUri);
        } catch (error) {
            if (options.signal?.aborted) throw new TaskInterruptedError(taskUri, last);
            throw new TaskPollingError(taskUri, last, error);
        }
        options.onProgress?.(last);
        if (last.state === "SUCCEEDED") return { operation: last, polls };
        if (last.state === "FAILED") throw new TaskFailedError(taskUri, last);

        const now = clock();
        if (now >= options.deadline) throw new TaskDeadlineError(taskUri, last, options.deadline - options.startedAt);
        const wait = nextWait({
            attempt,
            schedule: options.schedule,
            random: options.random,
            // Only a positive number, within bounds: 0.0001 s must not poll hot, nor 1e9 s never.
            suggestedMs: suggestedWaitMs(last.suggestedPollingIntervalSeconds),
            estimatedRemainingMs:
                last.state === "RUNNING" ? estimateRemaining(last.progressPercent, now - options.startedAt) : undefined,
            mayPollEarly: !polledEarly,
        });
        // One poll per task may come early, at a predicted end; after it, waits keep to the backoff band.
        if (wait < backoffBand(attempt, options.schedule).low) polledEarly = true;
        try {
            // Never sleep past the deadline: one last look at it, then give up.
            await options.sleep(Math.max(0, Math.min(wait, options.deadline - now)), options.signal);
        } catch {
            throw new TaskInterruptedError(taskUri, last);
        }
    }
}

function validOperation(body: unknown, taskUri: string): AsyncOperation {
    const operation = body as Partial<AsyncOperation> | undefined;
    if (!operation || typeof operation !== "object" || typeof operation.state !== "string") {
        throw new MalformedResponseError("GET", taskUri, "the answer is not a task (no id or state)");
    }
    // Its id goes into the stack's state and, later, into a path: it must be the one asked for.
    const asked = taskUri.slice(taskUri.lastIndexOf("/") + 1);
    if (!isApiId(operation.id) || operation.id !== asked) {
        throw new MalformedResponseError(
            "GET",
            taskUri,
            `the answer is not the task asked for: its id is ${describeValue(operation.id)}, not ${describeValue(asked)}`,
        );
    }
    const resources = operation.associatedResources;
    if (
        resources !== undefined &&
        (!Array.isArray(resources) || !resources.every((r) => typeof r === "object" && r !== null))
    ) {
        throw new MalformedResponseError("GET", taskUri, "the task's associatedResources is not a list of resources");
    }
    if (!KNOWN_STATES.has(operation.state)) {
        throw new MalformedResponseError(
            "GET",
            taskUri,
            `the task is in an unknown state ${JSON.stringify(operation.state)}`,
        );
    }
    return operation as AsyncOperation;
}
