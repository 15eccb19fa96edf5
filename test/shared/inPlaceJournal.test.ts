// Guards in-place writes against crashes at every point: the steps of a journaled write are replayed on
// a buffer and cut short after every step and inside every write (a SIGKILL can end a write(2) part way:
// at any byte of the content, and between pages, where Linux checks for it, within the page-aligned
// journal record), and the recovery of each crash state must give the old content or the new one, the
// new one as soon as the journal record is complete. The recovery is cut short the same way, and
// recovering what it left must give the same answer. Bytes a writer that ignores locks appends after a
// crash are kept. Then the same on real files, through the hosts-file store, which recovers before it
// reads or edits, whoever wrote the record ($TMPDIR plays no part).

import { strict as assert } from "node:assert";
import { appendFileSync, closeSync, openSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HostsFileStore } from "../../provider/hosts/io/hostsFileStore";
import { createEntry } from "../../provider/hosts/logic/entries";
import { writeAll } from "../../provider/shared/files/descriptors";
import { FileChangedError } from "../../provider/shared/files/fileChangedError";
import {
    applyJournalSteps,
    holdsJournal,
    type JournalStep,
    journaledWriteSteps,
    RECORD_ALIGNMENT,
    recoveredContent,
    recoverJournaled,
    recoverySteps,
    writeJournaled,
} from "../../provider/shared/files/inPlaceJournal";
import { makeTempDir, type TempDir } from "../support/projects";
import { useTmpdir } from "../support/system";

/** The file after `steps`, cut short inside step `stop` after `bytes` of it (a whole step when Infinity). */
function replay(file: Buffer, steps: readonly JournalStep[], stop: number, bytes: number): Buffer {
    let state = Buffer.from(file);
    for (const [index, step] of steps.entries()) {
        if (index > stop) break;
        if ("write" in step) {
            const data = index === stop ? step.write.subarray(0, bytes) : step.write;
            if (data.length === 0) continue;
            const end = step.at + data.length;
            if (end > state.length) state = Buffer.concat([state, Buffer.alloc(end - state.length)]);
            Buffer.from(data).copy(state, step.at);
        } else if ("truncate" in step && (index < stop || bytes > 0)) {
            state = state.length > step.truncate ? state.subarray(0, step.truncate) : state;
        } else if ("expect" in step) {
            assert.ok(state.equals(step.expect), "with no foreign writer, the file is what the write expects");
        } else if ("written" in step && (index < stop || bytes > 0)) {
            assert.ok(state.equals(step.written), "with no foreign writer, the content went in as expected");
        }
    }
    return state;
}

/**
 * Every crash point of `steps`: inside each write of content at every byte (or a sample of a long one),
 * inside the write of a record (page-aligned) at every page boundary, and after each step.
 */
function* crashPoints(steps: readonly JournalStep[]): Generator<{ stop: number; bytes: number }> {
    for (const [stop, step] of steps.entries()) {
        if ("write" in step) {
            const length = step.write.length;
            if (isRecord(step)) {
                for (let bytes = 0; bytes < length; bytes += RECORD_ALIGNMENT) yield { stop, bytes };
            } else {
                const every = Math.max(1, Math.floor(length / 97));
                for (let bytes = 0; bytes < length; bytes += every) yield { stop, bytes };
            }
        }
        yield { stop, bytes: Number.POSITIVE_INFINITY };
    }
}

function isRecord(step: { write: Uint8Array; at: number }): boolean {
    return holdsJournal(step.write);
}

/** What recovery makes of a file: itself when it holds no record. */
function recover(file: Buffer): Buffer {
    return recoveredContent(file) ?? file;
}

const line = (n: number) => `10.0.${n >> 8}.${n & 255}\thost-${n}.test # entry ${n}\n`;
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => line(from + i)).join("");

const CASES: Record<string, [string, string]> = {
    grows: [`127.0.0.1\tlocalhost\n# keep me\n${lines(0, 5)}`, `127.0.0.1\tlocalhost\n# keep me\n${lines(0, 40)}`],
    "grows past several pages": [lines(0, 150), lines(0, 400)],
    "shrinks from several pages": [lines(0, 400), lines(0, 150)],
    shrinks: [`127.0.0.1\tlocalhost\n${lines(0, 40)}`, `127.0.0.1\tlocalhost\n${lines(0, 3)}`],
    "keeps its length": ["10.0.0.1\ta.test\n", "10.0.0.2\tb.test\n"],
    "starts empty": ["", lines(0, 3)],
    "ends empty": [lines(0, 3), ""],
    "has no final newline": ["127.0.0.1\tlocalhost", "127.0.0.1\tlocalhost\n10.0.0.9\tdb.internal"],
};

describe("in-place writes journaled in the file", () => {
    for (const [name, [before, after]] of Object.entries(CASES)) {
        const old = Buffer.from(before, "latin1");
        const next = Buffer.from(after, "latin1");
        const steps = journaledWriteSteps(old, next);
        const recordComplete = (stop: number, bytes: number) =>
            stop > 0 || bytes >= (steps[0] as { write: Uint8Array }).write.length;

        it(`starts the record on a page boundary past both contents (a file that ${name})`, () => {
            const record = steps[0] as { write: Uint8Array; at: number };
            assert.equal(record.at % RECORD_ALIGNMENT, 0);
            assert.ok(record.at >= Math.max(old.length, next.length));
        });

        it(`recovers the old or the new content wherever a crash cuts the write short (a file that ${name})`, () => {
            let checked = 0;
            for (const { stop, bytes } of crashPoints(steps)) {
                const crashed = replay(old, steps, stop, bytes);
                const recovered = recover(crashed);
                const expected = recordComplete(stop, bytes) ? next : old;
                assert.ok(recovered.equals(expected), `cut in step ${stop} after ${bytes} bytes`);
                checked++;
            }
            assert.ok(checked > steps.length, `${checked} crash points`);
            assert.ok(replay(old, steps, steps.length, 0).equals(next), "a whole write leaves exactly the new content");
        });

        it(`recovers the same content when the recovery itself is cut short, again and again (a file that ${name})`, () => {
            for (const { stop, bytes } of crashPoints(steps)) {
                const crashed = replay(old, steps, stop, bytes);
                const expected = recover(crashed);
                const repair = recoverySteps(crashed);
                if (!repair) {
                    assert.ok(crashed.equals(expected));
                    continue;
                }
                for (const cut of crashPoints(repair)) {
                    const twice = replay(crashed, repair, cut.stop, cut.bytes);
                    assert.ok(
                        recover(twice).equals(expected),
                        `recovery cut in step ${cut.stop} after ${cut.bytes} bytes`,
                    );
                }
                const repaired = replay(crashed, repair, repair.length, 0);
                assert.ok(repaired.equals(expected), "a whole recovery leaves exactly the recovered content");
                assert.equal(holdsJournal(repaired), false, "and no record");
            }
        });
    }

    it("keeps lines a writer that ignores locks appended after the crash, when the write is redone", () => {
        const old = Buffer.from(`127.0.0.1\tlocalhost\n${lines(0, 2)}`);
        const next = Buffer.from(`127.0.0.1\tlocalhost\n${lines(0, 3)}`);
        const steps = journaledWriteSteps(old, next);
        const crashed = replay(old, steps, 2, 10);
        const foreign = Buffer.from("10.9.9.9\tforeign.test\n");
        assert.ok(recover(Buffer.concat([crashed, foreign])).equals(Buffer.concat([next, foreign])));
    });

    it("redoes a record a tool ignoring locks copied back mid-write: the content the copy was of, plus its line", () => {
        const old = Buffer.from(lines(0, 3));
        const next = Buffer.from(lines(0, 5));
        const steps = journaledWriteSteps(old, next);
        // The tool read the file mid-write and wrote the copy back, with a line of its own at the end.
        const copied = Buffer.concat([replay(old, steps, 1, 0), Buffer.from("10.9.9.9\ttheirs.test\n")]);
        assert.equal(recoveredContent(copied)?.toString(), `${next}10.9.9.9\ttheirs.test\n`);
    });

    it("never touches a file that holds NUL bytes but no record of ours", () => {
        assert.equal(recoveredContent(Buffer.from("10.0.0.1\ta.test\n\0\0garbage\n")), undefined);
        assert.equal(recoveredContent(Buffer.from("10.0.0.1\ta.test\n\0\0\0")), undefined);
    });

    it("writes and recovers through a real descriptor", async () => {
        const temp = await makeTempDir();
        try {
            const file = join(temp.dir, "hosts");
            const old = Buffer.from(lines(0, 4));
            const next = Buffer.from(lines(0, 9));
            writeFileSync(file, old);
            let fd = openSync(file, "r+");
            writeJournaled(fd, old, next, file);
            assert.equal(recoverJournaled(fd, file), false, "a whole write leaves nothing to recover");
            closeSync(fd);
            assert.ok(readFileSync(file).equals(next));

            const steps = journaledWriteSteps(next, old);
            writeFileSync(file, replay(next, steps, 2, 7));
            assert.equal(holdsJournal(readFileSync(file)), true);
            fd = openSync(file, "r+");
            assert.equal(recoverJournaled(fd, file), true);
            closeSync(fd);
            assert.ok(readFileSync(file).equals(old), "the cut write was finished");
        } finally {
            await temp.cleanup();
        }
    });
});

describe("in-place writes beside a writer that ignores the lock", () => {
    let temp: TempDir;
    let file: string;
    const old = Buffer.from(`127.0.0.1\tlocalhost\n${lines(0, 3)}`);
    const next = Buffer.from(`127.0.0.1\tlocalhost\n${lines(0, 4)}`);

    beforeEach(async () => {
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
        writeFileSync(file, old);
    });
    afterEach(() => temp.cleanup());

    /**
     * Runs the write's steps up to `before` (its index), lets `foreign` change the file, then runs the rest:
     * resolves with the error it ended with, if any.
     */
    function interleave(before: number, foreign: (fd: number) => void): unknown {
        const steps = journaledWriteSteps(old, next);
        const fd = openSync(file, "r+");
        try {
            applyJournalSteps(fd, steps.slice(0, before), old, file);
            foreign(fd);
            applyJournalSteps(fd, steps.slice(before), old, file);
            return undefined;
        } catch (error) {
            return error;
        } finally {
            closeSync(fd);
        }
    }
    const expectStep = journaledWriteSteps(old, next).findIndex((step) => "expect" in step);

    /** The file as recovery leaves it. */
    function recovered(): string {
        const current = readFileSync(file);
        return (recoveredContent(current) ?? current).toString("latin1");
    }

    it("gives the write up when they append meanwhile: recovery leaves their line and nothing of ours", () => {
        const error = interleave(expectStep, () => appendFileSync(file, "10.9.9.9\tforeign.test\n"));
        assert.ok(error instanceof FileChangedError, String(error));
        assert.equal(recovered(), `${old.toString("latin1")}10.9.9.9\tforeign.test\n`);
    });

    it("gives the write up when they truncate and rewrite the file meanwhile, touching nothing of theirs", () => {
        const error = interleave(expectStep, () => writeFileSync(file, "10.9.9.9\ttheirs.test\n"));
        assert.ok(error instanceof FileChangedError, String(error));
        assert.equal(readFileSync(file, "latin1"), "10.9.9.9\ttheirs.test\n");
        assert.equal(recovered(), "10.9.9.9\ttheirs.test\n");
    });

    it("gives the write up when they write over the file in place meanwhile: recovery leaves their content", () => {
        const theirs = Buffer.from(`${lines(50, 52)}`);
        const error = interleave(expectStep, (fd) => writeAll(fd, theirs, 0));
        assert.ok(error instanceof FileChangedError, String(error));
        assert.ok(recovered().startsWith(theirs.toString("latin1")));
        assert.equal(holdsJournal(Buffer.from(recovered(), "latin1")), false);
    });

    it("never extends the file with NUL bytes when they cut it shorter just before our cut", () => {
        const cut = journaledWriteSteps(old, next).findIndex((step) => "truncate" in step);
        const error = interleave(cut, () => truncateSync(file, 10));
        assert.equal(error, undefined);
        assert.equal(readFileSync(file, "latin1"), next.subarray(0, 10).toString("latin1"));
    });

    it("finishes the write from its record when they write back a copy taken mid-write, keeping their line", () => {
        const steps = journaledWriteSteps(old, next);
        const written = steps.findIndex((step) => "written" in step);
        // Their copy, taken once the record was in: the old content, the record, and a line of theirs.
        const copy = Buffer.concat([replay(old, steps, 2, 0), Buffer.from("10.9.9.9\ttheirs.test\n")]);
        const error = interleave(written, () => writeFileSync(file, copy));
        assert.equal(error, undefined);
        assert.equal(readFileSync(file, "latin1"), `${next.toString("latin1")}10.9.9.9\ttheirs.test\n`);
    });

    it("gives the write up when they write back a copy taken before it began, so the caller redoes it", () => {
        const written = journaledWriteSteps(old, next).findIndex((step) => "written" in step);
        const error = interleave(written, () => writeFileSync(file, `${old}10.9.9.9\ttheirs.test\n`));
        assert.ok(error instanceof FileChangedError, String(error));
        assert.equal(readFileSync(file, "latin1"), `${old.toString("latin1")}10.9.9.9\ttheirs.test\n`);
    });
});

describe("the hosts-file store and a write a crash cut short", () => {
    let temp: TempDir;
    let file: string;
    let restoreTmpdir: () => void;
    const old = Buffer.from(`127.0.0.1\tlocalhost\n# mine\n${lines(0, 3)}`);
    const next = Buffer.from(`127.0.0.1\tlocalhost\n# mine\n${lines(0, 4)}`);

    beforeEach(async () => {
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
        // Another $TMPDIR than the crashed writer's could have had: the record is in the file, not there.
        restoreTmpdir = useTmpdir(join(temp.dir, "elsewhere"));
    });
    afterEach(async () => {
        restoreTmpdir();
        await temp.cleanup();
    });

    it("finishes it before an edit reads the file", async () => {
        writeFileSync(file, replay(old, journaledWriteSteps(old, next), 2, 30));
        const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
        await store.edit(file, (doc) => {
            createEntry(doc, { address: "10.0.0.99", names: ["after.test"] }, { adopt: false, file });
            return () => undefined;
        });
        assert.equal(readFileSync(file, "latin1"), `${next.toString("latin1")}10.0.0.99\tafter.test\n`);
    });

    it("undoes it before a read, when the crash came before the record was whole", async () => {
        const small = Buffer.from(lines(0, 150));
        const large = Buffer.from(lines(0, 300));
        writeFileSync(file, replay(small, journaledWriteSteps(small, large), 0, RECORD_ALIGNMENT));
        const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
        const count = await store.read(file, (doc) => doc.lineCount);
        assert.equal(count, 150);
        assert.ok(readFileSync(file).equals(small));
    });
});
