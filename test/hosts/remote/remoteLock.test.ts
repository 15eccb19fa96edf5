// The remote lock's take against what OpenSSH's sftp-server answers: SFTP v3 has no "already exists",
// so a hard link onto a lock file that exists fails with a bare Failure. When the holder releases the
// lock between that failure and the look that follows, the take must try again rather than fail the
// operation (CI's two-stacks fault test met exactly that); a link failing with no lock file there, time
// after time, is a real error and must surface, not wait. A stand-in for the session, since the timing
// cannot be forced on a real sshd.

import { strict as assert } from "node:assert";
import { acquireRemoteLock } from "../../../provider/hosts/remote/remoteLock";
import type { Sftp } from "../../../provider/hosts/remote/sftp";

/** Files on the machine, and a link that fails as OpenSSH's does: `failingLinks` times, then as the file system says. */
class Machine {
    readonly files = new Map<string, Buffer>();
    links = 0;
    constructor(private failingLinks: number) {}

    session(): Promise<Sftp> {
        return Promise.resolve(this as unknown as Sftp);
    }
    async createExclusive(path: string, content: Buffer): Promise<boolean> {
        if (this.files.has(path)) return false;
        this.files.set(path, content);
        return true;
    }
    async link(from: string, to: string): Promise<void> {
        this.links++;
        // Each failure stands for another writer's lock, taken and released around this link.
        if (this.failingLinks-- > 0 || this.files.has(to)) {
            throw Object.assign(new Error(`root@10.0.0.5:22:${to}: Failure`), { code: "EREMOTE" });
        }
        this.files.set(to, this.files.get(from) as Buffer);
    }
    async statIfAny(path: string): Promise<{ mtime: number } | undefined> {
        return this.files.has(path) ? { mtime: Math.floor(Date.now() / 1000) } : undefined;
    }
    async removeQuietly(path: string): Promise<void> {
        this.files.delete(path);
    }
    async readAll(path: string): Promise<Buffer> {
        const content = this.files.get(path);
        if (!content) throw Object.assign(new Error(`${path}: No such file`), { code: "ENOENT" });
        return content;
    }
    async setstat(): Promise<void> {}
}

const OPTIONS = { timeoutMs: 30_000, staleMs: 60_000, repeat: () => () => undefined, sleep: async () => undefined };
const LOCK = "/etc/.hosts.pulumi-lifecycle.lock";

describe("the remote lock against OpenSSH's answer to a link onto an existing file", () => {
    it("takes the lock when another writer's lock was released between the failed link and the look after it", async () => {
        const machine = new Machine(2);
        const lock = await acquireRemoteLock(
            () => machine.session(),
            "/etc/hosts",
            "root@10.0.0.5:22:/etc/hosts",
            OPTIONS,
        );
        assert.equal(lock.path, LOCK);
        assert.equal(machine.links, 3, "two links met a lock that came and went; the third took it");
        assert.deepEqual([...machine.files.keys()], [LOCK], "the temporary file is gone, the lock is there");
        const holder = JSON.parse((machine.files.get(LOCK) as Buffer).toString("utf8"));
        assert.equal(holder.pid, process.pid);
        await lock.release();
        assert.deepEqual([...machine.files.keys()], []);
    });

    it("fails with the server's error when links keep failing with no lock file there, instead of waiting", async () => {
        const machine = new Machine(Number.POSITIVE_INFINITY);
        await assert.rejects(
            acquireRemoteLock(() => machine.session(), "/etc/hosts", "root@10.0.0.5:22:/etc/hosts", OPTIONS),
            /^Error: root@10\.0\.0\.5:22:\/etc\/\.hosts\.pulumi-lifecycle\.lock: Failure$/,
        );
        assert.equal(machine.links, 5);
        assert.deepEqual([...machine.files.keys()], [], "no temporary file is left");
    });
});
