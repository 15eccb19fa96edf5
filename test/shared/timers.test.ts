// Guards the real timers the task client and the Datastore operations wait with (provider/shared/time.ts)
// against Node's timer overflow (issue 18 §2): given more than 2^31-1 ms, setTimeout warns
// (TimeoutOverflowWarning) and fires after 1 ms, which turned "Retry-After: 999999999" and
// `timeouts.create: "1000h"` into busy loops. A wait that long must neither warn nor end early. The
// checks are ordered by events, not by durations: a 1 ms timer scheduled first always fires before the
// test's own later timer does.

import { strict as assert } from "node:assert";
import { setTimeout as delay, setImmediate as immediate } from "node:timers/promises";
import { MAX_TIMER_MS, timerSleep, timerTimeout } from "../../provider/shared/time";

/** Warnings of the process while `body` runs and a few turns after it. */
async function warningsDuring(body: () => Promise<void>): Promise<string[]> {
    const seen: string[] = [];
    const listener = (warning: Error) => seen.push(warning.name);
    process.on("warning", listener);
    try {
        await body();
        await immediate();
        await immediate();
    } finally {
        process.off("warning", listener);
    }
    return seen;
}

describe("the real timers (issue 18 §2: no timer overflow)", () => {
    for (const ms of [MAX_TIMER_MS + 1, 999_999_999_000, 1000 * 3_600_000, Number.POSITIVE_INFINITY]) {
        it(`timerSleep(${ms}) neither warns nor ends early, and still ends when aborted`, async () => {
            const controller = new AbortController();
            let ended: "resolved" | "rejected" | undefined;
            const warnings = await warningsDuring(async () => {
                const sleeping = timerSleep(ms, controller.signal).then(
                    () => {
                        ended = "resolved";
                    },
                    () => {
                        ended = "rejected";
                    },
                );
                await delay(20);
                assert.equal(ended, undefined, "the sleep ended early (its timer overflowed to 1 ms)");
                controller.abort(new Error("done"));
                await sleeping;
            });
            assert.equal(ended, "rejected");
            assert.deepEqual(warnings, []);
        });

        it(`timerTimeout(${ms}) neither warns nor fires early, and is cancelled`, async () => {
            let fired = false;
            const warnings = await warningsDuring(async () => {
                const cancel = timerTimeout(ms, () => {
                    fired = true;
                });
                await delay(20);
                cancel();
            });
            assert.equal(fired, false, "the timer fired early (it overflowed to 1 ms)");
            assert.deepEqual(warnings, []);
        });
    }

    it("timerSleep and timerTimeout still wait short times and zero", async () => {
        await timerSleep(1);
        await timerSleep(0);
        await timerSleep(-5);
        await timerSleep(Number.NaN);
        await new Promise<void>((resolve) => timerTimeout(1, resolve));
        await new Promise<void>((resolve) => timerTimeout(0, resolve));
    });
});
