// Guards the backup of in-place writes (the fallback for bind-mounted files such as Docker's /etc/hosts)
// against the attacks and crashes found on it: a symlink planted at the backup's predictable name (root
// used to overwrite the link's target), a backup directory that is not private, an earlier backup
// replaced by a torn file, and a torn file left for the next run (which must restore the backup before
// reading). TMPDIR points at a temporary directory for each test.

import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { chmod, chown, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HostsFileStore } from "../../provider/hosts/io/hostsFileStore";
import { createEntry } from "../../provider/hosts/logic/entries";
import { writeFileAtomicSync } from "../../provider/shared/files/atomicWrite";
import { backupPath, recoverInPlaceWriteSync, saveBackup } from "../../provider/shared/files/inPlaceBackup";
import { privateDirectory } from "../../provider/shared/files/privateDirectory";
import { makeTempDir, type TempDir } from "../support/projects";
import { bindMount, canBindMount, isRoot, skipBecause, useTmpdir } from "../support/system";

describe("in-place write backups", () => {
    let temp: TempDir;
    let tmp: string;
    let target: string;
    let restoreTmpdir: (() => void) | undefined;

    beforeEach(async () => {
        temp = await makeTempDir();
        tmp = join(temp.dir, "tmp");
        await mkdir(tmp);
        restoreTmpdir = useTmpdir(tmp);
        target = join(temp.dir, "hosts");
        await writeFile(target, "127.0.0.1\tlocalhost\n");
    });
    afterEach(async () => {
        restoreTmpdir?.();
        restoreTmpdir = undefined;
        await temp.cleanup();
    });

    it("keeps backups in a directory only this user may enter", async () => {
        const directory = privateDirectory();
        const info = await stat(directory);
        assert.equal(info.mode & 0o777, 0o700);
        assert.equal(info.uid, process.getuid?.());
        assert.ok(backupPath(target).startsWith(`${directory}/`));
    });

    it("refuses a backup directory that is a symlink planted elsewhere, writing nothing there", async () => {
        const victim = join(temp.dir, "victim");
        await mkdir(victim);
        await symlink(victim, join(tmp, `pulumi-lifecycle-${process.getuid?.()}`));
        assert.throws(
            () => saveBackup(target, Buffer.from("old\n")),
            /refusing to keep backups and locks in .*not a directory/,
        );
        assert.deepEqual(await readdir(victim), []);
    });

    it("refuses a backup directory others may enter", async () => {
        const directory = join(tmp, `pulumi-lifecycle-${process.getuid?.()}`);
        await mkdir(directory);
        await chmod(directory, 0o777);
        assert.throws(() => privateDirectory(), /others may enter it \(mode 777\)/);
    });

    it("refuses a backup directory that belongs to another user", async function () {
        if (!isRoot) skipBecause(this, "needs root to give the directory another owner");
        const directory = join(tmp, `pulumi-lifecycle-${process.getuid?.()}`);
        await mkdir(directory, { mode: 0o700 });
        await chown(directory, 1234, 1234);
        assert.throws(() => privateDirectory(), /belongs to uid 1234/);
    });

    it("looks for a backup to restore without creating the private directory", async () => {
        assert.equal(recoverInPlaceWriteSync(target), false);
        assert.deepEqual(await readdir(tmp), [], "every batch of edits looks: none may leave a directory behind");
    });

    it("never replaces a backup that is already there: it is the only good copy", () => {
        saveBackup(target, Buffer.from("the good copy\n"));
        assert.throws(() => saveBackup(target, Buffer.from("torn\n")), { code: "EEXIST" });
    });

    it("restores a torn file from its backup before the next edit reads it", async () => {
        const good = "127.0.0.1\tlocalhost\n# kept\n";
        saveBackup(target, Buffer.from(good));
        // What a SIGKILL mid-write leaves: new bytes followed by old bytes shifted, a broken line.
        await writeFile(target, "10.0.0.5\tweb.internal\nalhost\n# kept\n");
        const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
        await store.edit(target, (doc) => {
            createEntry(doc, { address: "10.0.0.9", names: ["db.internal"] }, { adopt: false, file: target });
            return () => undefined;
        });
        assert.equal(await readFile(target, "utf8"), `${good}10.0.0.9\tdb.internal\n`);
        await assert.rejects(stat(backupPath(target)), { code: "ENOENT" }, "the backup is gone once restored");
        assert.equal(recoverInPlaceWriteSync(target), false, "nothing left to recover");
    });

    it("does not write through a symlink planted at the old predictable backup name", async function () {
        if (!canBindMount()) skipBecause(this, "needs root with mount(8) to bind-mount a file (the in-place path)");
        const victim = join(temp.dir, "root-owned");
        await writeFile(victim, "precious\n");
        const digest = createHash("sha256").update(target).digest("hex").slice(0, 16);
        await symlink(victim, join(tmp, `pulumi-lifecycle-backup-${digest}-hosts`));
        const source = join(temp.dir, "source");
        await writeFile(source, "127.0.0.1\tlocalhost\n");
        const unmount = bindMount(source, target);
        try {
            assert.equal(writeFileAtomicSync(target, Buffer.from("new\n")).method, "in-place");
        } finally {
            unmount();
        }
        assert.equal(await readFile(victim, "utf8"), "precious\n");
        assert.equal(await readFile(source, "utf8"), "new\n");
    });
});
