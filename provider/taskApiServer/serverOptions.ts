// What a task API server takes and what it offers: the options `startTaskApiServer` checks before it
// opens anything, and the interface of a running server. Apart from the HTTP server (taskApiServer.ts),
// so that the contract reads without the machinery.

import type { Clock, Sleep } from "../shared/time";
import type { AsyncOperation, DatastoreRecord } from "../tasks/protocol/wire";
import type { FaultRule, FaultRuleRequest, RequestLogEntry, TaskApiStats } from "./control";

/** How a task API server behaves. Every field is optional. */
export interface TaskApiServerOptions {
    /** TCP port; 0 (the default) picks a free one. */
    readonly port?: number;
    /** Address to listen on; default 127.0.0.1. */
    readonly host?: string;
    /** The bearer token every request must carry; default a random one (see `TaskApiServer.token`). */
    readonly token?: string;
    /** The JSON file holding the data; without one, the data lives in memory and ends with the server. */
    readonly dataFile?: string;
    /** The time tasks advance by; default the wall clock. `advanceClock` moves it forward. */
    readonly clock?: Clock;
    /** How latency and `delayMs` faults wait; default real timers. */
    readonly sleep?: Sleep;
    /** How long a task takes on `clock`; default 2000 ms. */
    readonly taskDurationMs?: number;
    /** When set, tasks end on their n-th poll instead of after `taskDurationMs`. */
    readonly taskCompleteAfterPolls?: number;
    /** Sent in every operation as `suggestedPollingIntervalSeconds`; absent by default. */
    readonly suggestedPollingIntervalSeconds?: number;
    /** Probability in [0, 1] that a task fails (errorCode SIMULATED_FAILURE); default 0. */
    readonly failureRate?: number;
    /** Seeds the random numbers deciding failures, so a run can be repeated; default unseeded. */
    readonly seed?: number;
    /** Milliseconds added before every answer (not to the test control API); default 0. */
    readonly latencyMs?: number;
    /** At most `perSecond` requests a second, in bursts of `burst` (default `perSecond`); over it, 429. */
    readonly rateLimit?: { readonly perSecond: number; readonly burst?: number };
    /**
     * Adds `idempotencyKey` (the key of the POST that created it) to every datastore; default false, as
     * the real API, which tells which datastore a create made only through its task's associatedResources.
     */
    readonly echoIdempotencyKey?: boolean;
    /**
     * Lists show a datastore only this many milliseconds (of `clock`) after it was created, as the
     * eventually consistent lists of real APIs do; GET by id always sees it. Default 0.
     */
    readonly listLagMs?: number;
    /** Answer the test control API under `/_test/`; default false. */
    readonly testApi?: boolean;
    /** Called after each logged request, e.g. to print it. */
    readonly onRequest?: (entry: RequestLogEntry) => void;
    /** Called with errors the server answered 500, which are bugs or a data file that cannot be written. */
    readonly onError?: (error: unknown) => void;
}

/** A running task API server. */
export interface TaskApiServer {
    /** `http://host:port`, without a trailing slash. */
    readonly url: string;
    readonly port: number;
    readonly token: string;
    /** `Bearer <token>`: the value of the Authorization header. */
    readonly authorization: string;
    /** The data file's real path; undefined when the data is kept in memory. */
    readonly dataFile: string | undefined;
    /** The server's clock: the injected clock plus every `advanceClock`. */
    now(): number;
    /** Moves the server's clock forward (tasks advance by it). */
    advanceClock(ms: number): void;
    /** Adds a fault rule, as `POST /_test/faults` does (works without the test API); throws ApiError if invalid. */
    addFault(rule: FaultRuleRequest): FaultRule;
    /** Removes every fault rule; returns how many there were. */
    clearFaults(): number;
    /** The fault rules still in force, oldest first. */
    faults(): readonly FaultRule[];
    /** Every request answered (or dropped) so far, in order of arrival; `/_test/` requests are not logged. */
    requests(): readonly RequestLogEntry[];
    /** Empties the request log. */
    clearRequests(): void;
    /** Counters for assertions. */
    stats(): TaskApiStats;
    /** Every datastore as GET would answer it now, oldest first. */
    datastores(): readonly DatastoreRecord[];
    /** An operation as GET would answer it now, without counting a poll; undefined when unknown. */
    operation(id: string): AsyncOperation | undefined;
    /** Resolves once every change so far is in the data file. */
    flush(): Promise<void>;
    /** Stops listening, closes every connection and resolves once the data file is flushed. */
    close(): Promise<void>;
}

/** The default duration of a task. */
export const DEFAULT_TASK_DURATION_MS = 2000;

/** Throws a RangeError naming the first option out of range, before the server opens anything. */
export function checkOptions(options: TaskApiServerOptions): void {
    const check = (ok: boolean, message: string) => {
        if (!ok) throw new RangeError(`startTaskApiServer: ${message}`);
    };
    const { port, taskDurationMs, taskCompleteAfterPolls, failureRate, latencyMs, rateLimit, token } = options;
    check(port === undefined || (Number.isInteger(port) && port >= 0 && port <= 65535), "port must be 0-65535");
    check(token === undefined || /^[\x21-\x7e]+$/.test(token), "token must be printable ASCII without spaces");
    check(
        taskDurationMs === undefined || (Number.isFinite(taskDurationMs) && taskDurationMs >= 0),
        "taskDurationMs must be >= 0",
    );
    check(
        taskCompleteAfterPolls === undefined ||
            (Number.isInteger(taskCompleteAfterPolls) && taskCompleteAfterPolls >= 1),
        "taskCompleteAfterPolls must be a whole number >= 1",
    );
    check(failureRate === undefined || (failureRate >= 0 && failureRate <= 1), "failureRate must be in [0, 1]");
    check(latencyMs === undefined || (Number.isFinite(latencyMs) && latencyMs >= 0), "latencyMs must be >= 0");
    check(
        rateLimit === undefined || (rateLimit.perSecond > 0 && (rateLimit.burst === undefined || rateLimit.burst >= 1)),
        "rateLimit.perSecond must be > 0 and rateLimit.burst >= 1",
    );
}
