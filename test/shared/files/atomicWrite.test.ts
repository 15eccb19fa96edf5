// Guards crash-safe file replacement: content written, mode and owner kept, no temporary left behind,
// and the in-place fallback (journaled in the file) where a rename is impossible or would lose something:
// a bind-mounted file (EBUSY, as Docker's /etc/hosts), a directory we may not write, an owner we may not
// give a new file, ACLs and extended attributes. A file without write permission is refused as
// `echo >>` refuses it, and a guard that fails just before the replacement writes nothing.

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { appendFileSync, closeSync, openSync, readdirSync, readFileSync, statSync, writeSync } from "node:fs";
import { chmod, chown, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { signatureOf, writeFileAtomic, writeFileAtomicSync } from "../../../provider/shared/files/atomicWrite";
import { FileChangedError } from "../../../provider/shared/files/fileChangedError";
import { LockLostError } from "../../../provider/shared/files/lockLostError";
import { sweepTemporariesSync } from "../../../provider/shared/files/temporaryFiles";
import { makeTempDir, REPO_ROOT, type TempDir } from "../../support/projects";
import {
    bindMount,
    canBindMount,
    deadPid,
    hasTool,
    isRoot,
    NOBODY,
    runUnprivileged,
    skipBecause,
} from "../../support/system";

const ATOMIC_WRITE = JSON.stringify(join(REPO_ROOT, "dist", "shared", "files", "atomicWrite.js"));

describe("atomic write", () => {
    let temp: TempDir;
    let target: string;

    beforeEach(async () => {
        temp = await makeTempDir();
        target = join(temp.dir, "hosts");
        await writeFile(target, "old\n");
    });
    afterEach(() => temp.cleanup());

    /**
     * Runs `work` with the target bind-mounted over a file `source` holding "old\n" (renames over it fail
     * with EBUSY, as over Docker's /etc/hosts), and unmounts it after; skips without root and mount(8).
     */
    async function onBindMount(context: Mocha.Context, work: (source: string) => Promise<void>): Promise<void> {
        if (!canBindMount()) skipBecause(context, "needs root with mount(8) to bind-mount a file");
        const source = join(temp.dir, "source");
        await writeFile(source, "old\n");
        const unmount = bindMount(source, target);
        try {
            await work(source);
        } finally {
            unmount();
        }
    }

    /** Writes `content` to the target from a process of an unprivileged user; resolves with the method used. */
    function writeUnprivileged(content: string): Promise<string> {
        const call = `require(${ATOMIC_WRITE}).writeFileAtomicSync(${JSON.stringify(target)}, Buffer.from(${JSON.stringify(content)}))`;
        return runUnprivileged(`process.stdout.write(${call}.method)`, temp.dir);
    }

    it("replaces the content by rename and leaves no temporary file", async () => {
        const outcome = writeFileAtomicSync(target, Buffer.from("new\n"));
        assert.equal(outcome.method, "rename");
        assert.equal(await readFile(target, "utf8"), "new\n");
        assert.deepEqual(await readdir(temp.dir), ["hosts"]);
    });

    it("writes content given as stretches whole and in order, more of them than one writev takes", async () => {
        // 3,000 stretches, some empty, over Linux's 1,024 buffers per call: every call's end is a stretch's.
        const stretches = Array.from({ length: 3000 }, (_, i) => Buffer.from(i % 7 === 0 ? "" : `line ${i}\n`));
        const outcome = writeFileAtomicSync(target, stretches);
        assert.equal(outcome.method, "rename");
        assert.deepEqual(await readFile(target), Buffer.concat(stretches));
    });

    it("writes content given as stretches in place, joined, where the file cannot be replaced", async function () {
        await onBindMount(this, async (source) => {
            const outcome = writeFileAtomicSync(target, [Buffer.from("first\n"), Buffer.from("second\n")]);
            assert.equal(outcome.method, "in-place");
            assert.equal(await readFile(source, "utf8"), "first\nsecond\n");
        });
    });

    it("refuses to replace a file that another writer changed since it was read, writing nothing", async () => {
        const read = signatureOf(statSync(target, { bigint: true }));
        appendFileSync(target, "10.0.0.1 foreign.test\n");
        assert.throws(
            () => writeFileAtomicSync(target, Buffer.from("ours\n"), { unchangedSince: read }),
            (error: unknown) => error instanceof FileChangedError && !error.shown,
            "a FileChangedError that says nothing of ours was ever in place",
        );
        assert.equal(await readFile(target, "utf8"), "old\n10.0.0.1 foreign.test\n");
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "the temporary file was removed");
        const current = signatureOf(statSync(target, { bigint: true }));
        assert.equal(writeFileAtomicSync(target, Buffer.from("ours\n"), { unchangedSince: current }).method, "rename");
        assert.equal(await readFile(target, "utf8"), "ours\n");
    });

    it("refuses to create a file that another writer created since it was found missing", async () => {
        const fresh = join(temp.dir, "fresh");
        await writeFile(fresh, "theirs\n");
        assert.throws(
            () => writeFileAtomicSync(fresh, Buffer.from("ours\n"), { unchangedSince: "" }),
            FileChangedError,
        );
        assert.equal(await readFile(fresh, "utf8"), "theirs\n");
    });

    it("refuses an in-place write over a bind-mounted file changed since it was read", async function () {
        await onBindMount(this, async (source) => {
            const read = signatureOf(statSync(target, { bigint: true }));
            appendFileSync(target, "10.0.0.1 foreign.test\n");
            assert.throws(
                () => writeFileAtomicSync(target, Buffer.from("ours\n"), { unchangedSince: read }),
                FileChangedError,
            );
            assert.equal(await readFile(source, "utf8"), "old\n10.0.0.1 foreign.test\n", "no journal was left");
        });
    });

    it("creates a missing file with mode 0644", async () => {
        const fresh = join(temp.dir, "fresh");
        writeFileAtomicSync(fresh, Buffer.from("x\n"));
        assert.equal((await stat(fresh)).mode & 0o777, 0o644);
    });

    it("keeps the file's mode", async () => {
        await chmod(target, 0o640);
        writeFileAtomicSync(target, Buffer.from("new\n"));
        assert.equal((await stat(target)).mode & 0o777, 0o640);
    });

    it("keeps the file's owner and group", async function () {
        if (!isRoot) skipBecause(this, "needs root to give the file another owner first");
        await chown(target, 1234, 2345);
        writeFileAtomicSync(target, Buffer.from("new\n"));
        const info = await stat(target);
        assert.deepEqual([info.uid, info.gid], [1234, 2345]);
    });

    it("writes in place when the file is bind-mounted and rename fails with EBUSY (Docker's /etc/hosts)", async function () {
        await onBindMount(this, async (source) => {
            const outcome = writeFileAtomicSync(target, Buffer.from("new content\n"));
            assert.equal(outcome.method, "in-place");
            assert.equal(await readFile(target, "utf8"), "new content\n");
            assert.equal(await readFile(source, "utf8"), "new content\n", "the mounted file itself changed");
            assert.deepEqual((await readdir(temp.dir)).sort(), ["hosts", "source"]);
        });
    });

    it("writes in place when the directory is not writable but the file is, keeping owner and mode", async () => {
        await chmod(target, 0o666);
        await chmod(temp.dir, 0o755);
        const before = await stat(target);
        const method = await writeUnprivileged("shorter\n");
        assert.equal(method, "in-place");
        assert.equal(await readFile(target, "utf8"), "shorter\n");
        const after = await stat(target);
        assert.deepEqual([after.uid, after.gid, after.mode], [before.uid, before.gid, before.mode]);
    });

    it("writes in place when it may not give a new file the owner of the old one", async function () {
        if (!isRoot) skipBecause(this, "needs root to set up a file owned by another user than the writer");
        await chmod(target, 0o666);
        await chmod(temp.dir, 0o777);
        const method = await writeUnprivileged("new\n");
        assert.equal(method, "in-place");
        assert.equal((await stat(target)).uid, 0, "still owned by root");
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "the temporary file was removed");
    });

    it("fails with EACCES and leaves the file untouched when neither rename nor in-place is allowed", async () => {
        await chmod(target, 0o644);
        await chmod(temp.dir, 0o755);
        await assert.rejects(writeUnprivileged("x"), /EACCES/);
        assert.equal(await readFile(target, "utf8"), "old\n");
    });

    it("puts back what another tool wrote into the file it replaced, and has the caller redo its edits", async () => {
        // The tool opened the file before our rename and writes after our last check: into the old file.
        const theirs = openSync(target, "a");
        const read = signatureOf(statSync(target, { bigint: true }));
        const writesLate = (): void => {
            writeSync(theirs, "10.0.0.1 appended-late.test\n");
        };
        try {
            assert.throws(
                () =>
                    writeFileAtomicSync(target, Buffer.from("ours\n"), {
                        unchangedSince: read,
                        beforeCommit: writesLate,
                    }),
                (error: unknown) => error instanceof FileChangedError && error.shown,
                "a FileChangedError that says ours was in place for a moment (a rewriting tool may have copied it)",
            );
        } finally {
            closeSync(theirs);
        }
        assert.equal(await readFile(target, "utf8"), "old\n10.0.0.1 appended-late.test\n", "their write stands");
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "no temporary file left");
    });

    it("writes an empty file in place, so a tool's rewrite between its truncation and its write loses nothing", async () => {
        // `cat new > hosts`: the tool truncates, and writes a moment later. We read the empty file and
        // write our line; then the tool's write lands. Had we replaced the file by rename, the tool's
        // write would have gone into the file our rename took away, with all it held.
        const theirs = "127.0.0.1\tlocalhost\n# the whole file, as the tool writes it back\n";
        const tool = openSync(target, "w");
        try {
            const read = signatureOf(statSync(target, { bigint: true }));
            const outcome = writeFileAtomicSync(target, Buffer.from("10.0.0.1\tours.test\n"), { unchangedSince: read });
            assert.equal(outcome.method, "in-place");
            writeSync(tool, theirs);
        } finally {
            closeSync(tool);
        }
        assert.equal(
            await readFile(target, "utf8"),
            theirs,
            "the tool's content whole (ours, read before it, is its to drop)",
        );
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "no temporary file or journal left");
    });

    it("keeps its content when the file it replaced was emptied meanwhile (a tool's rewrite, truncated, not yet written)", async () => {
        // The tool truncates after our last check and writes after our rename: its write goes into the
        // file our rename took away. Putting that file back, empty, would lose everything.
        const read = signatureOf(statSync(target, { bigint: true }));
        let tool: number | undefined;
        const truncates = (): void => {
            tool = openSync(target, "w");
        };
        try {
            const outcome = writeFileAtomicSync(target, Buffer.from("old\nours\n"), {
                unchangedSince: read,
                beforeCommit: truncates,
            });
            assert.equal(outcome.method, "rename");
        } finally {
            if (tool !== undefined) closeSync(tool);
        }
        assert.equal(await readFile(target, "utf8"), "old\nours\n");
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "no temporary file left");
    });

    it("waits for a tool that truncated the file it replaced to write it, and puts that back", async () => {
        // The tool truncates after our last check and writes a moment after our rename, into the file the
        // rename took away: that write is waited for and put back, not the empty file, nor nothing.
        const theirs = "old\n10.0.0.9\ttheirs.test\n";
        const fs = require("node:fs") as typeof import("node:fs");
        const { renameSync, readSync } = fs;
        let tool: number | undefined;
        let renamed = false;
        let reads = 0;
        (fs as { renameSync: unknown }).renameSync = (from: string, to: string) => {
            renameSync(from, to);
            if (to === target) renamed = true;
        };
        (fs as { readSync: unknown }).readSync = (...args: Parameters<typeof readSync>) => {
            if (renamed && ++reads === 4) writeSync(tool as number, theirs); // after our first looks at it
            return readSync(...args);
        };
        const read = signatureOf(statSync(target, { bigint: true }));
        try {
            assert.throws(
                () =>
                    writeFileAtomicSync(target, Buffer.from("old\nours\n"), {
                        unchangedSince: read,
                        beforeCommit: () => {
                            tool = openSync(target, "w");
                        },
                    }),
                FileChangedError,
            );
        } finally {
            (fs as { renameSync: unknown }).renameSync = renameSync;
            (fs as { readSync: unknown }).readSync = readSync;
            if (tool !== undefined) closeSync(tool);
        }
        assert.equal(
            await readFile(target, "utf8"),
            theirs,
            "the tool's rewrite put back, for our edits to be redone on",
        );
    });

    it("writes nothing when the lock is lost just before the rename", async () => {
        const lost = () => {
            throw new LockLostError("the lock");
        };
        assert.throws(() => writeFileAtomicSync(target, Buffer.from("ours\n"), { beforeCommit: lost }), LockLostError);
        assert.equal(await readFile(target, "utf8"), "old\n");
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "the temporary file was removed");
    });

    it("writes nothing in place when the lock is lost just before the write (bind-mounted file)", async function () {
        await onBindMount(this, async (source) => {
            const lost = () => {
                throw new LockLostError("the lock");
            };
            assert.throws(
                () => writeFileAtomicSync(target, Buffer.from("ours\n"), { beforeCommit: lost }),
                LockLostError,
            );
            assert.equal(await readFile(source, "utf8"), "old\n");
        });
    });

    // Found by the multi-writer suite: the file doubled. A tool rewriting the bind-mounted file in place
    // (O_TRUNC, then its write) truncated it just after our write was read back; the signature, taken
    // after that read, then vouched for the empty file as holding our content, and the next write (from
    // that cache, over an empty read) appended its whole content after the tool's.
    it("never vouches for a file that a tool truncated while our in-place write was read back", async function () {
        await onBindMount(this, async (source) => {
            const data = Buffer.from("old\nnew\n");
            // The real fs module (the writer's named imports call through it): the tool's O_TRUNC lands right
            // after the read that ends a read-back of our content.
            const fs = require("node:fs") as typeof import("node:fs");
            const readSync = fs.readSync;
            let truncated = false;
            (fs as { readSync: unknown }).readSync = (...args: Parameters<typeof readSync>) => {
                const read = readSync(...args);
                if (read === 0 && !truncated && fs.readFileSync(source).equals(data)) {
                    fs.truncateSync(source, 0);
                    truncated = true;
                }
                return read;
            };
            try {
                const outcome = writeFileAtomicSync(target, data, {
                    unchangedSince: signatureOf(statSync(target, { bigint: true })),
                });
                assert.ok(truncated, "the tool's truncation was injected");
                assert.equal(outcome.method, "in-place");
                assert.notEqual(
                    outcome.signature,
                    signatureOf(statSync(target, { bigint: true })),
                    "the signature vouches for the empty file as holding our content",
                );
            } finally {
                (fs as { readSync: unknown }).readSync = readSync;
            }
        });
    });

    it("refuses a file without write permission, as `echo >>` does, though its directory allows a rename", async () => {
        // The writer's own file: giving a new file its owner is no obstacle, only the permission is.
        if (isRoot) await chown(target, NOBODY.uid, NOBODY.gid);
        await chmod(target, 0o444);
        await chmod(temp.dir, 0o777);
        await assert.rejects(writeUnprivileged("replaced\n"), /EACCES/);
        assert.equal(await readFile(target, "utf8"), "old\n");
        assert.equal((await stat(target)).mode & 0o777, 0o444);
    });

    it("keeps a POSIX ACL and user.* extended attributes (written in place)", async function () {
        if (!hasTool("setfacl") || !hasTool("setfattr")) {
            skipBecause(
                this,
                "needs setfacl and setfattr (Debian packages acl and attr) to give the file an ACL and an attribute",
            );
        }
        execFileSync("setfacl", ["-m", "u:65534:rw", target]);
        execFileSync("setfattr", ["-n", "user.owner-note", "-v", "keep-me", target]);
        const outcome = writeFileAtomicSync(target, Buffer.from("new\n"));
        assert.equal(outcome.method, "in-place");
        assert.equal(await readFile(target, "utf8"), "new\n");
        assert.match(
            execFileSync("getfacl", ["--omit-header", "--numeric", "--absolute-names", target], { encoding: "utf8" }),
            /^user:65534:rw-$/m,
        );
        assert.equal(
            execFileSync("getfattr", ["--absolute-names", "--only-values", "-n", "user.owner-note", target], {
                encoding: "utf8",
            }),
            "keep-me",
        );
        assert.deepEqual(await readdir(temp.dir), ["hosts"]);
    });

    describe("the caller's work before the file changes (BeforeChange)", () => {
        /** What the caller's work saw when it ran: which run it was, the target's content, and every other file's. */
        interface Sighting {
            readonly runs: number;
            readonly target: string;
            readonly others: string[];
        }

        /** Work that notes what it sees into `log`. */
        function observer(log: Sighting[]): () => void {
            return () => {
                const others = readdirSync(temp.dir)
                    .filter((name) => name !== "hosts")
                    .map((name) => readFileSync(join(temp.dir, name), "utf8"));
                log.push({ runs: log.length + 1, target: readFileSync(target, "utf8"), others });
            };
        }

        it("runs once while the new content flushes: written to its temporary file, the file not yet replaced", async () => {
            const log: Sighting[] = [];
            const outcome = await writeFileAtomic(target, [Buffer.from("new\n")], {}, observer(log));
            assert.equal(outcome.method, "rename");
            assert.deepEqual(log, [{ runs: 1, target: "old\n", others: ["new\n"] }]);
            assert.equal(await readFile(target, "utf8"), "new\n");
            assert.deepEqual(await readdir(temp.dir), ["hosts"]);
        });

        it("runs before the rename in the synchronous write too", async () => {
            const log: Sighting[] = [];
            writeFileAtomicSync(target, Buffer.from("new\n"), {}, observer(log));
            assert.deepEqual(log, [{ runs: 1, target: "old\n", others: ["new\n"] }]);
            assert.equal(await readFile(target, "utf8"), "new\n");
        });

        it("writes nothing, and leaves no temporary file, when it fails", async () => {
            const failing = () => {
                throw new Error("the journal cannot be written");
            };
            await assert.rejects(
                writeFileAtomic(target, [Buffer.from("new\n")], {}, failing),
                /journal cannot be written/,
            );
            assert.equal(await readFile(target, "utf8"), "old\n");
            assert.deepEqual(await readdir(temp.dir), ["hosts"]);
        });

        it("writes nothing in place either when its failure carries a code that sends a write in place", async () => {
            let runs = 0;
            const failing = () => {
                runs++;
                throw Object.assign(new Error("the journal's directory may not be written"), { code: "EACCES" });
            };
            await assert.rejects(writeFileAtomic(target, [Buffer.from("new\n")], {}, failing), /may not be written/);
            assert.equal(runs, 1);
            assert.equal(await readFile(target, "utf8"), "old\n");
            assert.deepEqual(await readdir(temp.dir), ["hosts"]);
        });

        it("runs once, before the file changes, when an empty file is written in place", async () => {
            await writeFile(target, "");
            const log: Sighting[] = [];
            const outcome = await writeFileAtomic(target, [Buffer.from("new\n")], {}, observer(log));
            assert.equal(outcome.method, "in-place");
            assert.deepEqual(log, [{ runs: 1, target: "", others: [] }]);
            assert.equal(await readFile(target, "utf8"), "new\n");
        });

        it("runs once, before the file changes, when the rename fails and the write goes in place", async function () {
            await onBindMount(this, async (source) => {
                let runs = 0;
                const outcome = await writeFileAtomic(target, [Buffer.from("new\n")], {}, () => {
                    runs++;
                    assert.equal(readFileSync(source, "utf8"), "old\n");
                });
                assert.equal(outcome.method, "in-place");
                assert.equal(runs, 1);
                assert.equal(await readFile(source, "utf8"), "new\n");
            });
        });

        it("leaves the file as it was when the flush fails", async () => {
            // The real fs module (the writer's named imports call through it): the thread pool's flush fails.
            const fs = require("node:fs") as typeof import("node:fs");
            const fsync = fs.fsync;
            (fs as { fsync: unknown }).fsync = (_fd: number, done: (error: Error | null) => void) =>
                done(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" }));
            try {
                let runs = 0;
                await assert.rejects(
                    writeFileAtomic(target, [Buffer.from("new\n")], {}, () => runs++),
                    /EIO/,
                );
                assert.equal(runs, 1, "the caller's work ran beside the flush");
            } finally {
                (fs as { fsync: unknown }).fsync = fsync;
            }
            assert.equal(await readFile(target, "utf8"), "old\n");
            assert.deepEqual(await readdir(temp.dir), ["hosts"]);
        });
    });

    it("sweeps temporaries left by dead writers and keeps those of live ones", async () => {
        const dead = `.hosts.${await deadPid()}.0a1b2c3d.pulumi-lifecycle.tmp`;
        const live = `.hosts.${process.pid}.0a1b2c3d.pulumi-lifecycle.tmp`;
        await writeFile(join(temp.dir, dead), "partial");
        await writeFile(join(temp.dir, live), "in progress");
        assert.equal(sweepTemporariesSync(target), 1);
        assert.deepEqual((await readdir(temp.dir)).sort(), [live, "hosts"].sort());
    });
});
