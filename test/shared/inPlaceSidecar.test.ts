// Guards in-place writes journaled in a sidecar beside the file (the bind-mounted /etc/hosts case): a
// crash at every point of the write leaves a file the next writer finishes, from every state the write
// passes through (the old content, the new written over it up to any byte, the new one not yet cut),
// keeping what a writer that ignores locks appended since; a file such a writer changed since is theirs,
// and only the sidecar goes; an incomplete sidecar means the file was never touched. Through the store, a
// read or an edit finishes the write first, and nothing of the journal ever enters the hosts file.

import { strict as assert } from "node:assert";
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { HostsFileStore } from "../../provider/hosts/io/hostsFileStore";
import { createEntry } from "../../provider/hosts/logic/entries";
import {
    finishedContent,
    parseSidecar,
    privateSidecarPathFor,
    recoverWithSidecar,
    sidecarPathFor,
    sidecarRecord,
    writeWithSidecar,
} from "../../provider/shared/files/inPlaceSidecar";
import { privateDirectory } from "../../provider/shared/files/privateDirectory";
import { makeTempDir, type TempDir } from "../support/projects";
import { useTmpdir } from "../support/system";

const line = (n: number) => `10.0.${n >> 8}.${n & 255}\thost-${n}.test # entry ${n}\n`;
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => line(from + i)).join("");

/**
 * The states the file passes through while `data` is written over `previous` at 0, then cut: at every
 * byte, or (`pages`) where a write(2) cut short by a signal stops, between pages.
 */
function passingStates(previous: Buffer, data: Buffer, pages = false): Buffer[] {
    const states: Buffer[] = [];
    for (let k = 0; k <= data.length; k += pages ? Math.min(4096, Math.max(1, data.length - k)) : 1) {
        const written = Buffer.from(previous.length > k ? previous : Buffer.alloc(k));
        data.copy(written, 0, 0, k);
        states.push(previous.length > k ? written : written.subarray(0, Math.max(k, previous.length)));
    }
    states.push(data);
    return states;
}

const CASES: Record<string, [string, string]> = {
    "a long file grown": [lines(0, 300), lines(0, 310)],
    "an entry appended": [`127.0.0.1\tlocalhost\n${lines(0, 4)}`, `127.0.0.1\tlocalhost\n${lines(0, 5)}`],
    "an entry removed from the middle": [
        `127.0.0.1\tlocalhost\n${lines(0, 6)}`,
        `127.0.0.1\tlocalhost\n${lines(0, 2)}${lines(3, 6)}`,
    ],
    "an entry rewritten in place": [lines(0, 3), lines(0, 3).replace("10.0.0.1\t", "10.0.0.9\t")],
    "a file emptied": [lines(0, 3), ""],
};

describe("in-place writes journaled in a sidecar", () => {
    for (const [name, [before, after]] of Object.entries(CASES)) {
        const previous = Buffer.from(before);
        const data = Buffer.from(after);

        it(`finishes the write from every state it passes through (${name})`, () => {
            for (const state of passingStates(previous, data)) {
                assert.ok(finishedContent(state, previous, data)?.equals(data), JSON.stringify(state.toString()));
            }
        });

        it(`keeps what a writer that ignores locks appended after the crash (${name})`, () => {
            const appended = Buffer.from("10.0.0.9\tappended.test # by another tool\n");
            for (const state of passingStates(previous, data, true)) {
                const finished = finishedContent(Buffer.concat([state, appended]), previous, data);
                assert.ok(finished?.equals(Buffer.concat([data, appended])), JSON.stringify(state.toString()));
            }
        });
    }

    it("leaves a file that a writer ignoring locks rewrote since the crash to that writer", () => {
        const previous = Buffer.from(`127.0.0.1\tlocalhost\n${lines(0, 4)}`);
        const data = Buffer.from(`127.0.0.1\tlocalhost\n${lines(0, 5)}`);
        const theirs = Buffer.from(`127.0.0.1\tlocalhost\n${lines(0, 2)}10.9.9.9\ttheirs.test\n`);
        assert.equal(finishedContent(theirs, previous, data), undefined);
    });

    it("reads a sidecar only when it is whole: cut anywhere, it says the file was never touched", () => {
        const record = sidecarRecord(Buffer.from(lines(0, 3)), Buffer.from(lines(0, 4)));
        assert.ok(parseSidecar(record));
        for (let cut = 0; cut < record.length; cut++) assert.equal(parseSidecar(record.subarray(0, cut)), undefined);
        const flipped = Buffer.from(record);
        flipped[120] = (flipped[120] as number) ^ 1;
        assert.equal(parseSidecar(flipped), undefined, "a damaged sidecar is not trusted");
    });

    describe("on real files", () => {
        let temp: TempDir;
        let file: string;
        const previous = Buffer.from(`127.0.0.1\tlocalhost\n# mine\n${lines(0, 3)}`);
        const data = Buffer.from(`127.0.0.1\tlocalhost\n# mine\n${lines(0, 4)}`);

        beforeEach(async () => {
            temp = await makeTempDir();
            file = join(temp.dir, "hosts");
        });
        afterEach(() => temp.cleanup());

        /** What a crash after the sidecar was flushed and `state` was on disk left behind. */
        function crashed(state: Buffer, sidecar: Buffer = sidecarRecord(previous, data)): void {
            writeFileSync(file, state);
            writeFileSync(sidecarPathFor(file), sidecar);
        }

        function recover(): boolean {
            const fd = openSync(file, "r+");
            try {
                return recoverWithSidecar(fd, file);
            } finally {
                closeSync(fd);
            }
        }

        it("writes the new content and leaves no sidecar", () => {
            writeFileSync(file, previous);
            const fd = openSync(file, "r+");
            try {
                writeWithSidecar(fd, previous, data, file);
            } finally {
                closeSync(fd);
            }
            assert.ok(readFileSync(file).equals(data));
            assert.equal(existsSync(sidecarPathFor(file)), false);
        });

        it("finishes a write a crash cut short, then removes the sidecar", () => {
            crashed(Buffer.concat([data.subarray(0, 40), previous.subarray(40)]));
            assert.equal(recover(), true);
            assert.ok(readFileSync(file).equals(data));
            assert.equal(existsSync(sidecarPathFor(file)), false);
        });

        it("touches nothing when the sidecar is incomplete (the crash came before the file was touched)", () => {
            crashed(previous, sidecarRecord(previous, data).subarray(0, 100));
            assert.equal(recover(), true);
            assert.ok(readFileSync(file).equals(previous));
            assert.equal(existsSync(sidecarPathFor(file)), false);
        });

        it("never applies a sidecar of another $TMPDIR's writer over a later write (a stale backup)", async () => {
            // A writer with $TMPDIR a (whose directory it may not write) crashed mid-write: its sidecar is
            // in its private directory, where a writer with $TMPDIR b does not look.
            const restore = useTmpdir(join(temp.dir, "tmp-a"));
            try {
                await mkdir(join(temp.dir, "tmp-a"));
                writeFileSync(privateSidecarPathFor(file, privateDirectory()), sidecarRecord(previous, data));
            } finally {
                restore();
            }
            writeFileSync(file, Buffer.concat([data.subarray(0, 40), previous.subarray(40)]));
            // The writer with $TMPDIR b writes its entry over what it found (the file moves on).
            const restoreB = useTmpdir(join(temp.dir, "tmp-b"));
            try {
                await new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } }).edit(file, (doc) => {
                    createEntry(doc, { address: "10.0.0.77", names: ["later.test"] }, { adopt: false, file });
                    return () => undefined;
                });
            } finally {
                restoreB();
            }
            const later = readFileSync(file, "latin1");
            assert.match(later, /10\.0\.0\.77\tlater\.test\n$/);
            // The first writer's next run finds its sidecar and must not put its old write back over the entry.
            const restoreA = useTmpdir(join(temp.dir, "tmp-a"));
            try {
                await new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } }).read(file, () => undefined);
                assert.equal(
                    existsSync(privateSidecarPathFor(file, privateDirectory())),
                    false,
                    "the stale sidecar went",
                );
            } finally {
                restoreA();
            }
            assert.equal(readFileSync(file, "latin1"), later, "the later write stands");
        });

        it("finishes it before the store reads or edits the file", async () => {
            crashed(Buffer.concat([data.subarray(0, 40), previous.subarray(40)]));
            const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
            assert.equal(await store.read(file, (doc) => doc.lineCount), 6, "a read finished the write first");
            await store.edit(file, (doc) => {
                createEntry(doc, { address: "10.0.0.99", names: ["after.test"] }, { adopt: false, file });
                return () => undefined;
            });
            assert.equal(readFileSync(file, "latin1"), `${data.toString("latin1")}10.0.0.99\tafter.test\n`);
            assert.equal(existsSync(sidecarPathFor(file)), false);
        });
    });
});
