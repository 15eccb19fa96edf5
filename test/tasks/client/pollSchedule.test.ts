// Guards the timing of polls and retries (provider/tasks/core/pollSchedule.ts): backoff bands that double
// from initialMs and stop at maxMs, jitter over the upper half of each band, the server's Retry-After
// winning but never below the band, its suggested interval winning within [1 s, 5 min], waits aimed a little after a task's estimated end, the estimate itself, and
// Retry-After parsing (delay-seconds and HTTP dates against an injected now). A seeded simulation checks
// the promise of the module's header: 1-3 s tasks are seen ended within log2(duration/100 ms)+3 polls.
// Pure: no server, no timers.

import { strict as assert } from "node:assert";
import { seededRandom } from "../../../provider/shared/random";
import {
    backoffBand,
    DEFAULT_POLL_SCHEDULE,
    estimateRemaining,
    HINT_CEILING_MS,
    HINT_FLOOR_MS,
    nextWait,
    type PollSchedule,
    suggestedWaitMs,
} from "../../../provider/tasks/client/pollSchedule";
import { parseRetryAfter } from "../../../provider/tasks/protocol/retryAfter";

const SCHEDULE: PollSchedule = { initialMs: 100, maxMs: 10_000 };
/** A random source that must not be used. */
const NO_RANDOM = () => {
    throw new Error("random() was called");
};

describe("pollSchedule", () => {
    describe("DEFAULT_POLL_SCHEDULE", () => {
        it("backs off from 100 ms to 10 s", () => {
            assert.deepEqual(DEFAULT_POLL_SCHEDULE, { initialMs: 100, maxMs: 10_000 });
        });
    });

    describe("backoffBand", () => {
        const table: [attempt: number, low: number, high: number][] = [
            [0, 50, 100],
            [1, 100, 200],
            [2, 200, 400],
            [3, 400, 800],
            [4, 800, 1600],
            [5, 1600, 3200],
            [6, 3200, 6400],
            [7, 5000, 10_000],
            [8, 5000, 10_000],
            [60, 5000, 10_000],
            [1_000_000, 5000, 10_000],
        ];
        for (const [attempt, low, high] of table) {
            it(`attempt ${attempt} of 100 ms..10 s is [${low}, ${high}]`, () => {
                assert.deepEqual(backoffBand(attempt, SCHEDULE), { low, high });
            });
        }

        it("doubles the ceiling from initialMs until it reaches maxMs, then stays there", () => {
            for (const schedule of [SCHEDULE, { initialMs: 250, maxMs: 1000 }, { initialMs: 30, maxMs: 7000 }]) {
                let previous = backoffBand(0, schedule);
                assert.equal(previous.high, schedule.initialMs);
                for (let attempt = 1; attempt < 80; attempt++) {
                    const band = backoffBand(attempt, schedule);
                    assert.equal(band.high, Math.min(schedule.maxMs, previous.high * 2), `attempt ${attempt}`);
                    assert.equal(band.low, band.high / 2, `attempt ${attempt}`);
                    assert.ok(Number.isFinite(band.high));
                    previous = band;
                }
                assert.equal(previous.high, schedule.maxMs);
            }
        });

        it("starts at maxMs when initialMs is above it", () => {
            assert.deepEqual(backoffBand(0, { initialMs: 500, maxMs: 300 }), { low: 150, high: 300 });
        });
    });

    describe("nextWait", () => {
        it("stays within the attempt's band for any random value", () => {
            const random = seededRandom(20300101);
            for (let attempt = 0; attempt < 20; attempt++) {
                const { low, high } = backoffBand(attempt, SCHEDULE);
                for (let draw = 0; draw < 2000; draw++) {
                    const wait = nextWait({ attempt, schedule: SCHEDULE, random });
                    assert.ok(wait >= low && wait <= high, `attempt ${attempt}: ${wait} not in [${low}, ${high}]`);
                }
            }
        });

        it("reaches the band's ends with the extremes of random()", () => {
            assert.equal(nextWait({ attempt: 3, schedule: SCHEDULE, random: () => 0 }), 400);
            const top = nextWait({ attempt: 3, schedule: SCHEDULE, random: () => 1 - 2 ** -53 });
            assert.ok(top <= 800 && top > 799.99, String(top));
        });

        it("spreads its draws over the whole upper half, not just one end", () => {
            const random = seededRandom(7);
            const waits = Array.from({ length: 1000 }, () => nextWait({ attempt: 2, schedule: SCHEDULE, random }));
            assert.ok(Math.min(...waits) < 210, String(Math.min(...waits)));
            assert.ok(Math.max(...waits) > 390, String(Math.max(...waits)));
        });

        it("is the same for the same seed", () => {
            const draws = (seed: number) => {
                const random = seededRandom(seed);
                return Array.from({ length: 10 }, (_, attempt) => nextWait({ attempt, schedule: SCHEDULE, random }));
            };
            assert.deepEqual(draws(42), draws(42));
            assert.notDeepEqual(draws(42), draws(43));
        });

        describe("Retry-After wins, never below the backoff band", () => {
            it("over the suggestion and the estimate, spread by less than initialMs, while above the band", () => {
                const random = seededRandom(1);
                for (let i = 0; i < 500; i++) {
                    const attempt = i % 6;
                    const wait = nextWait({
                        attempt,
                        schedule: SCHEDULE,
                        random,
                        retryAfterMs: 5000,
                        suggestedMs: 1000,
                        estimatedRemainingMs: 20,
                    });
                    assert.ok(backoffBand(attempt, SCHEDULE).high <= 5000, "the band is below the Retry-After");
                    assert.ok(wait >= 5000 && wait < 5000 + SCHEDULE.initialMs, String(wait));
                }
            });

            it("waits at least the Retry-After and at least the band's low end, at most the larger of their tops", () => {
                const random = seededRandom(3);
                for (const retryAfterMs of [0, 1, 50, 2000, 5000, 60_000]) {
                    for (let attempt = 0; attempt < 20; attempt++) {
                        const { low, high } = backoffBand(attempt, SCHEDULE);
                        const wait = nextWait({ attempt, schedule: SCHEDULE, random, retryAfterMs });
                        assert.ok(wait >= retryAfterMs && wait >= low, `${retryAfterMs}/${attempt}: ${wait}`);
                        assert.ok(wait <= Math.max(retryAfterMs + SCHEDULE.initialMs, high), `${wait}`);
                    }
                }
            });

            it("is exact with random() = 0 and honoured beyond maxMs", () => {
                assert.equal(
                    nextWait({ attempt: 0, schedule: SCHEDULE, random: () => 0, retryAfterMs: 60_000 }),
                    60_000,
                );
            });

            it("spreads by initialMs of the schedule given", () => {
                const schedule = { initialMs: 1000, maxMs: 2000 };
                assert.equal(nextWait({ attempt: 0, schedule, random: () => 0.5, retryAfterMs: 3000 }), 3500);
            });

            it("of zero backs off as the band does, so a server answering it to every request is not hammered", () => {
                // Issue 18: "Retry-After: 0" on every 429 looped at hundreds of requests a second.
                const wait = nextWait({ attempt: 5, schedule: SCHEDULE, random: () => 0.25, retryAfterMs: 0 });
                assert.equal(wait, 1600 + 0.25 * 1600);
            });
        });

        describe("the suggested interval wins", () => {
            it("over the band and the estimate, exactly and without drawing a random number", () => {
                for (const attempt of [0, 3, 30]) {
                    const wait = nextWait({
                        attempt,
                        schedule: SCHEDULE,
                        random: NO_RANDOM,
                        suggestedMs: 3000,
                        estimatedRemainingMs: 10,
                    });
                    assert.equal(wait, 3000);
                }
            });

            it("beyond maxMs too", () => {
                assert.equal(
                    nextWait({ attempt: 0, schedule: SCHEDULE, random: NO_RANDOM, suggestedMs: 30_000 }),
                    30_000,
                );
            });

            it("unless it is not positive: then the band rules", () => {
                for (const suggestedMs of [0, -1000, Number.NaN]) {
                    const wait = nextWait({ attempt: 1, schedule: SCHEDULE, random: () => 0.5, suggestedMs });
                    assert.equal(wait, 150);
                }
            });

            it(`clamped to [${HINT_FLOOR_MS} ms, ${HINT_CEILING_MS} ms]`, () => {
                const wait = (suggestedMs: number) =>
                    nextWait({ attempt: 0, schedule: SCHEDULE, random: NO_RANDOM, suggestedMs });
                assert.equal(wait(0.1), HINT_FLOOR_MS);
                assert.equal(wait(999), HINT_FLOOR_MS);
                assert.equal(wait(1e12), HINT_CEILING_MS);
                assert.equal(wait(Number.POSITIVE_INFINITY), HINT_CEILING_MS);
            });
        });

        describe("suggestedWaitMs (a task's suggestedPollingIntervalSeconds)", () => {
            const cases: [seconds: unknown, ms: number | undefined][] = [
                [30, 30_000],
                [2, 2000],
                [1, HINT_FLOOR_MS],
                [0.0001, HINT_FLOOR_MS],
                [1e9, HINT_CEILING_MS],
                [300, HINT_CEILING_MS],
                [0, undefined],
                [-5, undefined],
                [Number.NaN, undefined],
                ["5", undefined],
                ["0.0001", undefined],
                [null, undefined],
                [undefined, undefined],
                [{}, undefined],
            ];
            for (const [seconds, ms] of cases) {
                it(`is ${ms} for ${typeof seconds === "string" ? JSON.stringify(seconds) : String(seconds)}`, () => {
                    assert.equal(suggestedWaitMs(seconds), ms);
                });
            }
        });

        describe("an estimated end", () => {
            it("is aimed at a little after the estimate when that is inside the band", () => {
                // attempt 4: [800, 1600]
                for (const estimate of [800, 1000, 1200, 1500]) {
                    const wait = nextWait({
                        attempt: 4,
                        schedule: SCHEDULE,
                        random: NO_RANDOM,
                        estimatedRemainingMs: estimate,
                    });
                    assert.equal(wait, estimate * 1.05 + 10);
                    assert.ok(wait > estimate, `${wait} is not after ${estimate}`);
                    assert.ok(
                        wait - estimate <= estimate * 0.05 + 10,
                        `${wait} is more than a little after ${estimate}`,
                    );
                }
            });

            it("is clamped up to the band's low end when the task should end sooner", () => {
                for (const estimate of [0, 1, 100, 700]) {
                    const wait = nextWait({
                        attempt: 4,
                        schedule: SCHEDULE,
                        random: NO_RANDOM,
                        estimatedRemainingMs: estimate,
                    });
                    assert.equal(wait, 800);
                }
            });

            it("is clamped down to the band's high end when the task should end later", () => {
                for (const [attempt, high] of [
                    [0, 100],
                    [4, 1600],
                    [9, 10_000],
                ] as const) {
                    const wait = nextWait({
                        attempt,
                        schedule: SCHEDULE,
                        random: NO_RANDOM,
                        estimatedRemainingMs: 1_000_000,
                    });
                    assert.equal(wait, high);
                }
            });

            it("may go below the band once, when allowed, to meet an end that comes sooner, never under half a step", () => {
                for (const [estimate, expected] of [
                    [100, 100 * 1.05 + 10],
                    [700, 700 * 1.05 + 10],
                    [0, SCHEDULE.initialMs / 2],
                    [10, SCHEDULE.initialMs / 2],
                ] as const) {
                    const wait = nextWait({
                        attempt: 4,
                        schedule: SCHEDULE,
                        random: NO_RANDOM,
                        estimatedRemainingMs: estimate,
                        mayPollEarly: true,
                    });
                    assert.equal(wait, expected);
                }
            });

            it("stays in the band for any estimate", () => {
                const random = seededRandom(99);
                for (let i = 0; i < 2000; i++) {
                    const attempt = Math.floor(random() * 12);
                    const estimate = random() * 20_000;
                    const { low, high } = backoffBand(attempt, SCHEDULE);
                    const wait = nextWait({ attempt, schedule: SCHEDULE, random, estimatedRemainingMs: estimate });
                    assert.ok(wait >= low && wait <= high, `${wait} not in [${low}, ${high}]`);
                }
            });
        });
    });

    describe("estimateRemaining", () => {
        const table: [percent: number, elapsedMs: number, remainingMs: number][] = [
            [50, 1000, 1000],
            [25, 1000, 3000],
            [10, 200, 1800],
            [75, 3000, 1000],
            [99, 990, 10],
            [0.5, 10, 1990],
        ];
        for (const [percent, elapsed, remaining] of table) {
            it(`${percent}% after ${elapsed} ms leaves ${remaining} ms`, () => {
                const estimate = estimateRemaining(percent, elapsed);
                assert.ok(estimate !== undefined);
                assert.ok(Math.abs(estimate - remaining) < 1e-9, String(estimate));
            });
        }

        const undefinedCases: [percent: number | undefined, elapsedMs: number, why: string][] = [
            [undefined, 1000, "no progress reported"],
            [0, 1000, "no progress yet"],
            [-5, 1000, "negative progress"],
            [Number.NaN, 1000, "NaN progress"],
            [100, 1000, "already done"],
            [120, 1000, "past done"],
            [50, 0, "no time elapsed"],
            [50, -100, "a clock that went back"],
        ];
        for (const [percent, elapsed, why] of undefinedCases) {
            it(`is undefined for ${why} (${percent}%, ${elapsed} ms)`, () => {
                assert.equal(estimateRemaining(percent, elapsed), undefined);
            });
        }
    });

    describe("parseRetryAfter", () => {
        const NOW = Date.parse("2015-10-21T07:27:30.000Z");

        const seconds: [header: string, ms: number][] = [
            ["0", 0],
            ["1", 1000],
            ["120", 120_000],
            [" 7 ", 7000],
            ["3600", 3_600_000],
            ["007", 7000],
        ];
        for (const [header, ms] of seconds) {
            it(`reads delay-seconds ${JSON.stringify(header)} as ${ms} ms`, () => {
                assert.equal(parseRetryAfter(header, NOW), ms);
            });
        }

        it("reads an IMF-fixdate relative to the now given", () => {
            assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", NOW), 30_000);
            assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", NOW - 60_000), 90_000);
        });

        it("reads the obsolete RFC 850 date format", () => {
            assert.equal(parseRetryAfter("Wednesday, 21-Oct-15 07:28:00 GMT", NOW), 30_000);
        });

        it("answers 0 for a date already past", () => {
            assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:00:00 GMT", NOW), 0);
            assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:27:30 GMT", NOW), 0);
        });

        const absent: [header: string | null | undefined, why: string][] = [
            [undefined, "no header"],
            [null, "Headers.get of a missing header"],
            ["", "an empty header"],
            ["   ", "blanks"],
            ["soon", "a word"],
            ["in a minute", "words"],
            ["12abc", "digits and letters"],
            ["3 seconds", "seconds with a unit"],
            ["0x10", "hexadecimal"],
            ["1e3", "an exponent"],
        ];
        for (const [header, why] of absent) {
            it(`is undefined for ${why} (${JSON.stringify(header)})`, () => {
                assert.equal(parseRetryAfter(header, NOW), undefined);
            });
        }

        // RFC 9110 10.2.3: Retry-After = HTTP-date / delay-seconds, delay-seconds = 1*DIGIT. These are
        // neither; read as dates by the lenient Date.parse they become a retry "now" (0 ms).
        const notDelaySeconds: [header: string, why: string][] = [
            ["1.5", "a fraction of seconds"],
            ["-1", "a negative number"],
            ["+5", "a signed number"],
            ["1,5", "a decimal comma"],
        ];
        for (const [header, why] of notDelaySeconds) {
            it(`is undefined for ${why} (${JSON.stringify(header)}), not a date`, () => {
                assert.equal(parseRetryAfter(header, NOW), undefined);
            });
        }
    });

    describe("polls of 1-3 s tasks (simulation)", () => {
        /** Polls at t=0 and after each wait nextWait gives, until a poll at or after `durationMs` sees the end. */
        function pollsToSeeEnd(durationMs: number, random: () => number): number {
            let t = 0;
            let polls = 1;
            for (let attempt = 0; t < durationMs; attempt++) {
                t += nextWait({ attempt, schedule: DEFAULT_POLL_SCHEDULE, random });
                polls++;
            }
            return polls;
        }

        it("never needs more than log2(duration/100 ms)+3 polls", () => {
            const random = seededRandom(3_000);
            let worst = 0;
            for (let task = 0; task < 20_000; task++) {
                const duration = 1000 + random() * 2000;
                const polls = pollsToSeeEnd(duration, random);
                const bound = Math.log2(duration / 100) + 3;
                assert.ok(
                    polls <= bound,
                    `a ${duration.toFixed(1)} ms task needed ${polls} polls (bound ${bound.toFixed(2)})`,
                );
                worst = Math.max(worst, polls - bound);
            }
            assert.ok(worst <= 0);
        });

        it("holds for every millisecond from 1 s to 3 s, each with fresh jitter", () => {
            const random = seededRandom(17);
            for (let duration = 1000; duration <= 3000; duration++) {
                const polls = pollsToSeeEnd(duration, random);
                assert.ok(polls <= Math.log2(duration / 100) + 3, `a ${duration} ms task needed ${polls} polls`);
            }
        });
    });
});
