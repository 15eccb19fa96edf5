// Guards the multi-writer suite's own checks (invariants.ts) on hand-made logs: each excuse holds only
// when a logged rewrite explains the finding, and each check still fails without it.

import { strict as assert } from "node:assert";
import type { RewriteRecord } from "./foreignWriter";
import { checkFinalFile, type ForeignWriterLog, type LockWriterLog } from "./invariants";
import { entryLine, foreignLine } from "./lines";

const BASE = "127.0.0.1\tlocalhost\n";

/** A writer's log of lines `event n time [detail...]`, slot 0, process 0. */
function writer(...lines: string[]): LockWriterLog {
    return { slot: 0, gen: 0, lines };
}

/** A rewriting tool's log: one rewrite that read at `readAt`, wrote at `wroteAt`, and wrote `output`. */
function rewriter(readAt: number, wroteAt: number, output: string): ForeignWriterLog {
    const record: RewriteRecord = { readAt: String(readAt), wroteAt: String(wroteAt), method: "rename", output };
    return { slot: 0, kind: "rewrite", lines: [`r ${JSON.stringify(record)}`] };
}

describe("the multi-writer suite's checks", () => {
    describe("a delete that finds its line already gone", () => {
        const created = ["b+ 1 100", "a+ 1 200"];

        it("is a violation when nothing explains it", () => {
            const { violations } = checkFinalFile(BASE, BASE, [writer(...created, "b- 1 300", "a- 1 400 0")], []);
            assert.deepEqual(violations, [
                "entry w0-0-1: acknowledged as created, but already gone when its writer deleted it",
            ]);
        });

        it("is excused when an earlier attempt of its batch was undone and a rewrite read while it ran", () => {
            const log = writer(...created, "b- 1 300", "a- 1 400 0 undone");
            const { violations, counts } = checkFinalFile(BASE, BASE, [log], [rewriter(350, 500, BASE)]);
            assert.deepEqual(violations, []);
            assert.equal(counts.excused, 1);
        });

        it("is not excused by a rewrite that read before the deletion began", () => {
            const log = writer(...created, "b- 1 300", "a- 1 400 0 undone");
            const { violations } = checkFinalFile(BASE, BASE, [log], [rewriter(250, 500, BASE)]);
            assert.equal(violations.length, 1);
        });
    });

    it("counts a create that conflicts with a line of its own, never repeated, name as a violation", () => {
        const log = writer("b+ 1 100", "f+ 1 200 EntryConflictError:-");
        const { violations } = checkFinalFile(`${BASE}${entryLine(0, 0, 1)}\n`, BASE, [log], []);
        assert.deepEqual(violations, [
            "entry w0-0-1: its create failed on a line of its own name, which only it wrote",
        ]);
    });

    describe("a line of NUL bytes followed by a whole line", () => {
        const appended: ForeignWriterLog = { slot: 0, kind: "append", lines: ["b 5 100", "w 5 110"] };
        const glued = `\0\0\0${foreignLine("append", 0, 5)}`;

        it("is excused when a rewrite wrote NUL bytes (it copied an in-place write's cut)", () => {
            const { violations } = checkFinalFile(
                `${BASE}${glued}\n`,
                BASE,
                [],
                [appended, rewriter(50, 90, `${BASE}\0\0\0`)],
            );
            assert.deepEqual(violations, []);
        });

        it("is a torn line when no rewrite wrote NUL bytes", () => {
            const { violations } = checkFinalFile(`${BASE}${glued}\n`, BASE, [], [appended, rewriter(50, 90, BASE)]);
            assert.deepEqual(violations, [`a torn line (no writer wrote it whole): ${JSON.stringify(glued)}`]);
        });

        it("is a torn line when what follows the NUL bytes is not a whole line some writer wrote", () => {
            const broken = "\0\0\x0010.250.0.5\tforeign-a0";
            const { violations } = checkFinalFile(`${BASE}${broken}\n`, BASE, [], [appended, rewriter(50, 90, "\0")]);
            assert.deepEqual(violations, [`a torn line (no writer wrote it whole): ${JSON.stringify(broken)}`]);
        });
    });
});
