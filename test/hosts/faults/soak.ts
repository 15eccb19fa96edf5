// The multi-writer file suite's long soak: the runs of multiWriter.test.ts for as many seeds as asked,
// one after another, printing each run and the totals; exits 1 when any seed broke an invariant, listing
// each with the command that replays it.
//
//   node -r ts-node/register/transpile-only test/hosts/faults/soak.ts --seeds 200
//       [--from 1000] [--duration 4000] [--dist dist] [--keep]
//   node -r ts-node/register/transpile-only test/hosts/faults/soak.ts --seed 1017 --duration 4000
//
// Uses the package built in dist/ (npm run build first), or the build given by --dist. Needs root and
// mount(8).

import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { canBindMount, isRoot } from "../../support/system";
import { DEFAULT_DIST, kindsOf, type RunReport, replayCommand, runSeed } from "./harness";

async function main(): Promise<number> {
    const { values } = parseArgs({
        options: {
            seeds: { type: "string", default: "20" },
            from: { type: "string", default: "1000" },
            seed: { type: "string" },
            duration: { type: "string", default: "4000" },
            dist: { type: "string", default: DEFAULT_DIST },
            keep: { type: "boolean", default: false },
        },
    });
    if (!isRoot || !canBindMount()) {
        console.error(
            "the multi-writer soak needs root (writers run as nobody and uid 65533) and mount(8) (a bind-mounted file)",
        );
        return 2;
    }
    const durationMs = Number(values.duration);
    const seeds =
        values.seed !== undefined
            ? [Number(values.seed)]
            : Array.from({ length: Number(values.seeds) }, (_, i) => Number(values.from) + i);
    const dist = resolve(values.dist);
    console.log(
        `multi-writer soak: ${seeds.length} seed(s) from ${seeds[0]}, ${durationMs} ms under faults each, package ${dist}`,
    );

    const failing: RunReport[] = [];
    const allViolations: string[] = [];
    const total = {
        ops: 0,
        failedOps: 0,
        kills: 0,
        stops: 0,
        longStops: 0,
        snapshots: 0,
        tornInPlace: 0,
        appended: 0,
        foreignLost: 0,
        checks: 0,
        excused: 0,
        violations: 0,
    };
    const started = Date.now();
    for (const seed of seeds) {
        const report = await runSeed({ seed, durationMs, dist, keep: values.keep });
        for (const line of report.summary) console.log(line);
        for (const violation of report.violations.slice(0, 10)) console.log(`    violation: ${violation}`);
        if (report.violations.length > 10) console.log(`    ... and ${report.violations.length - 10} more`);
        if (report.directory) console.log(`    logs in ${report.directory}`);
        const { counts, faults } = report;
        total.ops += counts.acknowledged.creates + counts.acknowledged.deletes;
        total.failedOps += [...counts.failed.values()].reduce((a, b) => a + b, 0);
        total.kills += faults.kills;
        total.stops += faults.stops;
        total.longStops += faults.longStops;
        total.snapshots += faults.snapshots;
        total.tornInPlace += faults.tornInPlace;
        total.appended += counts.appended + counts.rewriteLinesAdded;
        total.foreignLost += counts.appendedLost + counts.rewriteLinesLost;
        total.checks += counts.checks;
        total.excused += counts.excused;
        total.violations += report.violations.length;
        if (report.violations.length > 0) failing.push(report);
        allViolations.push(...report.violations);
    }
    console.log(
        `\ntotal: ${seeds.length} runs in ${Math.round((Date.now() - started) / 1000)} s; ${total.ops} operations acknowledged ` +
            `(${total.failedOps} failed); faults: ${total.kills} SIGKILL, ${total.stops} SIGSTOP (${total.longStops} longer than ` +
            `the stale time); ${total.snapshots} snapshots (${total.tornInPlace} torn during in-place writes, documented); foreign ` +
            `lines ${total.appended} written, ${total.foreignLost} lost; ${total.checks} invariant checks (${total.excused} excused ` +
            `as a foreign rewrite's doing); ${total.violations} violations in ${failing.length} run(s)`,
    );
    if (allViolations.length > 0) console.log(`violations by kind: ${kindsOf(allViolations)}`);
    for (const report of failing) {
        console.log(
            `  seed ${report.scenario.seed}: ${report.violations.length} violation(s); replay: ${replayCommand(report.scenario.seed, durationMs, dist)}`,
        );
    }
    return failing.length > 0 ? 1 : 0;
}

main().then(
    (code) => process.exit(code),
    (error: unknown) => {
        console.error(error);
        process.exit(2);
    },
);
