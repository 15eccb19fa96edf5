// Findings of the multi-writer suite, shrunk to the fewest writers and faults that still show them, with
// the same harness and invariants (harness.ts, invariants.ts). Each names the seed it came from.

import { strict as assert } from "node:assert";
import { fixture } from "../../support/hostsFixtures";
import { canBindMount, isRoot, skipBecause } from "../../support/system";
import { DEFAULT_DIST, runSeed } from "./harness";
import type { Scenario } from "./scenario";

const DIST = process.env.MULTI_WRITER_DIST ?? DEFAULT_DIST;

describe("multi-writer findings, shrunk", function () {
    this.timeout(300_000);
    before(function () {
        if (!isRoot) skipBecause(this, "needs root, to bind-mount the hosts file");
        if (!canBindMount()) skipBecause(this, "needs mount(8) and umount(8), to bind-mount the hosts file");
    });

    // Seed 14 (and 1001, 1003, 1005, 1019, 1029 of the soak): the base was gone from the file, which held
    // only lock-using writers' lines. A tool that rewrites the file in place truncates it, then writes it
    // (hostile, cp, an editor: rename is impossible on a bind mount); a lock-using writer that reads in
    // between sees an empty or half-written file, and its check that the file did not change must catch
    // the tool's write before it writes over the file, or it replaces everything (or everything past the
    // half it saw) with what it computed from that read. Where the tool cut the file shorter between the
    // in-place write's new bytes and its cut to length, that cut extends the file with NUL bytes, and every
    // later writer refuses the file (1001, 1029, 2003: "the file contains a NUL byte"). The cut now only
    // ever shortens the file, but no system call cuts only a longer file: a rewrite that lands between the
    // look at the length and the cut is still extended with zeros, and a read of the tool's during the
    // cut copies the zeros the kernel leaves in the cut page (30 s runs of this scenario under load, two
    // in eight). Both leave a line of nothing but NUL bytes, which every writer now keeps
    // (`nulAmongText`) instead of refusing the whole file.
    it("one lock-using writer beside one in-place rewriting tool, no faults: the base and every acknowledged entry stay", async () => {
        const base = `${fixture("messy").toString("latin1")}\n`;
        const scenario: Scenario = {
            seed: 14_000,
            mount: "bind",
            directory: "writable",
            baseName: "messy.hosts with a final newline",
            base,
            lock: { timeoutMs: 4000, staleMs: 400 },
            durationMs: 3000,
            writers: [{ slot: 0, uid: 0, lanes: 1 }],
            foreign: [{ slot: 0, uid: 0, kind: "rewrite" }],
            faults: [],
            recoveryUid: 0,
        };
        const report = await runSeed({ seed: scenario.seed, durationMs: scenario.durationMs, dist: DIST, scenario });
        for (const line of report.summary) console.log(`      ${line}`);
        for (const violation of report.violations.slice(0, 10)) console.log(`        violation: ${violation}`);
        assert.deepEqual(report.violations.slice(0, 5), [], `${report.violations.length} violation(s)`);
    });
});
