// Time is injected everywhere it is used, so tests run without waiting and never depend on timing.

import { setTimeout as delay } from "node:timers/promises";

/** Milliseconds since the epoch. */
export type Clock = () => number;

/** Waits `ms` milliseconds; rejects with the signal's reason when it is aborted first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The wall clock. */
export const systemClock: Clock = () => Date.now();

/** A real timer-based sleep. */
export const timerSleep: Sleep = async (ms, signal) => {
    await delay(ms, undefined, signal ? { signal } : undefined);
};

/** Runs `action` every `everyMs` until the returned function is called. */
export type Repeat = (everyMs: number, action: () => void) => () => void;

/** A real interval that never keeps the process alive by itself. */
export const timerRepeat: Repeat = (everyMs, action) => {
    const interval = setInterval(action, everyMs);
    interval.unref();
    return () => clearInterval(interval);
};

/**
 * Calls `onTimeout` after `ms` unless the returned cancel function is called first. Apart from `Sleep`
 * because a request timer is started for every request and nearly always cancelled: cancelling must cost
 * nothing (no rejected promise, no abort error built).
 */
export type Timeout = (ms: number, onTimeout: () => void) => () => void;

/** A real timer. */
export const timerTimeout: Timeout = (ms, onTimeout) => {
    const timer = setTimeout(onTimeout, ms);
    return () => clearTimeout(timer);
};
