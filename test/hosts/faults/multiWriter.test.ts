// The multi-writer file suite (issue 18, section 5), CI budget: for each seed, several real processes
// write one hosts file at once, as root, nobody and uid 65533, each with a $TMPDIR of its own; some use
// the package's lock (HostsFileStore from dist/), some do not (`echo >>` appends, a `sed -i` style
// read-modify-write); on a plain or a bind-mounted file, in a directory all may write or only root; while
// the lock-using writers are hit by random SIGKILL and SIGSTOP (some longer than the lock's stale time).
// Invariants (invariants.ts): every acknowledged entry is in the file once (unless its writer deleted it),
// no base byte changes, no line is torn, snapshots taken without the lock are whole where every write
// renames, and one more writer after the run finds the file whole. Foreign lines lost are counted.
// The longer soak: test/hosts/faults/soak.ts. Set MULTI_WRITER_SEEDS (`7`, `1,5,9` or `1-40`) to run others,
// MULTI_WRITER_DIST to test another build, MULTI_WRITER_KEEP=1 to keep a failing run's logs.

import { strict as assert } from "node:assert";
import { budget } from "../../support/budget";
import { canBindMount, isRoot, skipBecause } from "../../support/system";
import { DEFAULT_DIST, replayCommand, runSeed } from "./harness";

/**
 * Seeds 1-16 and 38 cover every kind of run: plain and bind-mounted files, root-only and shared directories,
 * writers of one uid and of three, root-only writers (snapshots checked strictly: 4, 13, 38), foreign
 * appends, rewrites by rename (38) and in place (14, 15), bases with and without a final newline (9, 12).
 * About 4 s each on 2 idle cores.
 */
const CI_SEEDS = [...Array.from({ length: 16 }, (_, i) => i + 1), 38];
/** The inner loop's sample: root-only writers (4, 38), a base without a final newline (9), in place (14), by rename (38). */
const QUICK_SEEDS = [4, 9, 14, 38];
const DURATION_MS = 2500;
/** The build the lock-using writers load: dist/ unless MULTI_WRITER_DIST names another (e.g. an older commit's). */
const DIST = process.env.MULTI_WRITER_DIST ?? DEFAULT_DIST;

function seedsToRun(): number[] {
    const spec = process.env.MULTI_WRITER_SEEDS;
    if (!spec) return budget({ full: CI_SEEDS, quick: QUICK_SEEDS });
    return spec.split(",").flatMap((part) => {
        const [low, high] = part.split("-").map(Number) as [number, number | undefined];
        return high === undefined ? [low] : Array.from({ length: high - low + 1 }, (_, i) => low + i);
    });
}

describe("several writers of one hosts file under SIGKILL and SIGSTOP (multi-writer file suite)", function () {
    this.timeout(300_000);
    before(function () {
        if (!isRoot) skipBecause(this, "needs root, to run writers as nobody and uid 65533");
        if (!canBindMount()) skipBecause(this, "needs mount(8) and umount(8), to bind-mount the hosts file");
    });

    const total = {
        runs: 0,
        ops: 0,
        kills: 0,
        stops: 0,
        longStops: 0,
        snapshots: 0,
        foreign: 0,
        foreignLost: 0,
        checks: 0,
        violations: 0,
    };
    after(() => {
        if (total.runs === 0) return;
        console.log(
            `      total: ${total.runs} runs, ${total.ops} operations acknowledged, ${total.kills} SIGKILL, ${total.stops} SIGSTOP ` +
                `(${total.longStops} longer than the stale time), ${total.snapshots} snapshots, foreign lines ${total.foreign} ` +
                `written and ${total.foreignLost} lost, ${total.checks} invariant checks, ${total.violations} violations`,
        );
    });

    for (const seed of seedsToRun()) {
        it(`seed ${seed}: keeps every acknowledged entry, the base's bytes and whole lines`, async () => {
            const report = await runSeed({ seed, durationMs: DURATION_MS, dist: DIST });
            for (const line of report.summary) console.log(`      ${line}`);
            const { counts, faults } = report;
            total.runs++;
            total.ops += counts.acknowledged.creates + counts.acknowledged.deletes;
            total.kills += faults.kills;
            total.stops += faults.stops;
            total.longStops += faults.longStops;
            total.snapshots += faults.snapshots;
            total.foreign += counts.appended + counts.rewriteLinesAdded;
            total.foreignLost += counts.appendedLost + counts.rewriteLinesLost;
            total.checks += counts.checks;
            total.violations += report.violations.length;
            if (report.violations.length > 0) {
                for (const violation of report.violations.slice(0, 20)) console.log(`        violation: ${violation}`);
                if (report.violations.length > 20) console.log(`        ... and ${report.violations.length - 20} more`);
                console.log(`      replay: ${replayCommand(seed, DURATION_MS, DIST)}`);
                if (report.directory) console.log(`      logs kept in ${report.directory}`);
            }
            assert.deepEqual(
                report.violations.slice(0, 5),
                [],
                `seed ${seed}: ${report.violations.length} violation(s); replay: ${replayCommand(seed, DURATION_MS, DIST)}`,
            );
        });
    }
});
