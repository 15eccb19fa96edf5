// Time is injected everywhere it is used, so tests run without waiting and never depend on timing.
//
// Node's timers hold at most 2^31-1 ms (about 24.8 days): given more, setTimeout warns
// (TimeoutOverflowWarning) and fires after 1 ms instead, which turned a server's "Retry-After: 999999999"
// into a busy loop. The real timers here never hand Node more than MAX_TIMER_MS: a longer wait is a chain
// of timers.

import { setTimeout as delay } from "node:timers/promises";

/** Milliseconds since the epoch. */
export type Clock = () => number;

/** Waits `ms` milliseconds; rejects with the signal's reason when it is aborted first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The longest delay one Node timer takes (2^31-1 ms); longer waits are chained. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The wall clock. */
export const systemClock: Clock = () => Date.now();

/** A real timer-based sleep; waits of any length (NaN and negative ones are none), chained past MAX_TIMER_MS. */
export const timerSleep: Sleep = async (ms, signal) => {
    let remaining = ms > 0 ? ms : 0;
    do {
        const step = Math.min(remaining, MAX_TIMER_MS);
        await delay(step, undefined, signal ? { signal } : undefined);
        remaining -= step;
    } while (remaining > 0);
};

/** Runs `action` every `everyMs` until the returned function is called. */
export type Repeat = (everyMs: number, action: () => void) => () => void;

/** A real interval that never keeps the process alive by itself (at most MAX_TIMER_MS apart). */
export const timerRepeat: Repeat = (everyMs, action) => {
    const interval = setInterval(action, Math.min(everyMs, MAX_TIMER_MS));
    interval.unref();
    return () => clearInterval(interval);
};

/**
 * Calls `onTimeout` after `ms` unless the returned cancel function is called first. Apart from `Sleep`
 * because a request timer is started for every request and nearly always cancelled: cancelling must cost
 * nothing (no rejected promise, no abort error built).
 */
export type Timeout = (ms: number, onTimeout: () => void) => () => void;

/** A real timer; chained past MAX_TIMER_MS. */
export const timerTimeout: Timeout = (ms, onTimeout) => {
    let remaining = ms > 0 ? ms : 0;
    let timer: NodeJS.Timeout;
    const arm = (): void => {
        const step = Math.min(remaining, MAX_TIMER_MS);
        remaining -= step;
        timer = setTimeout(remaining > 0 ? arm : onTimeout, step);
    };
    arm();
    return () => clearTimeout(timer);
};
