// Guards the cross-process file lock: exclusive, bounded wait with a clear error, abandoned locks of
// dead holders (or of holders on other hosts that stopped refreshing) broken at once, a live local
// holder's lock never taken however long it works or stays stopped, a reused pid told apart by its
// start time, writers of one file excluding each other whatever their user and $TMPDIR (the kernel
// lock), a lock taken over detected before the write, and release that never removes someone else's lock.
// Time is injected: no test waits on a real clock.

import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { chmod, mkdir, readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { LockTimeoutError } from "../../../provider/shared/errors/lockTimeoutError";
import { acquireFileLock, lockPathFor } from "../../../provider/shared/files/fileLock";
import { LockLostError } from "../../../provider/shared/files/lockLostError";
import { processStartTime } from "../../../provider/shared/files/processes";
import { makeTempDir, REPO_ROOT, type TempDir } from "../../support/projects";
import { deadPid, isRoot, NOBODY, skipBecause, useTmpdir } from "../../support/system";

const FILE_LOCK = JSON.stringify(join(REPO_ROOT, "dist", "shared", "files", "fileLock.js"));

/** A process (optionally as another user, with its own $TMPDIR) that takes the lock and holds it until killed. */
async function holderProcess(
    target: string,
    tmpdir: string,
    user?: { uid: number; gid: number },
): Promise<ChildProcess> {
    const child = spawn(
        process.execPath,
        [
            "-e",
            `require(${FILE_LOCK}).acquireFileLock(process.argv[1], { timeoutMs: 5000, staleMs: 60000 })
                .then(() => process.stdout.write("held"), (e) => { console.error(e); process.exit(1); });
            setInterval(() => undefined, 1000);`,
            target,
        ],
        { env: { ...process.env, TMPDIR: tmpdir }, stdio: ["ignore", "pipe", "inherit"], ...(user ?? {}) },
    );
    const started = await Promise.race([
        once(child.stdout as NodeJS.ReadableStream, "data").then(([chunk]) => String(chunk)),
        once(child, "exit").then(([code]) => `exited with ${code}`),
    ]);
    assert.equal(started, "held");
    return child;
}

async function stop(child: ChildProcess): Promise<void> {
    child.kill("SIGKILL");
    if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
}

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
        await held.release();
        assert.ok(error instanceof LockTimeoutError);
        assert.match(error.message, /timed out after 0\.5 s waiting for the lock on .*hosts/);
        assert.match(error.message, /the kernel lock @pulumi-lifecycle:[0-9a-f]{32}/);
        assert.match(error.message, new RegExp(`held by pid ${process.pid} since `));
        assert.match(error.message, /The kernel releases it as soon as that process exits/);
        assert.ok(time.sleeps.reduce((a, b) => a + b, 0) <= 500, "never waits past the deadline");
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

    it("breaks a lock that names no start time (an older version's) once its live-looking holder stopped refreshing it", async () => {
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

    it("breaks at once a lock whose pid now runs another process (its start time differs)", async () => {
        const time = fakeTime();
        const holder = { pid: process.pid, host: hostname(), token: "x", since: time.clock(), start: "1" };
        await writeFile(lockPathFor(target), JSON.stringify(holder));
        const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000, ...time });
        assert.deepEqual(time.sleeps, [], "taken without waiting");
        await lock.release();
    });

    it("never breaks the lock of a live local holder that stopped refreshing it (stopped with SIGSTOP)", async () => {
        const time = fakeTime();
        const sleeper = spawn("sleep", ["600"], { stdio: "ignore" });
        try {
            const pid = sleeper.pid as number;
            sleeper.kill("SIGSTOP");
            const start = processStartTime(pid);
            assert.ok(start, "the start time of a process on this machine is known");
            const since = time.clock() - 10 * 60_000;
            await writeFile(lockPathFor(target), JSON.stringify({ pid, host: hostname(), token: "x", since, start }));
            await refreshedAt(lockPathFor(target), since);
            const error = await acquireFileLock(target, { timeoutMs: 200_000, staleMs: 60_000, ...time }).then(
                () => assert.fail("the lock of a stopped holder was broken under it"),
                (e: unknown) => e,
            );
            assert.ok(error instanceof LockTimeoutError, String(error));
            assert.match(
                error.message,
                new RegExp(`pid ${pid}, which is stopped \\(resume it with \`kill -CONT ${pid}\``),
            );
        } finally {
            await stop(sleeper);
        }
    });

    it("keeps a second process out while a stopped process holds the lock, naming it", async () => {
        const time = fakeTime();
        const holder = await holderProcess(target, join(temp.dir, "tmp-a"));
        try {
            holder.kill("SIGSTOP");
            const error = await acquireFileLock(target, { timeoutMs: 300_000, staleMs: 60_000, ...time }).then(
                () => assert.fail("a second process took the lock of a stopped holder"),
                (e: unknown) => e,
            );
            assert.ok(error instanceof LockTimeoutError, String(error));
            assert.match(error.message, new RegExp(`pid ${holder.pid}, which is stopped`));
        } finally {
            await stop(holder);
        }
        const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000 });
        await lock.release();
    });

    it("excludes writers of one file whatever their user and $TMPDIR, where only root may write its directory", async function () {
        if (!isRoot) skipBecause(this, "needs root to run a second writer as another user");
        await chmod(target, 0o666);
        await chmod(temp.dir, 0o755);
        for (const dir of ["tmp-nobody", "tmp-root"]) await mkdir(join(temp.dir, dir), { mode: 0o777 });
        const time = fakeTime();
        const holder = await holderProcess(target, join(temp.dir, "tmp-nobody"), NOBODY);
        try {
            const restoreTmpdir = useTmpdir(join(temp.dir, "tmp-root"));
            try {
                await assert.rejects(
                    acquireFileLock(target, { timeoutMs: 5000, staleMs: 60_000, ...time }),
                    LockTimeoutError,
                );
            } finally {
                restoreTmpdir();
            }
        } finally {
            await stop(holder);
        }
        const mine = await acquireFileLock(target, { timeoutMs: 5000, staleMs: 60_000 });
        try {
            const waiter = spawn(
                process.execPath,
                [
                    "-e",
                    `require(${FILE_LOCK}).acquireFileLock(process.argv[1], { timeoutMs: 300, staleMs: 60000 })
                        .then(() => process.exit(0), (e) => { process.stdout.write(e.name); process.exit(3); });`,
                    target,
                ],
                {
                    env: { ...process.env, TMPDIR: join(temp.dir, "tmp-nobody") },
                    stdio: ["ignore", "pipe", "inherit"],
                    ...NOBODY,
                },
            );
            let output = "";
            waiter.stdout.on("data", (chunk: Buffer) => {
                output += chunk.toString();
            });
            const [code] = await once(waiter, "exit");
            assert.deepEqual([code, output], [3, "LockTimeoutError"], "the other user's writer waited for root's lock");
        } finally {
            await mine.release();
        }
    });

    it("tells its holder, just before the write, that the lock file was taken over", async () => {
        const lock = await acquireFileLock(target, { timeoutMs: 1000, staleMs: 60_000 });
        lock.verify();
        await writeFile(lock.path, JSON.stringify({ pid: 1, host: "elsewhere", token: "theirs", since: Date.now() }));
        assert.throws(() => lock.verify(), LockLostError);
        await lock.release();
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
