// Guards what the package keeps under $TMPDIR (shared with every user, so a place for planted symlinks).
// Hosts-file writes leave nothing there: the lock every writer meets is the kernel's, not a file there
// (two writers with different $TMPDIRs used to lock in different places, and lost entries), and an
// in-place write's sidecar lives beside the file, or, for a writer who may not write its directory, in
// the private directory only while the write runs. Symlinks planted at every name the package ever wrote
// there are never followed. The one directory the package may create there, $TMPDIR/pulumi-lifecycle-<uid>,
// is private and checked on every use.

import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { chmod, chown, lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HostsFileStore } from "../../../provider/hosts/io/hostsFileStore";
import { createEntry } from "../../../provider/hosts/logic/entries";
import { privateDirectory } from "../../../provider/shared/files/privateDirectory";
import { makeTempDir, REPO_ROOT, type TempDir } from "../../support/projects";
import { bindMount, canBindMount, isRoot, runUnprivileged, skipBecause, useTmpdir } from "../../support/system";

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
    async function plantLinks(file: string, uid: number): Promise<string[]> {
        const digest = createHash("sha256").update(file).digest("hex").slice(0, 16);
        const names = [
            `pulumi-lifecycle-backup-${digest}-hosts`,
            `pulumi-lifecycle-${digest}.lock`,
            `.pulumi-lifecycle-${digest}.lock.${process.pid}.00000000.pulumi-lifecycle.tmp`,
        ];
        for (const name of names) await symlink(victim, join(tmp, name));
        // The private directory of earlier versions, where backups and fallback locks were kept.
        await mkdir(join(tmp, `pulumi-lifecycle-${uid}`), { mode: 0o700 });
        await chown(join(tmp, `pulumi-lifecycle-${uid}`), uid, uid);
        for (const name of [`backup-${digest}-hosts`, `lock-${digest}-hosts`]) {
            await symlink(victim, join(tmp, `pulumi-lifecycle-${uid}`, name));
        }
        return names;
    }

    async function assertNothingWritten(planted: string[], uid: number): Promise<void> {
        assert.equal(await readFile(victim, "utf8"), PRECIOUS, "the links' target was never written");
        for (const name of planted) assert.ok((await lstat(join(tmp, name))).isSymbolicLink(), `${name} still a link`);
        assert.deepEqual((await readdir(tmp)).sort(), [...planted, `pulumi-lifecycle-${uid}`].sort());
        assert.equal((await readdir(join(tmp, `pulumi-lifecycle-${uid}`))).length, 2, "nothing added there");
    }

    it("keeps nothing there for an in-place write (a bind-mounted file)", async function () {
        if (!canBindMount()) skipBecause(this, "needs root with mount(8) to bind-mount a file (the in-place path)");
        const uid = process.getuid?.() ?? 0;
        const planted = await plantLinks(target, uid);
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
        await assertNothingWritten(planted, uid);
    });

    it("keeps nothing there for a writer that may not write the file's directory", async function () {
        if (!isRoot) skipBecause(this, "needs root to run the writer as another user than the directory's owner");
        await chmod(target, 0o666);
        await chmod(temp.dir, 0o755);
        const planted = await plantLinks(target, 65534);
        const dist = (path: string) => JSON.stringify(join(REPO_ROOT, "dist", path));
        await runUnprivileged(
            `process.env.TMPDIR = ${JSON.stringify(tmp)};
            const { HostsFileStore } = require(${dist("hosts/io/hostsFileStore.js")});
            const { createEntry } = require(${dist("hosts/logic/entries.js")});
            const file = ${JSON.stringify(target)};
            new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60000 } }).edit(file, (doc) => {
                createEntry(doc, { address: "10.0.0.9", names: ["db.internal"] }, { adopt: false, file });
                return () => undefined;
            });`,
            temp.dir,
        );
        assert.equal(await readFile(target, "utf8"), "127.0.0.1\tlocalhost\n10.0.0.9\tdb.internal\n");
        await assertNothingWritten(planted, 65534);
        assert.deepEqual((await readdir(temp.dir)).sort(), ["hosts", "tmp", "victim"], "no lock file beside it either");
    });
});

describe("the private directory", () => {
    let temp: TempDir;
    let tmp: string;
    let restoreTmpdir: () => void;

    beforeEach(async () => {
        temp = await makeTempDir();
        tmp = join(temp.dir, "tmp");
        await mkdir(tmp);
        restoreTmpdir = useTmpdir(tmp);
    });
    afterEach(async () => {
        restoreTmpdir();
        await temp.cleanup();
    });

    it("is created where only this user may enter", async () => {
        const directory = privateDirectory();
        const info = await stat(directory);
        assert.equal(info.mode & 0o777, 0o700);
        assert.equal(info.uid, process.getuid?.());
    });

    it("is refused when it is a symlink planted elsewhere", async () => {
        const victim = join(temp.dir, "victim");
        await mkdir(victim);
        await symlink(victim, join(tmp, `pulumi-lifecycle-${process.getuid?.()}`));
        assert.throws(() => privateDirectory(), /refusing to keep private files in .*not a directory/);
        assert.deepEqual(await readdir(victim), []);
    });

    it("is refused when others may enter it", async () => {
        const directory = join(tmp, `pulumi-lifecycle-${process.getuid?.()}`);
        await mkdir(directory);
        await chmod(directory, 0o777);
        assert.throws(() => privateDirectory(), /others may enter it \(mode 777\)/);
    });

    it("is refused when it belongs to another user", async function () {
        if (!isRoot) skipBecause(this, "needs root to give the directory another owner");
        const directory = join(tmp, `pulumi-lifecycle-${process.getuid?.()}`);
        await mkdir(directory, { mode: 0o700 });
        await chown(directory, 1234, 1234);
        assert.throws(() => privateDirectory(), /belongs to uid 1234/);
    });
});
