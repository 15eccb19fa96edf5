// Guards how the import helper takes the Pulumi CLI's own lock on a stack of the local file backend:
// where the lock directory is for each backend layout, that the lock file has the CLI's shape and
// goes away on release, that a lock someone else holds is refused (and kept), and that only a lock a
// killed helper of this host left behind is broken. (That the real CLI honours it: the real-CLI suite
// importHelperRaces.test.ts, where a `pulumi up` started meanwhile finds the stack locked.)

import { strict as assert } from "node:assert";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { homedir, hostname } from "node:os";
import { join } from "node:path";
import { CliError } from "../../provider/cli/cliError";
import { acquireStackLock, fileBackendRoot, stackLockDirectory } from "../../provider/cli/diyStackLock";
import { makeTempDir, type TempDir } from "../support/projects";
import { deadPid } from "../support/system";

describe("the CLI's stack lock on a file backend", () => {
    let temp: TempDir;
    let locks: string;

    beforeEach(async () => {
        temp = await makeTempDir();
        locks = join(temp.dir, ".pulumi", "locks", "organization", "site", "dev");
    });
    afterEach(() => temp.cleanup());

    it("finds the backend's directory as the CLI resolves a file:// URL, and no other backend's", () => {
        assert.equal(fileBackendRoot("file://~", "/work"), homedir());
        assert.equal(fileBackendRoot("file://~/state", "/work"), join(homedir(), "state"));
        assert.equal(fileBackendRoot("file:///srv/pulumi%20state?no_tmp_dir=false", "/work"), "/srv/pulumi state");
        assert.equal(fileBackendRoot("file://./state", "/work/project"), "/work/project/state");
        assert.equal(fileBackendRoot("s3://bucket/path", "/work"), undefined);
        assert.equal(fileBackendRoot("https://api.pulumi.com", "/work"), undefined);
    });

    it("locks project-scoped stacks (meta.yaml version 1) and legacy ones in their own directories", async () => {
        assert.equal(stackLockDirectory(temp.dir, "site", "dev"), join(temp.dir, ".pulumi", "locks", "dev"));
        await mkdir(join(temp.dir, ".pulumi"), { recursive: true });
        await writeFile(join(temp.dir, ".pulumi", "meta.yaml"), "version: 1\n");
        assert.equal(stackLockDirectory(temp.dir, "site", "dev"), locks);
        await writeFile(join(temp.dir, ".pulumi", "meta.yaml"), "version: 2\n");
        assert.equal(stackLockDirectory(temp.dir, "site", "dev"), undefined, "a layout it does not know: no lock");
    });

    it("writes a lock of the CLI's shape, leaves no temporary file, and removes it on release", async () => {
        const lock = acquireStackLock(locks, "dev");
        const [name] = await readdir(locks);
        assert.match(String(name), /^pulumi-lifecycle-[0-9a-f-]{36}\.json$/);
        const content = JSON.parse(await readFile(join(locks, String(name)), "utf8"));
        assert.deepEqual(Object.keys(content), ["pid", "username", "hostname", "timestamp"]);
        assert.equal(content.pid, process.pid);
        assert.equal(content.hostname, hostname());
        assert.ok(!Number.isNaN(Date.parse(content.timestamp)));
        assert.deepEqual(await readdir(join(locks, "..")), ["dev"], "no temporary file beside the directory");
        lock.release();
        assert.deepEqual(await readdir(locks), []);
    });

    it("refuses a stack another operation holds, naming its lock and holder, and keeps that lock", async () => {
        await mkdir(locks, { recursive: true });
        const theirs = { pid: 4242, username: "ci", hostname: "build-7", timestamp: "2026-01-02T03:04:05Z" };
        await writeFile(join(locks, "6f0e.json"), JSON.stringify(theirs));
        await writeFile(join(locks, "6f0e.json.attrs"), "{}");
        assert.throws(
            () => acquireStackLock(locks, "dev"),
            (error: unknown) => {
                assert.ok(error instanceof CliError);
                assert.equal(
                    error.message,
                    `stack dev is locked by another Pulumi operation (${join(locks, "6f0e.json")}, taken by ` +
                        "ci@build-7 (pid 4242) since 2026-01-02T03:04:05Z); nothing was written. Run the command again " +
                        "when it has finished; if no Pulumi command is running on the stack, `pulumi cancel` removes the lock.",
                );
                return true;
            },
        );
        assert.deepEqual((await readdir(locks)).sort(), ["6f0e.json", "6f0e.json.attrs"]);
    });

    it("breaks only a lock that a killed helper of this host left behind", async () => {
        await mkdir(locks, { recursive: true });
        const dead = await deadPid();
        const own = (pid: number, host = hostname()) =>
            JSON.stringify({ pid, username: "me", hostname: host, timestamp: new Date().toISOString() });
        await writeFile(join(locks, "pulumi-lifecycle-dead.json"), own(dead));
        const lock = acquireStackLock(locks, "dev");
        assert.ok(!(await readdir(locks)).includes("pulumi-lifecycle-dead.json"), "the dead helper's lock is broken");
        lock.release();

        await writeFile(join(locks, "pulumi-lifecycle-live.json"), own(process.pid));
        await writeFile(join(locks, "pulumi-lifecycle-elsewhere.json"), own(dead, "another-host"));
        assert.throws(() => acquireStackLock(locks, "dev"), /is locked by another Pulumi operation/);
        assert.deepEqual((await readdir(locks)).sort(), [
            "pulumi-lifecycle-elsewhere.json",
            "pulumi-lifecycle-live.json",
        ]);
    });
});
