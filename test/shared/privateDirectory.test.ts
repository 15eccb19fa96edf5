// Guards everything the package writes under $TMPDIR (shared with every user, so a place for planted
// symlinks): only one directory, $TMPDIR/pulumi-lifecycle-<uid>, private and checked on every use, holds
// the in-place backups and the fallback locks. Symlinks planted at every name the package writes or
// ever wrote there are never followed, and nothing lands in $TMPDIR outside the private directory.

import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { chmod, lstat, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HostsFileStore } from "../../provider/hosts/io/hostsFileStore";
import { createEntry } from "../../provider/hosts/logic/entries";
import { fallbackLockPathFor } from "../../provider/shared/files/fileLock";
import { makeTempDir, REPO_ROOT, type TempDir } from "../support/projects";
import { bindMount, canBindMount, isRoot, NOBODY, runUnprivileged, skipBecause, useTmpdir } from "../support/system";

const PRECIOUS = "precious\n";

describe("what the package writes under $TMPDIR", () => {
    let temp: TempDir;
    let tmp: string;
    let target: string;
    let victim: string;
    let restoreTmpdir: (() => void) | undefined;

    beforeEach(async () => {
        temp = await makeTempDir();
        tmp = join(temp.dir, "tmp");
        await mkdir(tmp);
        await chmod(tmp, 0o1777);
        restoreTmpdir = useTmpdir(tmp);
        target = join(temp.dir, "hosts");
        await writeFile(target, "127.0.0.1\tlocalhost\n");
        victim = join(temp.dir, "victim");
        await writeFile(victim, PRECIOUS);
    });
    afterEach(async () => {
        restoreTmpdir?.();
        restoreTmpdir = undefined;
        await temp.cleanup();
    });

    /** Every name in $TMPDIR that this package writes or used to write for `file`, as planted links. */
    async function plantLinks(file: string): Promise<string[]> {
        const digest = createHash("sha256").update(file).digest("hex").slice(0, 16);
        const names = [
            `pulumi-lifecycle-backup-${digest}-hosts`,
            `pulumi-lifecycle-${digest}.lock`,
            `.pulumi-lifecycle-${digest}.lock.${process.pid}.00000000.pulumi-lifecycle.tmp`,
        ];
        for (const name of names) await symlink(victim, join(tmp, name));
        return names;
    }

    async function assertNothingFollowed(planted: string[], privateDirectories: string[]): Promise<void> {
        assert.equal(await readFile(victim, "utf8"), PRECIOUS, "the link's target was never written");
        for (const name of planted) assert.ok((await lstat(join(tmp, name))).isSymbolicLink(), `${name} still a link`);
        assert.deepEqual((await readdir(tmp)).sort(), [...planted, ...privateDirectories].sort());
    }

    it("keeps an in-place write's backup inside the private directory, past planted links", async function () {
        if (!canBindMount()) skipBecause(this, "needs root with mount(8) to bind-mount a file (the in-place path)");
        const planted = await plantLinks(target);
        const source = join(temp.dir, "source");
        await writeFile(source, "127.0.0.1\tlocalhost\n");
        const unmount = bindMount(source, target);
        try {
            const writes: string[] = [];
            const store = new HostsFileStore({
                lock: { timeoutMs: 5000, staleMs: 60_000 },
                onWrite: (event) => writes.push(event.method),
            });
            await store.edit(target, (doc) => {
                createEntry(doc, { address: "10.0.0.9", names: ["db.internal"] }, { adopt: false, file: target });
                return () => undefined;
            });
            assert.deepEqual(writes, ["in-place"]);
        } finally {
            unmount();
        }
        assert.equal(await readFile(source, "utf8"), "127.0.0.1\tlocalhost\n10.0.0.9\tdb.internal\n");
        await assertNothingFollowed(planted, [`pulumi-lifecycle-${process.getuid?.()}`]);
    });

    it("keeps the fallback lock of a file in a directory it may not write inside the private directory", async function () {
        if (!isRoot) skipBecause(this, "needs root to run the writer as another user than the directory's owner");
        await chmod(target, 0o666);
        await chmod(temp.dir, 0o755);
        const planted = await plantLinks(target);
        const dist = (path: string) => JSON.stringify(join(REPO_ROOT, "dist", path));
        const lockPath = await runUnprivileged(
            `process.env.TMPDIR = ${JSON.stringify(tmp)};
            const { HostsFileStore } = require(${dist("hosts/io/hostsFileStore.js")});
            const { createEntry } = require(${dist("hosts/logic/entries.js")});
            const { fallbackLockPathFor } = require(${dist("shared/files/fileLock.js")});
            const file = ${JSON.stringify(target)};
            new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60000 } })
                .edit(file, (doc) => {
                    createEntry(doc, { address: "10.0.0.9", names: ["db.internal"] }, { adopt: false, file });
                    return () => undefined;
                })
                .then(() => process.stdout.write(fallbackLockPathFor(file)));`,
            temp.dir,
        );
        assert.ok(lockPath.startsWith(join(tmp, `pulumi-lifecycle-${NOBODY.uid}`, "lock-")), lockPath);
        assert.notEqual(lockPath, fallbackLockPathFor(target), "each user's lock lives in their own directory");
        assert.equal(await readFile(target, "utf8"), "127.0.0.1\tlocalhost\n10.0.0.9\tdb.internal\n");
        await assertNothingFollowed(planted, [
            `pulumi-lifecycle-${NOBODY.uid}`,
            `pulumi-lifecycle-${process.getuid?.()}`,
        ]);
    });
});
