// Follows a long-running operation of any dialect to its end: the dialect builds each look and reads
// each answer; this loop sends them at the waits of pollSchedule.ts (the server's word first, within
// bounds; otherwise backoff aimed at the estimated end), reports progress, and stops at the deadline,
// on abort, or when looking keeps failing. Every way of stopping short is an OperationWaitError that
// carries the operation's handle, so the caller can record it and the next `up` follows it on.

import type { Clock, Sleep } from "../../shared/time";
import { OperationWaitError } from "../errors/operationWaitError";
import { TaskApiError } from "../errors/taskApiError";
import type { Dialect, OperationHandle, OperationView } from "../protocol/dialects/dialect";
import { backoffBand, estimateRemaining, nextWait, type PollSchedule, suggestedWaitMs } from "./pollSchedule";
import type { TaskApiClient } from "./taskApiClient";

/** What following needs. */
export interface FollowOptions {
    readonly client: TaskApiClient;
    readonly dialect: Dialect;
    readonly handle: OperationHandle;
    /** What the answer that started it said (a first Retry-After), if anything. */
    readonly first?: OperationView | undefined;
    /** The operation, for messages: "the create of widget w1". */
    readonly what: string;
    /** When the operation was started (clock ms): progress is timed from here. */
    readonly startedAt: number;
    /** The clock time by which the operation must have ended. */
    readonly deadline: number;
    /** The setting that set the deadline, for messages: `customTimeouts.create`, `timeouts.update`. */
    readonly deadlineSetting?: string;
    readonly signal?: AbortSignal | undefined;
    readonly clock: Clock;
    readonly sleep: Sleep;
    readonly random: () => number;
    readonly schedule: PollSchedule;
    /** Called with every view of the operation seen. */
    readonly onProgress?: (view: OperationView) => void;
}

/** How the operation ended, and how many looks it took. */
export interface FollowOutcome {
    /** succeeded, failed or canceled: never pending. */
    readonly view: OperationView;
    readonly polls: number;
}

/**
 * Resolves with the operation's last view once it has ended (succeeded, failed or canceled: the caller
 * decides what each means). Rejects with OperationWaitError when following stops short.
 */
export async function followOperation(options: FollowOptions): Promise<FollowOutcome> {
    const { client, dialect, handle, clock } = options;
    const stop = (why: "interrupted" | "deadline" | "polling", last: OperationView | undefined, cause?: unknown) =>
        new OperationWaitError(why, handle, last, {
            what: options.what,
            timeoutMs: options.deadline - options.startedAt,
            ...(options.deadlineSetting === undefined ? {} : { setting: options.deadlineSetting }),
            ...(cause === undefined ? {} : { cause }),
        });
    let last = options.first;
    let polls = 0;
    let polledEarly = false;
    // Waits are counted apart from looks: a resumed follow (no first view) starts in the first band.
    let waits = 0;
    for (let attempt = 0; ; attempt++) {
        if (attempt > 0 || last !== undefined) {
            const now = clock();
            if (now >= options.deadline) throw stop("deadline", last);
            const wait = nextWait({
                attempt: waits,
                schedule: options.schedule,
                random: options.random,
                // The server's word is a hint, within bounds: 0 must not poll hot, nor an hour never.
                suggestedMs: last?.retryAfterMs === undefined ? undefined : suggestedWaitMs(last.retryAfterMs / 1000),
                estimatedRemainingMs: estimateRemaining(last?.progressPercent, now - options.startedAt),
                mayPollEarly: !polledEarly,
            });
            if (wait < backoffBand(waits, options.schedule).low) polledEarly = true;
            waits++;
            try {
                await options.sleep(Math.max(0, Math.min(wait, options.deadline - now)), options.signal);
            } catch {
                throw stop("interrupted", last);
            }
        }
        if (options.signal?.aborted) throw stop("interrupted", last);
        const call = dialect.poll(handle);
        try {
            const answer = await client.send({
                method: call.method,
                path: call.path,
                ...(call.body === undefined ? {} : { body: call.body }),
                ...(call.headers ? { headers: call.headers } : {}),
                repeatable: true,
                acceptErrors: dialect.pollsReadErrors(handle),
                signal: options.signal,
                deadline: options.deadline,
            });
            polls++;
            last = dialect.polled(handle, { status: answer.status, header: answer.header, body: answer.body }, clock());
        } catch (error) {
            if (options.signal?.aborted) throw stop("interrupted", last);
            // Throttling in the dialect's own words (Cloud Control's ThrottlingException is a 400): the
            // look was refused, nothing else; look again after the next wait, within the deadline.
            if (error instanceof TaskApiError && dialect.meaning(error.status, error.body) === "throttled") continue;
            throw stop("polling", last, error);
        }
        options.onProgress?.(last);
        if (last.state !== "pending") return { view: last, polls };
    }
}
