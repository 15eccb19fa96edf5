// Guards the journal of an in-place write that grows the file other than by new lines at its end (a line
// deleted and a longer one created, in one batch): in place up to the old end, the rest appended, and
// foreign lines that landed between (a tool appending without our lock) journaled in the sidecar, then
// moved past ours. A crash at every step leaves a file the next writer finishes to our content followed
// by the foreign lines, whole (issue 18: the soak's torn foreign line, ".250.0.97\tforeign-a0-97.test").

import { strict as assert } from "node:assert";
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { recoverWithSidecar, sidecarPathFor } from "../../../provider/shared/files/inPlaceSidecar";
import {
    finishedContent,
    movedBytes,
    parseSidecar,
    type SidecarRecord,
    sidecarBytes,
} from "../../../provider/shared/files/sidecarRecord";
import { makeTempDir, type TempDir } from "../../support/projects";

const line = (n: number) => `10.0.${n >> 8}.${n & 255}\thost-${n}.test # entry ${n}\n`;
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => line(from + i)).join("");
const FOREIGN = Buffer.from("10.250.0.97\tforeign-a0-97.test\n");
const LATER = Buffer.from("10.250.0.98\tforeign-a0-98.test\n");

/** Line 5 deleted, two lines created: longer, and not the old content with lines after it. */
const CASES: Record<string, SidecarRecord> = {
    "a short file": record(lines(0, 8), `${lines(0, 5)}${lines(6, 8)}${lines(1000, 1002)}`),
    "a file of several pages": record(lines(0, 300), `${lines(0, 5)}${lines(6, 300)}${lines(1000, 1002)}`),
};

function record(before: string, after: string): SidecarRecord {
    return { previous: Buffer.from(before), data: Buffer.from(after), previousSignature: "1:2:3:4" };
}

/** The file once the write put its content in place up to the old end, with `between` appended after. */
function inPlace({ previous, data }: SidecarRecord, between: Buffer = Buffer.alloc(0)): Buffer {
    return Buffer.concat([data.subarray(0, previous.length), between]);
}

/** ... and once it appended the rest, after `between`. */
function appended(rec: SidecarRecord, between: Buffer): Buffer {
    return Buffer.concat([inPlace(rec, between), rec.data.subarray(rec.previous.length)]);
}

/** The record once `between` was journaled, to be moved past our appended part. */
function withMoved(rec: SidecarRecord, between: Buffer): SidecarRecord {
    return { ...rec, moved: { at: rec.previous.length, bytes: between } };
}

describe("the journal of an in-place write that grows the file", () => {
    for (const [name, rec] of Object.entries(CASES)) {
        const done = Buffer.concat([rec.data, FOREIGN]);

        it(`finishes to our content then the foreign line from each step (${name})`, () => {
            assert.ok(finishedContent(inPlace(rec), "touched", rec)?.equals(rec.data), "in place, nothing appended");
            assert.ok(finishedContent(inPlace(rec, FOREIGN), "touched", rec)?.equals(done), "in place, then theirs");
            assert.ok(finishedContent(appended(rec, FOREIGN), "touched", rec)?.equals(done), "ours after theirs");
            const later = Buffer.concat([appended(rec, FOREIGN), LATER]);
            assert.ok(finishedContent(later, "touched", rec)?.equals(Buffer.concat([done, LATER])), "and more");
            const ours = Buffer.concat([rec.data, FOREIGN]);
            assert.ok(finishedContent(ours, "touched", rec)?.equals(done), "theirs after ours: nothing to move");
        });

        it(`finishes moving the foreign line past ours from every byte it can stop at (${name})`, () => {
            const moving = withMoved(rec, FOREIGN);
            const before = appended(rec, FOREIGN);
            for (let cut = rec.previous.length; cut <= done.length; cut++) {
                const state = Buffer.concat([done.subarray(0, cut), before.subarray(cut)]);
                assert.ok(finishedContent(state, "touched", moving)?.equals(done), `cut at ${cut}`);
                if (cut % 4096 !== 0 && cut !== rec.previous.length && cut !== done.length) continue;
                // Where a write(2) stops, between pages: another line may have been appended since.
                const more = Buffer.concat([state, LATER]);
                const finished = finishedContent(more, "touched", moving);
                assert.ok(finished?.equals(Buffer.concat([done, LATER])), `cut at ${cut}, then appended`);
            }
        });
    }

    it("reads the journal of the moved lines only when it is whole: cut anywhere, the move had not begun", () => {
        const rec = CASES["a short file"] as SidecarRecord;
        const first = sidecarBytes(rec);
        const block = movedBytes(rec.previous.length, FOREIGN);
        assert.deepEqual(parseSidecar(Buffer.concat([first, block])), withMoved(rec, FOREIGN));
        for (let cut = 0; cut < block.length; cut++) {
            assert.deepEqual(parseSidecar(Buffer.concat([first, block.subarray(0, cut)])), rec, `cut at ${cut}`);
        }
    });
});

describe("recovering an in-place write that grows the file, on real files", () => {
    let temp: TempDir;
    let file: string;
    const rec = CASES["a short file"] as SidecarRecord;

    beforeEach(async () => {
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
    });
    afterEach(() => temp.cleanup());

    function recoverFrom(state: Buffer, sidecar: Buffer): Buffer {
        writeFileSync(file, state);
        writeFileSync(sidecarPathFor(file), sidecar);
        const fd = openSync(file, "r+");
        try {
            assert.equal(recoverWithSidecar(fd, file), true);
        } finally {
            closeSync(fd);
        }
        assert.equal(existsSync(sidecarPathFor(file)), false, "the sidecar is removed");
        return readFileSync(file);
    }

    const done = Buffer.concat([rec.data, FOREIGN]);
    const cases: [string, Buffer, Buffer][] = [
        ["in place, with a foreign line after it", inPlace(rec, FOREIGN), sidecarBytes(rec)],
        ["appended after a foreign line, not yet journaled", appended(rec, FOREIGN), sidecarBytes(rec)],
        [
            "journaled, not yet moved",
            appended(rec, FOREIGN),
            Buffer.concat([sidecarBytes(rec), movedBytes(rec.previous.length, FOREIGN)]),
        ],
        [
            "half moved",
            Buffer.concat([
                done.subarray(0, rec.previous.length + 20),
                appended(rec, FOREIGN).subarray(rec.previous.length + 20),
            ]),
            Buffer.concat([sidecarBytes(rec), movedBytes(rec.previous.length, FOREIGN)]),
        ],
    ];
    for (const [name, state, sidecar] of cases) {
        it(`finishes a write a crash cut short: ${name}`, () => {
            assert.equal(recoverFrom(state, sidecar).toString("latin1"), done.toString("latin1"));
        });
    }

    it("finishes a write cut short in place between pages, appending the rest after what another tool appended", () => {
        const long = CASES["a file of several pages"] as SidecarRecord;
        const state = Buffer.concat([long.data.subarray(0, 4096), long.previous.subarray(4096), FOREIGN]);
        const finished = recoverFrom(state, sidecarBytes(long));
        assert.equal(finished.toString("latin1"), Buffer.concat([long.data, FOREIGN]).toString("latin1"));
    });
});
