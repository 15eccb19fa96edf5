// Issue 19, section 4: the invariant-based chaos suite of issue 18 against every dialect's server. Per
// dialect, a budget of seeds, each a randomized program of tasks.AsyncResource (creates, body
// updates, natural-key replacements, refreshes, deletes, untaint, adopt, changes made outside Pulumi, a
// Ctrl-C or a killed provider process mid-operation) played by the provider in this process on virtual
// time against the dialect's server, with the kit's random faults over every kind and operations that
// fail, are canceled, end late or take long; then healed with the chaos off and destroyed. Every
// invariant (dialectInvariants.ts) is checked after every operation and command, counted on the server.
//
//   CHAOS_SEEDS=n CHAOS_FROM=s npx mocha test/chaos/dialects/chaosDialects.test.ts   another budget
//   CHAOS_DIALECT=google CHAOS_SEED=7 npx mocha test/chaos/dialects/chaosDialects.test.ts   one seed, traced

import { strict as assert } from "node:assert";
import { FAULT_KINDS } from "../../dialects/servers/kit";
import { budget } from "../../support/budget";
import { probeOverflow } from "../report";
import type { RunCounts, RunReport } from "./dialectRun";
import { runSeed } from "./dialectRun";
import { DIALECTS } from "./dialectServers";

/**
 * Seeds per dialect in CI: 100 (about 60-90 s for the five dialects on two shared cores). The inner
 * loop's sample: seeds from the first until the dialect's run has done everything the suite says it
 * tests (9 to 16 seeds per dialect of 2026-11-30's plans), at most 25, so the sample follows the plans
 * wherever a change moves what each seed does.
 */
const SAMPLE = budget({ full: { seeds: 100, untilCovered: false }, quick: { seeds: 25, untilCovered: true } });

function numberFrom(name: string, fallback: number): number {
    const value = Number(process.env[name]);
    return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/** The command that replays exactly one seed, with its whole trace printed. */
function replayCommand(dialect: string, seed: number): string {
    return `CHAOS_DIALECT=${dialect} CHAOS_SEED=${seed} npx mocha test/chaos/dialects/chaosDialects.test.ts`;
}

function sum(reports: readonly RunReport[]): RunCounts {
    const total: RunCounts = {
        commands: 0,
        operations: 0,
        requests: 0,
        faults: {},
        failedOperations: 0,
        canceledOperations: 0,
        lateOperations: 0,
        longOperations: 0,
        interruptions: 0,
        kills: 0,
        outsideChanges: 0,
        checks: 0,
        violations: 0,
        healingUps: 0,
    };
    for (const { counts } of reports) {
        for (const key of Object.keys(total) as (keyof RunCounts)[]) {
            if (key === "faults") continue;
            total[key] += counts[key];
        }
        for (const [kind, count] of Object.entries(counts.faults)) {
            const name = kind as keyof RunCounts["faults"];
            total.faults[name] = (total.faults[name] ?? 0) + (count ?? 0);
        }
    }
    return total;
}

/** What the seeds run so far have not yet done of what the suite says it tests. */
function notYetCovered(total: RunCounts): string[] {
    const missing: string[] = FAULT_KINDS.filter((kind) => !total.faults[kind]);
    const hazards = {
        "a failed operation": total.failedOperations,
        "a canceled operation": total.canceledOperations,
        "an operation that ended late": total.lateOperations,
        "a Ctrl-C": total.interruptions,
        "a killed provider process": total.kills,
        "a healing up with its checks": Math.min(total.healingUps, total.checks),
    };
    for (const [hazard, count] of Object.entries(hazards)) if (count === 0) missing.push(hazard);
    return missing;
}

function faultsOf(counts: RunCounts): number {
    return Object.values(counts.faults).reduce((all, count) => all + (count ?? 0), 0);
}

function describeFailures(reports: readonly RunReport[]): string {
    const failing = reports.filter((report) => report.violations.length > 0);
    return failing
        .slice(0, 10)
        .map((report) => {
            const first = report.violations
                .slice(0, 4)
                .map((v) => `    ${v.invariant} (${v.where}): ${v.detail.slice(0, 400)}`)
                .join("\n");
            const more = report.violations.length > 4 ? `\n    ... ${report.violations.length - 4} more` : "";
            const parallel = report.plan.settings.parallel
                ? " (steps run in parallel: the replay has the same faults, not always the same interleaving)"
                : "";
            return `  ${report.dialect} seed ${report.seed}: ${report.violations.length} violation(s)\n${first}${more}\n    replay: ${replayCommand(report.dialect, report.seed)}${parallel}`;
        })
        .join("\n");
}

const only = process.env.CHAOS_DIALECT;
const oneSeed = numberFrom("CHAOS_SEED", 0);

describe("chaos against every dialect's server (issue 19, section 4)", function () {
    this.timeout(15 * 60_000);
    const seeds = numberFrom("CHAOS_SEEDS", SAMPLE.seeds);
    const untilCovered = SAMPLE.untilCovered && !process.env.CHAOS_SEEDS;
    const from = numberFrom("CHAOS_FROM", 1);
    const dialects = only ? DIALECTS.filter((dialect) => dialect === only) : DIALECTS;
    if (only && dialects.length === 0) throw new Error(`CHAOS_DIALECT=${only}: not one of ${DIALECTS.join(", ")}`);

    for (const dialect of dialects) {
        describe(dialect, () => {
            const reports: RunReport[] = [];

            before(async () => {
                const overflowingTimers = await probeOverflow();
                const startedAt = Date.now();
                if (oneSeed > 0) {
                    const report = await runSeed({
                        dialect,
                        seed: oneSeed,
                        overflowingTimers,
                        onTrace: (line) => console.log(line),
                    });
                    reports.push(report);
                } else {
                    for (let seed = from; seed < from + seeds; seed++) {
                        reports.push(await runSeed({ dialect, seed, overflowingTimers }));
                        if (untilCovered && notYetCovered(sum(reports)).length === 0) break;
                    }
                }
                const total = sum(reports);
                const first = reports[0]?.seed ?? from;
                const last = reports.at(-1)?.seed ?? from;
                console.log(
                    `      ${dialect}: seeds ${first}..${last} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: ` +
                        `${total.commands} commands, ${total.operations} operations, ${total.requests} requests, ` +
                        `${faultsOf(total)} faults, ${total.checks} checks, ${total.violations} violations\n` +
                        `        faults by kind: ${FAULT_KINDS.map((kind) => `${kind} ${total.faults[kind] ?? 0}`).join(", ")}; ` +
                        `operations failed ${total.failedOperations}, canceled ${total.canceledOperations}, ` +
                        `late ${total.lateOperations}, long ${total.longOperations}; Ctrl-C ${total.interruptions}, ` +
                        `kills ${total.kills}, outside changes ${total.outsideChanges}, healing ups ${total.healingUps}`,
                );
            });

            it("holds every invariant on every seed", () => {
                const failing = reports.filter((report) => report.violations.length > 0);
                assert.equal(
                    failing.length,
                    0,
                    `${failing.length} of ${reports.length} seeds broke invariants:\n${describeFailures(reports)}`,
                );
            });

            // One seed replayed need not hit every hazard; a budget of seeds must.
            if (oneSeed > 0) return;
            it("injected every kind of fault, operations that failed, were canceled or ended late, Ctrl-C and kills", () => {
                assert.deepEqual(
                    notYetCovered(sum(reports)),
                    [],
                    `never done in ${reports.length} seeds: a budget this small tests less`,
                );
            });
        });
    }
});
