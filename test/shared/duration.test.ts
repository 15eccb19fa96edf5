// Guards the per-operation timeouts users write (`timeouts: { create: "30m" }`) and how durations read in
// messages (provider/tasks/core/duration.ts): h, m, s and ms parts, decimals, surrounding blanks, and a
// reason (never a throw) for anything else; formatting in ms, s, minutes and hours, including the values
// that round up into the next unit. Pure tables.

import { strict as assert } from "node:assert";
import { formatDuration, parseDuration } from "../../provider/shared/duration";

describe("duration", () => {
    describe("parseDuration", () => {
        const good: [text: string, ms: number][] = [
            ["30m", 1_800_000],
            ["1h30m", 5_400_000],
            ["45s", 45_000],
            ["500ms", 500],
            ["1ms", 1],
            ["2h", 7_200_000],
            ["1.5h", 5_400_000],
            ["0.5s", 500],
            ["1h0m", 3_600_000],
            ["1h1m1s1ms", 3_661_001],
            ["90s", 90_000],
            ["5m5s", 305_000],
            [" 30m ", 1_800_000],
            ["\t45s\n", 45_000],
            ["1m1m", 120_000],
            ["0s1ms", 1],
        ];
        for (const [text, ms] of good) {
            it(`reads ${JSON.stringify(text)} as ${ms} ms`, () => {
                assert.equal(parseDuration(text), ms);
            });
        }

        const bad: [text: string, reason: RegExp][] = [
            ["", /is empty/],
            ["   ", /is empty/],
            ["30", /unexpected "30"/],
            ["m", /unexpected "m"/],
            ["30 m", /unexpected "30 m"/],
            ["1h 30m", /unexpected " 30m"/],
            ["30M", /unexpected "30M"/],
            ["1H", /unexpected "1H"/],
            ["-5m", /unexpected "-5m"/],
            ["+5m", /unexpected "\+5m"/],
            ["1d", /unexpected "1d"/],
            ["30min", /unexpected "in"/],
            ["1h30", /unexpected "30"/],
            [".5s", /unexpected ".5s"/],
            ["5.s", /unexpected "5.s"/],
            ["1e3ms", /unexpected "1e3ms"/],
            ["five minutes", /unexpected "five minutes"/],
            ["0s", /is not a positive duration/],
            ["0ms", /is not a positive duration/],
            ["0h0m0s", /is not a positive duration/],
        ];
        for (const [text, reason] of bad) {
            it(`refuses ${JSON.stringify(text)} with a reason`, () => {
                const parsed = parseDuration(text);
                assert.equal(typeof parsed, "object", `accepted as ${String(parsed)}`);
                const { problem } = parsed as { problem: string };
                assert.match(problem, reason);
            });
        }

        it("names the units and gives an example in its reasons", () => {
            const { problem } = parseDuration("30") as { problem: string };
            assert.match(problem, /h, m, s or ms/);
            assert.match(problem, /"1h30m"/);
            assert.match((parseDuration("") as { problem: string }).problem, /"30m"/);
        });

        it("quotes the text as written, blanks included", () => {
            const { problem } = parseDuration(" 1x ") as { problem: string };
            assert.match(problem, /^" 1x " is not a duration: unexpected "1x"/);
        });

        it("gives the same answer when called again (no state left behind)", () => {
            assert.equal(typeof parseDuration("1h 30m"), "object");
            assert.equal(parseDuration("30m"), 1_800_000);
            assert.equal(parseDuration("30m"), 1_800_000);
        });
    });

    describe("formatDuration", () => {
        const table: [ms: number, text: string][] = [
            [0, "0 ms"],
            [1, "1 ms"],
            [250, "250 ms"],
            [999, "999 ms"],
            [999.4, "999 ms"],
            [1000, "1 s"],
            [1500, "1.5 s"],
            [1234, "1.2 s"],
            [45_000, "45 s"],
            [59_900, "59.9 s"],
            [60_000, "1m"],
            [89_999, "1m"],
            [90_000, "2m"],
            [1_800_000, "30m"],
            [3_600_000, "1h 0m"],
            [5_400_000, "1h 30m"],
            [7_200_000, "2h 0m"],
            [1_199_965, "20m"],
            [36_000_000, "10h 0m"],
        ];
        for (const [ms, text] of table) {
            it(`shows ${ms} ms as ${JSON.stringify(text)}`, () => {
                assert.equal(formatDuration(ms), text);
            });
        }

        // A value just below a unit boundary rounds up to it and must read as the boundary does, never as
        // "60" of the smaller unit. TaskDeadlineError formats deadline - startedAt, which is a few ms short
        // of the user's timeout: a "2h" timeout is reported as 7_199_965 ms.
        const boundaries: [ms: number, boundary: number][] = [
            [999.6, 1000],
            [59_999, 60_000],
            [3_599_999, 3_600_000],
            [7_199_965, 7_200_000],
            [7_199_999, 7_200_000],
        ];
        for (const [ms, boundary] of boundaries) {
            it(`shows ${ms} ms, which rounds to ${boundary} ms, as ${JSON.stringify(formatDuration(boundary))}`, () => {
                assert.equal(formatDuration(ms), formatDuration(boundary));
            });
        }
    });
});
