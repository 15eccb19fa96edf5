// Pure timing of polls and retries. How long to wait before the next look at an asynchronous task:
//
// - The server's word wins: Retry-After (on 429/503) and suggestedPollingIntervalSeconds.
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

/** What the next wait may depend on. */
export interface WaitInput {
    /** 0 for the first wait, then 1, 2, ... */
    readonly attempt: number;
    readonly schedule: PollSchedule;
    /** A number in [0, 1). */
    readonly random: () => number;
    /** Retry-After of the last answer, in ms. */
    readonly retryAfterMs?: number | undefined;
    /** The task's suggestedPollingIntervalSeconds, in ms. */
    readonly suggestedMs?: number | undefined;
    /** The estimated time until the task ends, in ms. */
    readonly estimatedRemainingMs?: number | undefined;
    /** Whether this wait may go below the band to meet the estimate (once per task). */
    readonly mayPollEarly?: boolean;
}

/** The band of the `attempt`-th wait: [ceiling/2, ceiling], ceiling = min(maxMs, initialMs * 2^attempt). */
export function backoffBand(attempt: number, schedule: PollSchedule): { low: number; high: number } {
    const high = Math.min(schedule.maxMs, schedule.initialMs * 2 ** Math.min(attempt, 52));
    return { low: high / 2, high };
}

/** How long to wait before the next request, in ms. */
export function nextWait(input: WaitInput): number {
    const { attempt, schedule, random } = input;
    // Spread clients told the same Retry-After over one initial step, so they do not return as one.
    if (input.retryAfterMs !== undefined) return input.retryAfterMs + random() * schedule.initialMs;
    if (input.suggestedMs !== undefined && input.suggestedMs > 0) return input.suggestedMs;
    const { low, high } = backoffBand(attempt, schedule);
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

/**
 * Parses a Retry-After header: delay-seconds or an HTTP date (relative to `now`). Undefined when absent
 * or unreadable.
 */
export function parseRetryAfter(header: string | null | undefined, now: number): number | undefined {
    if (!header) return undefined;
    const trimmed = header.trim();
    if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
    // An HTTP date starts with the day's name ("Sun, 06 Nov 1994 08:49:37 GMT"); Date.parse would also
    // read "1.5" or "-1" as dates, turning a malformed header into a wait of 0.
    if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
    const date = Date.parse(trimmed);
    return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
