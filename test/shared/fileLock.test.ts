// Guards the cross-process file lock: exclusive, bounded wait with a clear error, abandoned locks of
// dead holders or holders that stopped refreshing broken at once, a live holder's lock never taken
// however long it works, and release that never removes someone else's lock.
// Time is injected: no test waits on a real clock.

import { strict as assert } from "node:assert";
import { readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { acquireFileLock, lockPathFor } from "../../provider/shared/files/fileLock";
import { LockTimeoutError } from "../../provider/shared/files/lockTimeoutError";
import { makeTempDir, type TempDir } from "../support/projects";
import { deadPid } from "../support/system";

/**
 * A clock that only moves when the code under test sleeps (starting at the real time, as lock files'
 * modification times do), and the repeated actions it runs as it moves, as timers would.
 */
function fakeTime(onSleep: (ms: number) => Promise<void> | void = () => undefined) {
    let now = Math.floor(Date.now() / 1000) * 1000;
    const sleeps: number[] = [];
    const repeats: { everyMs: number; action: () => void; last: number; stopped: boolean }[] = [];
    return {
        clock: () => now,
        sleep: async (ms: number) => {
            sleeps.push(ms);
            now += ms;
            for (const repeat of repeats) {
                while (!repeat.stopped && now - repeat.last >= repeat.everyMs) {
                    repeat.last += repeat.everyMs;
                    repeat.action();
                }
            }
            await onSleep(ms);
        },
        repeat: (everyMs: number, action: () => void) => {
            const repeat = { everyMs, action, last: now, stopped: false };
            repeats.push(repeat);
            return () => {
                repeat.stopped = true;
            };
        },
        sleeps,
        repeats,
    };
}

/** Sets a lock file's last refresh (its modification time) to `ms`. */
const refreshedAt = (path: string, ms: number) => utimes(path, ms / 1000, ms / 1000);

describe("file lock", () => {
    let temp: TempDir;
    let target: string;

    beforeEach(async () => {
        temp = await makeTempDir();
        target = join(temp.dir, "hosts");
        await writeFile(target, "127.0.0.1 localhost\n");
    });
    afterEach(() => temp.cleanup());

    it("creates a lock file naming this process beside the target and removes it on release", async () => {
        const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000 });
        assert.equal(lock.path, lockPathFor(target));
        const holder = JSON.parse(await readFile(lock.path, "utf8"));
        assert.equal(holder.pid, process.pid);
        assert.equal(holder.host, hostname());
        await lock.release();
        await assert.rejects(readFile(lock.path), { code: "ENOENT" });
    });

    it("makes a second taker wait until the first releases", async () => {
        const first = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000 });
        const time = fakeTime(() => first.release());
        const second = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000, ...time });
        assert.equal(time.sleeps.length, 1, "waited exactly once, then got the lock");
        await second.release();
    });

    it("gives up after the bounded wait with an error naming the file, the lock file and the holder", async () => {
        const held = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000 });
        const time = fakeTime();
        const error = await acquireFileLock(target, { timeoutMs: 500, staleMs: 60_000, ...time }).then(
            () => assert.fail("the lock was taken twice"),
            (e: unknown) => e,
        );
        assert.ok(error instanceof LockTimeoutError);
        assert.match(error.message, /timed out after 0\.5 s waiting for the lock on .*hosts/);
        assert.ok(error.message.includes(held.path));
        assert.match(error.message, new RegExp(`held by pid ${process.pid}`));
        assert.match(error.message, /delete the lock file/);
        assert.ok(time.sleeps.reduce((a, b) => a + b, 0) <= 500, "never waits past the deadline");
        await held.release();
    });

    it("breaks at once a lock whose holder process is gone", async () => {
        const pid = await deadPid();
        await writeFile(lockPathFor(target), JSON.stringify({ pid, host: hostname(), token: "x", since: 0 }));
        const time = fakeTime();
        const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000, ...time });
        assert.deepEqual(time.sleeps, [], "no waiting for a dead holder");
        assert.equal(JSON.parse(await readFile(lock.path, "utf8")).pid, process.pid);
        await lock.release();
    });

    it("breaks a lock not refreshed for staleMs when its holder cannot be checked (another host)", async () => {
        const time = fakeTime();
        const since = time.clock() - 61_000;
        await writeFile(lockPathFor(target), JSON.stringify({ pid: 1, host: "elsewhere", token: "x", since }));
        await refreshedAt(lockPathFor(target), since);
        const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000, ...time });
        assert.deepEqual(time.sleeps, []);
        await lock.release();
    });

    it("respects a young lock of another host until the deadline", async () => {
        const time = fakeTime();
        await writeFile(
            lockPathFor(target),
            JSON.stringify({ pid: 1, host: "elsewhere", token: "x", since: time.clock() }),
        );
        await assert.rejects(acquireFileLock(target, { timeoutMs: 200, staleMs: 60_000, ...time }), LockTimeoutError);
    });

    it("breaks a lock whose holder looks alive but stopped refreshing it (a reused pid, a hung holder)", async () => {
        const time = fakeTime();
        const since = time.clock() - 61_000;
        const holder = { pid: process.pid, host: hostname(), token: "x", since };
        await writeFile(lockPathFor(target), JSON.stringify(holder));
        await refreshedAt(lockPathFor(target), since);
        const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000, ...time });
        assert.deepEqual(time.sleeps, []);
        await lock.release();
    });

    it("never takes a live holder's lock, however long it works, while it keeps refreshing it", async () => {
        const time = fakeTime();
        const options = { timeoutMs: 200_000, staleMs: 60_000, ...time };
        const holder = await acquireFileLock(target, options);
        const error = await acquireFileLock(target, options).then(
            () => assert.fail("a waiter took the lock of a holder that was still working"),
            (e: unknown) => e,
        );
        assert.ok(error instanceof LockTimeoutError, String(error));
        assert.equal(error.waitedMs, 200_000, "waited the whole bounded wait, far beyond staleMs");
        const [refresh] = time.repeats;
        assert.equal(refresh?.everyMs, 15_000, "refreshed every quarter of staleMs");
        await holder.release();
        assert.equal(refresh?.stopped, true, "refreshing stops with the release");
        await assert.rejects(readFile(holder.path), { code: "ENOENT" });
    });

    it("never shows a lock file without its holder, even to a reader racing the takers", async () => {
        const path = lockPathFor(target);
        let taking = true;
        let seen = 0;
        const reader = (async () => {
            while (taking) {
                const text = await readFile(path, "utf8").catch(() => undefined);
                if (text !== undefined) {
                    seen++;
                    assert.equal(typeof JSON.parse(text).pid, "number", `a lock file named its holder: ${text}`);
                }
                await new Promise((resolve) => setImmediate(resolve));
            }
        })();
        for (let round = 0; round < 300; round++) {
            const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000 });
            await new Promise((resolve) => setImmediate(resolve));
            await lock.release();
        }
        taking = false;
        await reader;
        assert.ok(seen > 0, "the reader saw the lock held at least once");
    });

    it("sweeps the temporary files a dead holder left while taking the lock", async () => {
        const pid = await deadPid();
        const leftover = join(temp.dir, `..hosts.pulumi-lifecycle.lock.${pid}.0a1b2c3d.pulumi-lifecycle.tmp`);
        await writeFile(leftover, "{}");
        await writeFile(lockPathFor(target), JSON.stringify({ pid, host: hostname(), token: "x", since: 0 }));
        const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000 });
        await lock.release();
        assert.deepEqual(await readdir(temp.dir), ["hosts"]);
    });

    it("does not remove a lock that someone else holds when releasing", async () => {
        const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000 });
        const other = JSON.stringify({ pid: process.pid, host: hostname(), token: "someone-else", since: Date.now() });
        await writeFile(lock.path, other);
        await lock.release();
        assert.equal(await readFile(lock.path, "utf8"), other);
    });
});
