// The task API server's test control API (`/_test/...`), answered only when the server enables it: the
// shapes its tests and fault injection speak. Apart from the client's wire types (provider/tasks/wire.ts),
// so that nothing the provider loads carries them.

/** The prefix of the test control API. */
export const TEST_API_PATH = "/_test";

/**
 * The shape of the task a mutating request creates: fails with a message, and/or ends after a duration
 * or a number of polls instead of the server's default. `durationMs` and `completeAfterPolls` exclude
 * each other.
 */
export interface TaskShape {
    /** The task ends FAILED with this message (errorCode INJECTED_FAILURE). */
    readonly fails?: string;
    /** The task ends this many milliseconds (of the server's clock) after it was created. */
    readonly durationMs?: number;
    /** The n-th GET of the operation sees it ended. */
    readonly completeAfterPolls?: number;
}

/** The statuses the `status` fault may answer with. */
export type FaultStatus = 429 | 500 | 502 | 503 | 504;

/**
 * What happens to a request a fault rule matches.
 * - `status`: answer this error at once, doing nothing (429 always carries Retry-After, default 1 s).
 * - `drop`: destroy the connection without answering, doing nothing.
 * - `loseResponse`: do the work, then destroy the connection without answering.
 * - `delayMs`: do the work, then answer this many milliseconds late.
 * - `invalidJson`: do the work, answer its status with a body that is not JSON.
 * - `omitLocation`: do the work, answer 202 without the Location header (the body still has taskUri).
 * - `taskState`: a GET of an operation reports this state instead of the real one.
 * - `task`: a POST, PATCH or DELETE creates a task of this shape.
 */
export type Fault =
    | { readonly status: FaultStatus; readonly retryAfterSeconds?: number }
    | { readonly drop: true }
    | { readonly loseResponse: true }
    | { readonly delayMs: number }
    | { readonly invalidJson: true }
    | { readonly omitLocation: true }
    | { readonly taskState: string }
    | { readonly task: TaskShape };

/** Which requests a fault rule applies to; an absent field matches anything. */
export interface FaultMatch {
    /** Compared case-insensitively. */
    readonly method?: string;
    /** A prefix of the request's path (the query is not part of it). */
    readonly path?: string;
}

/** The body of `POST /_test/faults`. */
export interface FaultRuleRequest {
    readonly match?: FaultMatch;
    /** How many requests the rule applies to before it is used up; default 1. */
    readonly times?: number;
    /**
     * The chance, in (0, 1], that a matching request gets the fault (default 1): with `times` large,
     * e.g. 30% of every request answered 429. A request spared does not use the rule up.
     */
    readonly probability?: number;
    readonly fault: Fault;
}

/**
 * A fault rule the server holds (`POST /_test/faults` answers it, `GET /_test/faults` lists them). A
 * request gets the fault of the oldest rule that matches it and can apply to it: `task` only to a request
 * that creates a task, `taskState` only to a GET of an operation.
 */
export interface FaultRule {
    readonly id: string;
    readonly match: FaultMatch;
    /** Requests it still applies to. */
    readonly remaining: number;
    /** The chance that a matching request gets the fault. */
    readonly probability: number;
    readonly fault: Fault;
}

/** The answer of `GET /_test/faults`. */
export interface FaultRuleList {
    readonly items: readonly FaultRule[];
}

/** One request the server received (`GET /_test/requests`); requests to `/_test/` are not logged. */
export interface RequestLogEntry {
    /** 1, 2, 3... in order of arrival. */
    readonly seq: number;
    readonly method: string;
    /** The path, without the query. */
    readonly path: string;
    /** The query string without `?`, when there was one. */
    readonly query?: string;
    /** The status answered; null when the connection was closed without an answer (drop, loseResponse). */
    readonly status: number | null;
    readonly idempotencyKey?: string;
    /** The fault applied to it, if any. */
    readonly fault?: Fault;
    /** ISO 8601 of the server's clock when the request arrived. */
    readonly at: string;
}

/** The answer of `GET /_test/requests`. */
export interface RequestLogList {
    readonly items: readonly RequestLogEntry[];
    readonly count: number;
}

/** The body of `POST /_test/clock`: moves the server's clock forward. */
export interface AdvanceClockRequest {
    readonly advanceMs: number;
}

/** The answer of `POST /_test/clock`. */
export interface ClockState {
    /** ISO 8601 of the server's clock after the move. */
    readonly now: string;
}

/** Counters for assertions (`GET /_test/stats` and `TaskApiServer.stats()`). */
export interface TaskApiStats {
    /** POSTs that created a datastore (idempotent replays and conflicts are not counted). */
    readonly datastoresCreated: number;
    /** Tasks ever created. */
    readonly tasksCreated: number;
    /** Datastores that exist now, in any state. */
    readonly datastores: number;
    /** Times the data file was written (each write may carry many changes). */
    readonly dataFileWrites: number;
    /** Requests logged. */
    readonly requests: number;
}
