// Virtual time for the chaos suite: the clock, sleeps and request timers of the provider under test (and
// the clock of the task API server behind the chaos proxy) move only when the test says so. `drive`
// runs one operation and, whenever nothing has happened for a few turns of the event loop and every
// request the client has in flight is one the server is holding (a dribbled body, an answer that never
// comes), jumps to the next timer and fires it. So a 30 s request timeout on a stalled body fires after
// a millisecond of real time, and an operation that would wait for ever is seen waiting with nothing
// scheduled: a hang, reported, never a stuck test.
//
// Timers behave as Node's do for the values Node accepts. A wait longer than Node's largest timer is
// either waited exactly or, when `overflowingTimers` says the production timers overflow (they then
// fire after 1 ms, with a TimeoutOverflowWarning), fired after 1 ms and counted, so the suite sees what
// the real provider process would do.

import v8 from "node:v8";
import vm from "node:vm";
import type { Clock, Sleep, Timeout } from "../../provider/shared/time";

/** Node's largest timer delay: longer ones fire after 1 ms. */
export const TIMEOUT_MAX = 2 ** 31 - 1;

/** Who started a timer. */
export type TimerKind = "sleep" | "request" | "server";

interface Timer {
    readonly id: number;
    readonly at: number;
    readonly kind: TimerKind;
    readonly fire: () => void;
}

/** How `drive` ended: the operation's outcome, or why it was given up. */
export type Driven<T> =
    | { readonly settled: true; readonly ok: true; readonly value: T }
    | { readonly settled: true; readonly ok: false; readonly error: unknown }
    | { readonly settled: false; readonly reason: "hang" | "real-time limit" };

/** What `drive` may do when the operation is stuck. */
export interface DriveOptions {
    /** Give up after this much real time (a runaway loop in real time). */
    readonly realLimitMs: number;
    /**
     * Called once when nothing is scheduled, nothing is in flight and the operation has not ended; may
     * unstick it (e.g. by closing every connection) and returns whether it tried. A second stall ends
     * `drive` with "hang".
     */
    readonly onStuck?: () => boolean;
}

/** Counters of what virtual time did. */
export interface VirtualTimeStats {
    /** Jumps to a timer. */
    jumps: number;
    /** Waits asked beyond Node's largest timer. */
    overflows: number;
    /** Collections forced while a request was held. */
    collections: number;
}

export interface VirtualTimeOptions {
    /** Whether the production timers overflow for delays beyond TIMEOUT_MAX (see `probeTimerOverflow`). */
    readonly overflowingTimers?: boolean;
    /** Called for every wait beyond TIMEOUT_MAX, with its kind and ms. */
    readonly onOverflow?: (kind: TimerKind, ms: number) => void;
}

/** A clock, sleep and request timer that move only by jumps to the next timer. */
export class VirtualTime {
    now: number;
    readonly stats: VirtualTimeStats = { jumps: 0, overflows: 0, collections: 0 };
    /** The request timer most recently started: the client starts one just before each fetch. */
    lastRequestId: number | undefined;
    private readonly timers = new Map<number, Timer>();
    /** Requests in flight (by their timer's id) and whether the server is holding their answer. */
    private readonly inFlight = new Map<number, { held: boolean; collected: boolean }>();
    private nextId = 1;
    private activity = 0;

    constructor(
        start: number,
        private readonly options: VirtualTimeOptions = {},
    ) {
        this.now = start;
    }

    readonly clock: Clock = () => this.now;

    readonly sleep: Sleep = (ms, signal) =>
        new Promise<void>((resolve, reject) => {
            if (signal?.aborted) {
                reject(signal.reason);
                return;
            }
            const onAbort = () => {
                cancel();
                reject(signal?.reason);
            };
            const cancel = this.addTimer(ms, "sleep", () => {
                signal?.removeEventListener("abort", onAbort);
                resolve();
            });
            signal?.addEventListener("abort", onAbort, { once: true });
        });

    /** The client's per-request timer: each one marks a request in flight until it fires or is cancelled. */
    readonly timeout: Timeout = (ms, onTimeout) => {
        const id = this.nextId;
        this.inFlight.set(id, { held: false, collected: false });
        this.lastRequestId = id;
        const cancel = this.addTimer(ms, "request", () => {
            this.inFlight.delete(id);
            onTimeout();
        });
        return () => {
            if (this.inFlight.delete(id)) this.touch();
            cancel();
        };
    };

    /** A timer of the test's own (a server sending the next byte of a dribbled body). */
    schedule(ms: number, fire: () => void): () => void {
        return this.addTimer(ms, "server", fire);
    }

    /** Marks a request in flight as held by the server (it will not answer until a timer fires) or not. */
    hold(requestId: number | undefined, held: boolean): void {
        const request = requestId === undefined ? undefined : this.inFlight.get(requestId);
        if (request) request.held = held;
        this.touch();
    }

    /** Something happened (a request arrived, an answer was written): idleness starts again from now. */
    touch(): void {
        this.activity++;
    }

    /** Moves the clock forward by `ms`, firing every timer that falls due on the way, in order. */
    advance(ms: number): void {
        const until = this.now + ms;
        for (;;) {
            const next = this.earliest();
            if (!next || next.at > until) break;
            this.fire(next);
        }
        this.now = until;
    }

    /** Timers pending, by kind. */
    pending(kind?: TimerKind): number {
        return [...this.timers.values()].filter((timer) => kind === undefined || timer.kind === kind).length;
    }

    /** Requests in flight (started, neither answered-and-read nor timed out). */
    get requestsInFlight(): number {
        return this.inFlight.size;
    }

    /** Runs `work` to its end on virtual time, or gives it up as hung or as running away in real time. */
    async drive<T>(work: Promise<T>, options: DriveOptions): Promise<Driven<T>> {
        let outcome: Driven<T> | undefined;
        work.then(
            (value) => {
                outcome = { settled: true, ok: true, value };
            },
            (error: unknown) => {
                outcome = { settled: true, ok: false, error };
            },
        );
        const startedAt = Date.now();
        let stalls = 0;
        let triedUnsticking = false;
        while (outcome === undefined) {
            const seen = this.activity;
            await quiet(stalls > 0 ? 5 : 0);
            if (outcome !== undefined) break;
            if (Date.now() - startedAt > options.realLimitMs) return { settled: false, reason: "real-time limit" };
            if (seen !== this.activity) {
                stalls = 0;
                continue;
            }
            const requests = [...this.inFlight.values()];
            // A request being answered: its answer is on the way, so its timer must not fire yet.
            if (requests.some((request) => !request.held)) {
                await new Promise<void>((resolve) => setTimeout(resolve, 1));
                continue;
            }
            const next = this.earliest();
            if (next) {
                stalls = 0;
                const held = next.kind === "request" ? this.inFlight.get(next.id) : undefined;
                if (held && !held.collected) {
                    // A collection may run at any moment; let one run at the worst, with a body held.
                    held.collected = true;
                    collectGarbage();
                    this.stats.collections++;
                    continue;
                }
                this.fire(next);
                continue;
            }
            // Nothing scheduled and nothing being answered, yet the operation goes on: give it a few
            // turns (a collection among them), then one chance to be unstuck, then call it a hang.
            stalls++;
            if (stalls === 3) collectGarbage();
            if (stalls < 20) continue;
            if (!triedUnsticking && options.onStuck?.()) {
                triedUnsticking = true;
                stalls = 0;
                continue;
            }
            return { settled: false, reason: "hang" };
        }
        return outcome;
    }

    private addTimer(ms: number, kind: TimerKind, fire: () => void): () => void {
        const id = this.nextId++;
        const at = this.now + this.delayOf(ms, kind);
        this.timers.set(id, { id, at, kind, fire });
        this.touch();
        return () => {
            if (this.timers.delete(id)) this.touch();
        };
    }

    /** The delay a timer of the production code would really have. */
    private delayOf(ms: number, kind: TimerKind): number {
        if (kind === "server") return Math.max(0, ms);
        // As setTimeout: NaN and anything below 1 ms wait 1 ms.
        if (!(ms >= 1)) return 1;
        if (ms > TIMEOUT_MAX) {
            this.stats.overflows++;
            this.options.onOverflow?.(kind, ms);
            if (this.options.overflowingTimers) return 1;
        }
        return ms;
    }

    private earliest(): Timer | undefined {
        let best: Timer | undefined;
        for (const timer of this.timers.values()) {
            if (!best || timer.at < best.at || (timer.at === best.at && timer.id < best.id)) best = timer;
        }
        return best;
    }

    private fire(timer: Timer): void {
        this.timers.delete(timer.id);
        if (Number.isFinite(timer.at) && timer.at > this.now) this.now = timer.at;
        this.stats.jumps++;
        this.touch();
        timer.fire();
    }
}

/** Lets the event loop run: a few turns, plus `ms` of real time when asked. */
async function quiet(ms: number): Promise<void> {
    for (let turn = 0; turn < 3; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
    if (ms > 0) await new Promise<void>((resolve) => setTimeout(resolve, ms));
}

let gc: (() => void) | undefined;

/** A full collection (the flag is set at run time, so no command-line option is needed). */
export function collectGarbage(): void {
    if (!gc) {
        v8.setFlagsFromString("--expose-gc");
        gc = vm.runInNewContext("gc") as () => void;
    }
    gc();
}

/**
 * Whether `sleep` and `timeout` (the production timers) overflow for a delay beyond TIMEOUT_MAX, as
 * Node's setTimeout does (firing after 1 ms). Probed for real, once, with the warning kept quiet.
 */
export async function probeTimerOverflow(
    sleep: Sleep,
    timeout: Timeout,
): Promise<{ sleep: boolean; timeout: boolean }> {
    const emitWarning = process.emitWarning;
    process.emitWarning = (() => undefined) as typeof process.emitWarning;
    try {
        const controller = new AbortController();
        const slept = sleep(TIMEOUT_MAX + 10_000, controller.signal).then(
            () => true,
            () => false,
        );
        let fired = false;
        const cancel = timeout(TIMEOUT_MAX + 10_000, () => {
            fired = true;
        });
        const early = await Promise.race([
            slept,
            new Promise<false>((resolve) => setTimeout(() => resolve(false), 100)),
        ]);
        controller.abort(new Error("probe over"));
        cancel();
        await slept;
        return { sleep: early, timeout: fired };
    } finally {
        process.emitWarning = emitWarning;
    }
}
