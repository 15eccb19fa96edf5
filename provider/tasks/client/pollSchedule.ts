// Pure timing of polls and retries. How long to wait before the next look at an asynchronous task:
//
// - The server's word wins, within bounds: Retry-After (on 429/503) is waited at least, but never less
//   than the backoff step either (a server answering "Retry-After: 0" to every request must not make
//   the client spin); suggestedPollingIntervalSeconds is taken only as a positive number, clamped to
//   [HINT_FLOOR_MS, HINT_CEILING_MS]. Callers clamp every wait to what remains of their deadline.
// - Otherwise exponential backoff from `initialMs`, doubling to `maxMs`, with jitter over the upper half
//   of each step, [ceiling/2, ceiling). Full jitter over [0, ceiling) can draw near-zero waits, which in
//   simulation sent 16-45% of 1-3 s tasks past log2(duration/100 ms)+3 polls; the upper half keeps
//   clients apart while every task stays within that bound.
// - Within that band, aim at the task's estimated completion (from its progressPercent), so a task is
//   noticed soon after it ends rather than up to a whole step later. Once per task the wait may go
//   below the band, down to half the initial step, to poll right at a predicted end that comes sooner:
//   with steady progress that poll sees the task finish; if it does not (progress stalled), waits keep
//   to the band again, so a task never costs more than one poll beyond plain backoff.

/** The shape of the backoff. */
export interface PollSchedule {
    /** Ceiling of the first wait: waits start between half of it and it. */
    readonly initialMs: number;
    /** Largest wait. */
    readonly maxMs: number;
}

/** About 100 ms to 10 s, as Terraform's StateChangeConf backs off. */
export const DEFAULT_POLL_SCHEDULE: PollSchedule = { initialMs: 100, maxMs: 10_000 };

/** The shortest poll interval a server may suggest: no real API suggests less (GreenLake suggests 30 s). */
export const HINT_FLOOR_MS = 1000;

/** The longest poll interval a server may suggest: a task is looked at at least every 5 minutes. */
export const HINT_CEILING_MS = 5 * 60_000;

/**
 * A task's suggestedPollingIntervalSeconds as a wait in ms, clamped to [HINT_FLOOR_MS, HINT_CEILING_MS];
 * undefined when it is not a positive number (absent, 0, negative, NaN, a string), so backoff rules.
 */
export function suggestedWaitMs(seconds: unknown): number | undefined {
    return typeof seconds === "number" ? clampHint(seconds * 1000) : undefined;
}

function clampHint(ms: number): number | undefined {
    return ms > 0 ? Math.min(HINT_CEILING_MS, Math.max(HINT_FLOOR_MS, ms)) : undefined;
}

/** What the next wait may depend on. */
export interface WaitInput {
    /** 0 for the first wait, then 1, 2, ... */
    readonly attempt: number;
    readonly schedule: PollSchedule;
    /** A number in [0, 1). */
    readonly random: () => number;
    /** Retry-After of the last answer, in ms. */
    readonly retryAfterMs?: number | undefined;
    /** The task's suggestedPollingIntervalSeconds, in ms (clamped to the hint bounds here). */
    readonly suggestedMs?: number | undefined;
    /** The estimated time until the task ends, in ms. */
    readonly estimatedRemainingMs?: number | undefined;
    /** Whether this wait may go below the band to meet the estimate (once per task). */
    readonly mayPollEarly?: boolean;
}

/** The band of the `attempt`-th wait: [ceiling/2, ceiling], ceiling = min(maxMs, initialMs * 2^attempt). */
/**
 * A doubling wait without jitter: the schedule's first wait doubled `step` times, at most its longest
 * (between the keys of a create-token chain, and between reads that lag behind an operation's end).
 */
export function doublingWaitMs(step: number, schedule: PollSchedule): number {
    return Math.min(schedule.initialMs * 2 ** step, schedule.maxMs);
}

export function backoffBand(attempt: number, schedule: PollSchedule): { low: number; high: number } {
    const high = Math.min(schedule.maxMs, schedule.initialMs * 2 ** Math.min(attempt, 52));
    return { low: high / 2, high };
}

/** How long to wait before the next request, in ms. */
export function nextWait(input: WaitInput): number {
    const { attempt, schedule, random } = input;
    const { low, high } = backoffBand(attempt, schedule);
    if (input.retryAfterMs !== undefined) {
        // Spread clients told the same Retry-After over one initial step, so they do not return as one;
        // and never come back sooner than backoff would, so "Retry-After: 0" on every answer backs off.
        const draw = random();
        return Math.max(input.retryAfterMs + draw * schedule.initialMs, low + draw * (high - low));
    }
    const suggested = input.suggestedMs === undefined ? undefined : clampHint(input.suggestedMs);
    if (suggested !== undefined) return suggested;
    if (input.estimatedRemainingMs !== undefined) {
        // A little after the estimate: a poll just before the end costs a whole extra step.
        const target = input.estimatedRemainingMs * 1.05 + 10;
        const floor = input.mayPollEarly ? schedule.initialMs / 2 : low;
        return Math.min(high, Math.max(floor, target));
    }
    return low + random() * (high - low);
}

/**
 * Estimates the time until a running task ends from its progress, assuming it advances at the pace it
 * has so far. Undefined when there is no progress to go by.
 */
export function estimateRemaining(progressPercent: number | undefined, elapsedMs: number): number | undefined {
    if (progressPercent === undefined || !(progressPercent > 0) || progressPercent >= 100 || elapsedMs <= 0) {
        return undefined;
    }
    return (elapsedMs * (100 - progressPercent)) / progressPercent;
}
