// Issue 18, section 5: the chaos task API. A budget of seeds, each a randomized program of creates,
// updates, refreshes, deletes and interruptions played by the Datastore provider (in this process, on
// virtual time) against the real task API server behind a proxy that misbehaves per request in every
// way the attacks found (faults.ts), then healed with the chaos off; every invariant (invariants.ts) is
// checked after every request, operation and command. Prints the seeds and the counts; a failing seed is
// named with the command that replays exactly it.
//
// Then every finding kept in findings/ is replayed: a shrunk plan that broke an invariant once.
//
//   CHAOS_SEEDS=n CHAOS_FROM=s npx mocha test/chaos/chaosTaskApi.test.ts   another budget or window
//   node -r ts-node/register/transpile-only test/chaos/soak.ts --seeds 1000   the soak

import { strict as assert } from "node:assert";
import { basename, relative } from "node:path";
import { budget } from "../support/budget";
import { type RunCounts, type RunReport, runSeed } from "./chaosRun";
import { FAULT_KINDS } from "./faults";
import { loadFindings } from "./findings";
import { formatCounts, probeOverflow, sumCounts, violationsByInvariant } from "./report";

/**
 * CI's budget: 250 seeds, about a minute on two shared cores. The inner loop's sample: seeds from the
 * first until every kind of fault was injected and an operation interrupted (22 seeds of 2026-11-30's
 * plans), at most 40, so the sample follows the plans wherever a change moves what each seed injects.
 */
const SAMPLE = budget({ full: { seeds: 250, untilCovered: false }, quick: { seeds: 40, untilCovered: true } });

/** What the seeds run so far have not yet done of what the suite says it tests: a fault kind, an interruption, healing. */
function notYetCovered(total: RunCounts): string[] {
    const missing: string[] = FAULT_KINDS.filter((kind) => !total.faults[kind]);
    if (total.interruptions === 0) missing.push("an interrupted operation");
    if (total.healingUps === 0 || total.invariantChecks === 0) missing.push("a healing up with its checks");
    return missing;
}

function numberFrom(name: string, fallback: number): number {
    const value = Number(process.env[name]);
    return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

describe("chaos task API (issue 18, section 5)", function () {
    this.timeout(10 * 60_000);
    const seeds = numberFrom("CHAOS_SEEDS", SAMPLE.seeds);
    const untilCovered = SAMPLE.untilCovered && !process.env.CHAOS_SEEDS;
    const from = numberFrom("CHAOS_FROM", 1);
    const reports: RunReport[] = [];

    before(async () => {
        const overflowingTimers = await probeOverflow();
        const startedAt = Date.now();
        for (let seed = from; seed < from + seeds; seed++) {
            reports.push(await runSeed({ seed, overflowingTimers }));
            if (untilCovered && notYetCovered(sumCounts(reports.map((report) => report.counts))).length === 0) break;
        }
        const total: RunCounts = sumCounts(reports.map((report) => report.counts));
        console.log(
            `      seeds ${from}..${from + reports.length - 1} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s` +
                `${overflowingTimers ? " (the production timers overflow beyond 2^31-1 ms)" : ""}\n` +
                formatCounts(total, true)
                    .split("\n")
                    .map((line) => `      ${line}`)
                    .join("\n"),
        );
    });

    it("holds every invariant on every seed", () => {
        const failing = reports.filter((report) => report.violations.length > 0);
        // The gravest first: lower invariants are about data and origins, 6 about messages.
        const gravest = (report: RunReport) =>
            [...report.violations].sort((a, b) => a.invariant.localeCompare(b.invariant));
        const ordered = [...failing].sort(
            (a, b) => gravest(a)[0]?.invariant.localeCompare(gravest(b)[0]?.invariant ?? "") ?? 0,
        );
        const described = ordered.slice(0, 12).map((report) => {
            const first = gravest(report)
                .slice(0, 4)
                .map((v) => `    ${v.invariant} (${v.where}): ${v.detail.slice(0, 400)}`)
                .join("\n");
            const more = report.violations.length > 4 ? `\n    ... ${report.violations.length - 4} more` : "";
            return (
                `  seed ${report.seed}: ${report.violations.length} violation(s)\n${first}${more}\n` +
                `    replay: node -r ts-node/register/transpile-only test/chaos/soak.ts --seed ${report.seed}`
            );
        });
        const summary = violationsByInvariant(failing).join("\n  ");
        assert.equal(
            failing.length,
            0,
            `${failing.length} of ${reports.length} seeds broke invariants:\n  ${summary}\n${described.join("\n")}`,
        );
    });

    it("injected every kind of fault, and interrupted operations", () => {
        const total = sumCounts(reports.map((report) => report.counts));
        assert.deepEqual(
            notYetCovered(total),
            [],
            `never done in ${reports.length} seeds: a budget this small tests less`,
        );
    });

    describe("findings, replayed (findings/)", () => {
        for (const { file, finding } of loadFindings()) {
            it(`${basename(file, ".json")} (${finding.invariant})`, async () => {
                const report = await runSeed({
                    seed: finding.plan.seed,
                    plan: finding.plan,
                    overflowingTimers: await probeOverflow(),
                });
                const replay =
                    `${finding.title} (${finding.invariant}; found: ${finding.found}; cause: ${finding.cause}).\n` +
                    `Replay: node -r ts-node/register/transpile-only test/chaos/soak.ts --plan ${relative(process.cwd(), file)}`;
                const broken = report.violations.map((v) => `  ${v.invariant} (${v.where}): ${v.detail.slice(0, 400)}`);
                assert.deepEqual(broken, [], `${broken.length} violation(s); ${replay}`);
                // A hazard that no longer hits its request would make this pass without testing anything.
                const planned = finding.plan.script;
                if (!planned) return;
                const count = (script: NonNullable<typeof planned>) => [
                    script.faults.length,
                    script.taskFailures.length,
                    script.interrupts.length,
                ];
                assert.deepEqual(
                    count(report.script),
                    count(planned),
                    `the run injected [faults, task failures, interruptions] ${count(report.script)} of the script's ${count(planned)}: the requests it pins changed; shrink the finding again (${replay})`,
                );
            });
        }
    });
});
