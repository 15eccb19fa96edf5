// A cross-process lock on a file, for read-modify-write cycles by several processes (two stacks, the
// provider and the import helper, a test's second writer), whoever runs them and whatever their $TMPDIR.
//
// It is two locks, always taken in this order:
// 1. The kernel lock (kernelLock.ts, Linux): an abstract Unix socket named after the file. Every process
//    of the machine meets the same one; the kernel frees it when its holder dies and never before, so
//    it needs no breaking and a stopped holder keeps it.
// 2. The lock file `.<name>.pulumi-lifecycle.lock` beside the target, naming its holder: for writers on
//    other hosts sharing the file, and for writers without the kernel lock. Its holder refreshes it
//    every quarter of `staleMs`. It is broken only when its holder is gone: on this host, a dead pid, or
//    a pid now running another process (its start time differs); on another host (or when the start time
//    is unknown), `staleMs` without a refresh. A live local holder's lock is never taken, even stopped.
// Where the target's directory is not writable, only the kernel lock can be taken; without one (not
// Linux) the lock is refused rather than kept somewhere other writers would not look.
//
// A holder checks that its lock is still its own (`verify`) immediately before it replaces the file.
// The lock file's operations are synchronous (microseconds, and no event-loop turns while deciding);
// only waiting for a held lock sleeps.

import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { LockTimeoutError } from "../errors/lockTimeoutError";
import { type Clock, type Repeat, type Sleep, systemClock, timerRepeat, timerSleep } from "../time";
import { codeOf } from "./errno";
import { acquireKernelLock, type HeldKernelLock, kernelLockHolders, kernelLockName } from "./kernelLock";
import { LockLostError } from "./lockLostError";
import { isProcessAlive, isProcessStopped, processStartTime } from "./processes";
import { removeQuietly, sweepTemporariesSync, temporaryName } from "./temporaryFiles";

/** Who holds a lock file; written into it. */
export interface LockHolder {
    readonly pid: number;
    readonly host: string;
    readonly token: string;
    /** Clock time at which the lock was taken. */
    readonly since: number;
    /** The holder process's start time (processStartTime), where known: tells a reused pid apart. */
    readonly start?: string;
}

/** How long to wait and how to tell time. */
export interface LockOptions {
    /** The longest wait for a held lock before LockTimeoutError. */
    readonly timeoutMs: number;
    /**
     * How long a lock file may go unrefreshed before it counts as abandoned when its holder cannot be
     * checked (another host, an unknown start time). Holders refresh every quarter of it.
     */
    readonly staleMs: number;
    readonly clock?: Clock;
    readonly sleep?: Sleep;
    /** Schedules the holder's refreshes. */
    readonly repeat?: Repeat;
}

/** A held lock. */
export interface HeldLock {
    /** The lock file, or the kernel lock's name where no lock file could be taken. */
    readonly path: string;
    /**
     * Throws LockLostError unless the lock is still this holder's: call it just before replacing the file.
     * A lock on another machine's file answers a promise (it asks that machine); local ones answer at once.
     */
    verify(): void | Promise<void>;
    release(): Promise<void>;
}

const PERMISSION_CODES = new Set(["EACCES", "EPERM", "EROFS"]);
/** Lock files whose leftover temporaries this process has already swept. */
const swept = new Set<string>();
/** link(2) errors of file systems without hard links (FAT, some network shares). */
const LINK_UNSUPPORTED = new Set(["ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"]);
const FIRST_RETRY_MS = 2;
const LONGEST_RETRY_MS = 50;

/** The lock file used for `target`, beside it. */
export function lockPathFor(target: string): string {
    return join(dirname(target), `.${basename(target)}.pulumi-lifecycle.lock`);
}

/** Takes the lock on `target` (a real path), waiting at most `options.timeoutMs` in all. */
export async function acquireFileLock(target: string, options: LockOptions): Promise<HeldLock> {
    const clock = options.clock ?? systemClock;
    const sleep = options.sleep ?? timerSleep;
    const started = clock();
    const deadline = started + options.timeoutMs;
    const name = kernelLockName(target);
    const kernel = await acquireKernelLock(name, deadline, clock, sleep, () => {
        // Its holder also holds the lock file, which says more (since when), unless it may not write there.
        const named = readHolderQuietly(lockPathFor(target));
        const holders = kernelLockHolders(name);
        const who = named
            ? describeHolder(named)
            : holders.length > 0
              ? holders.map((pid) => describeLocalPid(pid)).join(", ")
              : undefined;
        return new LockTimeoutError(target, `the kernel lock @${name}`, who, clock() - started);
    });
    try {
        const path = lockPathFor(target);
        let token: string;
        try {
            token = await acquireAt(path, target, deadline, started, options, clock, sleep);
        } catch (error) {
            // A directory we may not write: the kernel lock is the one every writer meets. Without it, a
            // lock kept elsewhere would exclude nobody, so writing is refused (the caller says why).
            if (kernel && PERMISSION_CODES.has(codeOf(error))) return kernelOnly(kernel);
            throw error;
        }
        return hold(path, token, kernel, clock, options);
    } catch (error) {
        await kernel?.release();
        throw error;
    }
}

function kernelOnly(kernel: HeldKernelLock): HeldLock {
    return { path: kernel.name, verify: () => undefined, release: () => kernel.release() };
}

/** Takes the lock file at `path`; resolves with the token it is held by. */
async function acquireAt(
    path: string,
    target: string,
    deadline: number,
    started: number,
    options: LockOptions,
    clock: Clock,
    sleep: Sleep,
): Promise<string> {
    let retryMs = FIRST_RETRY_MS;
    const start = processStartTime(process.pid);
    for (;;) {
        const holder: LockHolder = {
            pid: process.pid,
            host: hostname(),
            token: randomBytes(8).toString("hex"),
            since: clock(),
            ...(start !== undefined ? { start } : {}),
        };
        if (createNamed(path, holder)) {
            if (!swept.has(path)) {
                // Temporaries of takers killed before their link: no lock of theirs exists to break.
                swept.add(path);
                sweepTemporariesSync(path);
            }
            return holder.token;
        }
        const current = readHolder(path);
        if (current === "gone") continue;
        const refreshed = refreshedAt(path);
        if (refreshed === undefined) continue;
        const unrefreshedFor = clock() - refreshed;
        if (current !== undefined && isAbandoned(current, unrefreshedFor, options.staleMs)) {
            breakLock(path, current.token);
            continue;
        }
        if (current === undefined && unrefreshedFor > options.staleMs) {
            // Named by nobody (written by a taker that died at once) and never refreshed.
            removeQuietly(path);
            continue;
        }
        const remaining = deadline - clock();
        if (remaining <= 0) {
            const who = current === undefined ? undefined : describeHolder(current);
            throw new LockTimeoutError(target, path, who, clock() - started);
        }
        await sleep(Math.min(retryMs, remaining));
        retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
    }
}

/** Marks the lock ours and refreshed now, and keeps refreshing it until it is released. */
function hold(
    path: string,
    token: string,
    kernel: HeldKernelLock | undefined,
    clock: Clock,
    options: LockOptions,
): HeldLock {
    const refresh = () => {
        if (!isOurs(path, token)) return;
        try {
            const seconds = clock() / 1000;
            utimesSync(path, seconds, seconds);
        } catch {
            // Gone between the read and the touch: released or broken, and no longer ours to refresh.
        }
    };
    refresh();
    const stop = (options.repeat ?? timerRepeat)(Math.max(1, Math.floor(options.staleMs / 4)), refresh);
    return {
        path,
        verify: () => {
            if (!isOurs(path, token)) throw new LockLostError(path);
        },
        release: async () => {
            stop();
            if (isOurs(path, token)) removeQuietly(path);
            await kernel?.release();
        },
    };
}

function isOurs(path: string, token: string): boolean {
    const current = readHolder(path);
    return current !== "gone" && current?.token === token;
}

/** When the lock at `path` was last refreshed (its mtime), or undefined when it vanished. */
function refreshedAt(path: string): number | undefined {
    try {
        return statSync(path).mtimeMs;
    } catch (error) {
        if (codeOf(error) === "ENOENT") return undefined;
        throw error;
    }
}

/**
 * Whether a lock's holder is gone. On this host that is a fact (the pid is dead, or runs a process that
 * started at another time); staleness decides only where the holder cannot be examined.
 */
function isAbandoned(holder: LockHolder, unrefreshedFor: number, staleMs: number): boolean {
    if (holder.host === hostname()) {
        if (!isProcessAlive(holder.pid)) return true;
        const start = holder.start === undefined ? undefined : processStartTime(holder.pid);
        if (start !== undefined) return start !== holder.start;
    }
    return unrefreshedFor > staleMs;
}

function describeHolder(holder: LockHolder): string {
    const since = Number.isFinite(holder.since) ? ` since ${new Date(holder.since).toISOString()}` : "";
    if (holder.host !== hostname()) return `pid ${holder.pid} on host ${JSON.stringify(holder.host)}${since}`;
    return `${describeLocalPid(holder.pid)}${since}`;
}

/** "pid 123", with what to do when it is stopped. */
function describeLocalPid(pid: number): string {
    return isProcessStopped(pid)
        ? `pid ${pid}, which is stopped (resume it with \`kill -CONT ${pid}\`, or end it)`
        : `pid ${pid}`;
}

/**
 * Creates the lock file already holding its holder's name, or answers false when it exists. Written to a
 * temporary file and hard-linked into place, so a process killed at any moment never leaves a lock that
 * names nobody (which others could only wait out); where hard links are unsupported, O_EXCL instead.
 */
function createNamed(path: string, holder: LockHolder): boolean {
    const content = JSON.stringify(holder);
    const temporary = join(dirname(path), temporaryName(basename(path)));
    writeFileSync(temporary, content, { flag: "wx", mode: 0o644 });
    try {
        linkSync(temporary, path);
        return true;
    } catch (error) {
        if (codeOf(error) === "EEXIST") return false;
        if (!LINK_UNSUPPORTED.has(codeOf(error))) throw error;
        try {
            writeFileSync(path, content, { flag: "wx", mode: 0o644 });
            return true;
        } catch (fallbackError) {
            if (codeOf(fallbackError) === "EEXIST") return false;
            throw fallbackError;
        }
    } finally {
        removeQuietly(temporary);
    }
}

/** The holder named in a lock file; undefined while it is being written; "gone" when it vanished. */
function readHolder(path: string): LockHolder | undefined | "gone" {
    let text: string;
    try {
        text = readFileSync(path, "utf8");
    } catch (error) {
        if (codeOf(error) === "ENOENT") return "gone";
        throw error;
    }
    return parseHolder(text);
}

/**
 * The holder a lock file's text names, on this machine or another; undefined when the text is not one
 * yet (a holder that has not finished writing it: held all the same).
 */
export function parseHolder(text: string): LockHolder | undefined {
    try {
        const parsed = JSON.parse(text) as Partial<LockHolder>;
        if (typeof parsed.pid === "number" && typeof parsed.token === "string") return parsed as LockHolder;
    } catch {
        // Being written.
    }
    return undefined;
}

function readHolderQuietly(path: string): LockHolder | undefined {
    try {
        const holder = readHolder(path);
        return holder === "gone" ? undefined : holder;
    } catch {
        return undefined;
    }
}

/**
 * Deletes an abandoned lock, unless it changed hands since we judged it abandoned, and the temporary
 * files its dead holder may have left while taking it.
 */
function breakLock(path: string, token: string): void {
    const again = readHolder(path);
    if (again === "gone" || again === undefined || again.token !== token) return;
    try {
        unlinkSync(path);
    } catch (error) {
        if (codeOf(error) !== "ENOENT") throw error;
    }
    sweepTemporariesSync(path);
}
