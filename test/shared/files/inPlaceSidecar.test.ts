// Guards in-place writes journaled in a sidecar: a crash at every point of the write leaves a file the next
// writer finishes, from every state the write passes through, keeping what a writer that ignores locks
// appended since; a file such a writer changed since is theirs; the old content counts only while the file
// is still the very file the write read, so a leftover sidecar is never applied over a later write (a line
// created, then deleted, is not created again); an incomplete sidecar means the file was never touched.
// The sidecar is beside the file, or, where its directory may not be written, in the shared directory,
// where every writer finds it and only sidecars of users who could have written the file are trusted.
// Through the store, a read or an edit finishes the write first.

import { strict as assert } from "node:assert";
import {
    appendFileSync,
    chmodSync,
    chownSync,
    closeSync,
    existsSync,
    openSync,
    readFileSync,
    writeFileSync,
} from "node:fs";
import { chmod } from "node:fs/promises";
import { join } from "node:path";
import { HostsFileStore } from "../../../provider/hosts/io/hostsFileStore";
import { createEntry } from "../../../provider/hosts/logic/entries";
import {
    recoverWithSidecar,
    SHARED_SIDECAR_DIRECTORY,
    sidecarNameFor,
    sidecarPathFor,
    writeWithSidecar,
} from "../../../provider/shared/files/inPlaceSidecar";
import {
    finishedContent,
    parseSidecar,
    type SidecarRecord,
    sidecarBytes,
} from "../../../provider/shared/files/sidecarRecord";
import { fileSignatureSync } from "../../../provider/shared/files/signature";
import { makeTempDir, REPO_ROOT, type TempDir } from "../../support/projects";
import { isRoot, NOBODY, runUnprivileged, skipBecause } from "../../support/system";

const line = (n: number) => `10.0.${n >> 8}.${n & 255}\thost-${n}.test # entry ${n}\n`;
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => line(from + i)).join("");
const READ_SIGNATURE = "1:2:3:4";

function recordOf(before: string | Buffer, after: string | Buffer): SidecarRecord {
    return { previous: Buffer.from(before), data: Buffer.from(after), previousSignature: READ_SIGNATURE };
}

/**
 * The states the file passes through while `data` is written over `previous` at 0, then cut: at every
 * byte, or (`pages`) where a write(2) cut short by a signal stops, between pages.
 */
function passingStates({ previous, data }: SidecarRecord, pages = false): Buffer[] {
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

/** Adds nobody.test to `file` through the store, in a process of user nobody; fails when its write fails. */
async function createAsNobody(file: string, cwd: string): Promise<void> {
    const dist = (path: string) => JSON.stringify(join(REPO_ROOT, "dist", path));
    await runUnprivileged(
        `const { HostsFileStore } = require(${dist("hosts/io/hostsFileStore.js")});
        const { createEntry } = require(${dist("hosts/logic/entries.js")});
        const file = ${JSON.stringify(file)};
        new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60000 } }).edit(file, (doc) => {
            createEntry(doc, { address: "10.0.0.99", names: ["nobody.test"] }, { adopt: false, file });
            return () => undefined;
        }).catch((error) => { console.error(error.message); process.exitCode = 1; });`,
        cwd,
    );
}

describe("the journal of an in-place write", () => {
    for (const [name, [before, after]] of Object.entries(CASES)) {
        const record = recordOf(before, after);

        it(`finishes the write from every state it passes through (${name})`, () => {
            for (const state of passingStates(record)) {
                const untouched = state.equals(record.previous) ? READ_SIGNATURE : "touched";
                const finished = finishedContent(state, untouched, record);
                assert.ok(finished?.equals(record.data), JSON.stringify(state.toString()));
            }
        });

        it(`keeps what a writer that ignores locks appended after the crash (${name})`, () => {
            const appended = Buffer.from("10.0.0.9\tappended.test # by another tool\n");
            for (const state of passingStates(record, true)) {
                if (state.equals(record.previous)) continue; // an append to the untouched file: see below
                const finished = finishedContent(Buffer.concat([state, appended]), "touched", record);
                assert.ok(finished?.equals(Buffer.concat([record.data, appended])), JSON.stringify(state.toString()));
            }
        });
    }

    it("does not write the content again over a file that holds the old content by a later write", () => {
        // A line created (this write, cut short after it completed... or not) then deleted by a later write:
        // the file holds the old bytes again, but it is not the file the write read.
        const record = recordOf(lines(0, 3), lines(0, 4));
        assert.equal(finishedContent(record.previous, "later", record), undefined);
        assert.ok(finishedContent(record.previous, READ_SIGNATURE, record)?.equals(record.data));
    });

    it("leaves a file that a writer ignoring locks rewrote since the crash to that writer", () => {
        const record = recordOf(`127.0.0.1\tlocalhost\n${lines(0, 4)}`, `127.0.0.1\tlocalhost\n${lines(0, 5)}`);
        const theirs = Buffer.from(`127.0.0.1\tlocalhost\n${lines(0, 2)}10.9.9.9\ttheirs.test\n`);
        assert.equal(finishedContent(theirs, "touched", record), undefined);
    });

    it("reads a sidecar only when it is whole: cut anywhere, it says the file was never touched", () => {
        const bytes = sidecarBytes(recordOf(lines(0, 3), lines(0, 4)));
        assert.deepEqual(parseSidecar(bytes), recordOf(lines(0, 3), lines(0, 4)));
        for (let cut = 0; cut < bytes.length; cut++) assert.equal(parseSidecar(bytes.subarray(0, cut)), undefined);
        const flipped = Buffer.from(bytes);
        flipped[150] = (flipped[150] as number) ^ 1;
        assert.equal(parseSidecar(flipped), undefined, "a damaged sidecar is not trusted");
    });
});

describe("in-place writes with a sidecar, on real files", () => {
    let temp: TempDir;
    let file: string;
    const previous = Buffer.from(`127.0.0.1\tlocalhost\n# mine\n${lines(0, 3)}`);
    const data = Buffer.from(`127.0.0.1\tlocalhost\n# mine\n${lines(0, 4)}`);
    // Cut part way through the new line: a state only this write passes through.
    const torn = data.subarray(0, previous.length + 10);

    beforeEach(async () => {
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
    });
    afterEach(() => temp.cleanup());

    /** What a crash left: `state` in the file, and the sidecar at `path` (beside the file by default). */
    function crashed(state: Buffer, path = sidecarPathFor(file), bytes?: Buffer): void {
        writeFileSync(file, state);
        writeFileSync(path, bytes ?? sidecarBytes({ previous, data, previousSignature: "read" }));
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

    it("keeps a line another tool was appending while the write read the file back, whole", () => {
        // A shrinking write reads the file back to keep what was appended after its content, then cuts
        // the file to length. An append that crosses a page is seen half done by a read in between; kept
        // half, the cut took its end off, and the next append followed on its line (multi-writer suite).
        const shrunk = Buffer.from(`127.0.0.1\tlocalhost\n# mine\n${lines(0, 2)}`);
        writeFileSync(file, previous);
        const fd = openSync(file, "r+");
        const fs = require("node:fs") as typeof import("node:fs");
        const { fsyncSync, readSync } = fs;
        let stage = 0;
        (fs as { fsyncSync: unknown }).fsyncSync = (descriptor: number) => {
            fsyncSync(descriptor);
            if (descriptor === fd && stage === 0) {
                stage = 1;
                appendFileSync(file, "10.0.0.9\tappended.te"); // the append, half done
            }
        };
        (fs as { readSync: unknown }).readSync = (...args: Parameters<typeof readSync>) => {
            const read = readSync(...args);
            if (args[0] === fd && stage === 1 && read === 0) {
                stage = 2;
                appendFileSync(file, "st\n"); // and its end, once a read of the whole file is done
            }
            return read;
        };
        try {
            writeWithSidecar(fd, previous, shrunk, file);
        } finally {
            (fs as { fsyncSync: unknown }).fsyncSync = fsyncSync;
            (fs as { readSync: unknown }).readSync = readSync;
            closeSync(fd);
        }
        assert.equal(stage, 2, "the append landed in two parts around a read");
        assert.equal(readFileSync(file, "latin1"), `${shrunk.toString("latin1")}10.0.0.9\tappended.test\n`);
    });

    it("writes nothing while another sidecar is beside the file: a write under way (its writer lost the lock while stopped)", () => {
        writeFileSync(file, previous);
        writeFileSync(sidecarPathFor(file), sidecarBytes({ previous, data: torn, previousSignature: "other" }));
        const fd = openSync(file, "r+");
        try {
            assert.throws(() => writeWithSidecar(fd, previous, data, file), { code: "EEXIST" });
        } finally {
            closeSync(fd);
        }
        assert.ok(readFileSync(file).equals(previous));
    });

    it("finishes a write a crash cut short, then removes the sidecar", () => {
        crashed(torn);
        assert.equal(recover(), true);
        assert.ok(readFileSync(file).equals(data));
        assert.equal(existsSync(sidecarPathFor(file)), false);
    });

    it("touches nothing when the sidecar is incomplete (the crash came before the file was touched)", () => {
        crashed(
            previous,
            sidecarPathFor(file),
            sidecarBytes({ previous, data, previousSignature: "x" }).subarray(0, 100),
        );
        assert.equal(recover(), true);
        assert.ok(readFileSync(file).equals(previous));
        assert.equal(existsSync(sidecarPathFor(file)), false);
    });

    it("finishes a write cut short before it touched the file, while the file is still the one it read", () => {
        writeFileSync(file, previous);
        const fd = openSync(file, "r");
        const read = fileSignatureSync(fd);
        closeSync(fd);
        writeFileSync(sidecarPathFor(file), sidecarBytes({ previous, data, previousSignature: read }));
        recover();
        assert.ok(readFileSync(file).equals(data));
    });

    it("finishes it before the store reads or edits the file", async () => {
        crashed(torn);
        const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
        assert.equal(await store.read(file, (doc) => doc.lineCount), 6, "a read finished the write first");
        await store.edit(file, (doc) => {
            createEntry(doc, { address: "10.0.0.99", names: ["after.test"] }, { adopt: false, file });
            return () => undefined;
        });
        assert.equal(readFileSync(file, "latin1"), `${data.toString("latin1")}10.0.0.99\tafter.test\n`);
        assert.equal(existsSync(sidecarPathFor(file)), false);
    });

    describe("where the directory may not be written (the shared directory)", () => {
        beforeEach(async function () {
            if (!isRoot)
                skipBecause(this, "needs root to run writers as users who may write the file but not its directory");
            await chmod(temp.dir, 0o755);
        });

        it("journals in the shared directory, and leaves nothing there or beside the file", async () => {
            writeFileSync(file, previous);
            await chmod(file, 0o666);
            await createAsNobody(file, temp.dir);
            assert.equal(readFileSync(file, "latin1"), `${previous.toString("latin1")}10.0.0.99\tnobody.test\n`);
            assert.equal(existsSync(join(SHARED_SIDECAR_DIRECTORY, sidecarNameFor(file, NOBODY.uid))), false);
            assert.equal(existsSync(sidecarPathFor(file)), false);
        });

        it("lets another user write after a root writer's crash left a sidecar beside the file that only root may remove", async () => {
            // Root's in-place write (a bind-mounted file, say) was cut short: its sidecar stays beside the
            // file, in a directory only root may write. nobody finishes that write, cannot remove the
            // sidecar, and still writes, journaling elsewhere (the multi-writer suite found this: EEXIST).
            crashed(torn);
            await chmod(file, 0o666);
            await createAsNobody(file, temp.dir);
            assert.equal(readFileSync(file, "latin1"), `${data.toString("latin1")}10.0.0.99\tnobody.test\n`);
            assert.equal(existsSync(join(SHARED_SIDECAR_DIRECTORY, sidecarNameFor(file, NOBODY.uid))), false);
            assert.equal(existsSync(sidecarPathFor(file)), true, "root's sidecar: nobody may not remove it");
            // Root's next look removes it, never applying it over the later write.
            const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
            assert.equal(await store.read(file, (doc) => doc.lineCount), 7);
            assert.equal(existsSync(sidecarPathFor(file)), false);
            assert.equal(readFileSync(file, "latin1"), `${data.toString("latin1")}10.0.0.99\tnobody.test\n`);
        });

        it("lets another user finish root's cut-short write that grew a line, past a line a tool appended meanwhile", async () => {
            // Root rewrote a line longer, in place up to the old end, then appended the rest; a tool
            // appended a line in between, and root was killed before moving that line past its own.
            // Finishing moves it, journaling the move first. Root's sidecar, beside the file in a
            // directory only root may write, is not nobody's to append to: nobody journals elsewhere.
            const grown = Buffer.from(
                previous.toString("latin1").replace("host-1.test", "host-1-renamed.test"),
                "latin1",
            );
            const appended = "10.0.0.9\tappended.test # by another tool\n";
            writeFileSync(
                file,
                Buffer.concat([
                    grown.subarray(0, previous.length),
                    Buffer.from(appended),
                    grown.subarray(previous.length),
                ]),
            );
            writeFileSync(sidecarPathFor(file), sidecarBytes({ previous, data: grown, previousSignature: "read" }));
            await chmod(file, 0o666);
            await createAsNobody(file, temp.dir);
            assert.equal(
                readFileSync(file, "latin1"),
                `${grown.toString("latin1")}${appended}10.0.0.99\tnobody.test\n`,
                "root's write finished, the tool's line kept after it, then nobody's",
            );
            assert.equal(existsSync(join(SHARED_SIDECAR_DIRECTORY, sidecarNameFor(file, NOBODY.uid))), false);
        });

        it("lets a writer of another user finish a write a crash cut short there", () => {
            const sidecar = join(SHARED_SIDECAR_DIRECTORY, sidecarNameFor(file, NOBODY.uid));
            crashed(torn, sidecar);
            chownSync(sidecar, NOBODY.uid, NOBODY.gid);
            chmodSync(file, 0o644);
            // The file's owner is root and only root may write it: nobody's sidecar is not to be trusted.
            assert.equal(recover(), false, "an untrusted sidecar is not acted on");
            assert.ok(readFileSync(file).equals(torn));
            // Writable by all, nobody could have written the file anyway: trusted, and finished.
            chmodSync(file, 0o666);
            assert.equal(recover(), true);
            assert.ok(readFileSync(file).equals(data));
        });
    });
});
