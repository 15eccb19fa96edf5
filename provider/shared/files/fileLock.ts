// A cross-process lock on a file, for read-modify-write cycles by several processes (two stacks, the
// provider and the import helper, a test's second writer).
//
// The lock is a file created with O_EXCL beside the target, naming its holder. Its holder refreshes it
// (its modification time) every quarter of `staleMs` while it holds it, however long it works. A lock
// is abandoned, and broken, only when its holder is gone (a dead pid on this host) or has stopped
// refreshing it for `staleMs` (a hung or killed holder on another host, a reused pid): a process killed
// with SIGKILL never blocks the next one, and a live holder's lock is never taken.
//
// Where the directory is not writable, the lock lives in this user's private directory under $TMPDIR
// instead (privateDirectory.ts), keyed by the target's real path, where no other user can plant it.
// Its file operations are synchronous (microseconds, and no event-loop turns while deciding); only
// waiting for a held lock sleeps.

import { createHash, randomBytes } from "node:crypto";
import { linkSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { type Clock, type Repeat, type Sleep, systemClock, timerRepeat, timerSleep } from "../time";
import { removeQuietly, sweepTemporariesSync, temporaryName } from "./atomicWrite";
import { codeOf } from "./errno";
import { LockTimeoutError } from "./lockTimeoutError";
import { privateDirectory } from "./privateDirectory";
import { isProcessAlive } from "./processes";

/** Who holds a lock; written into the lock file. */
export interface LockHolder {
    readonly pid: number;
    readonly host: string;
    readonly token: string;
    /** Clock time at which the lock was taken. */
    readonly since: number;
}

/** How long to wait and how to tell time. */
export interface LockOptions {
    /** The longest wait for a held lock before LockTimeoutError. */
    readonly timeoutMs: number;
    /**
     * How long a lock may go unrefreshed before it counts as abandoned even when its pid looks alive
     * (another host, a reused pid, a hung holder). Holders refresh every quarter of it.
     */
    readonly staleMs: number;
    readonly clock?: Clock;
    readonly sleep?: Sleep;
    /** Schedules the holder's refreshes. */
    readonly repeat?: Repeat;
}

/** A held lock. */
export interface HeldLock {
    readonly path: string;
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

/** The lock file used when the target's directory is not writable: in this user's private directory. */
export function fallbackLockPathFor(target: string): string {
    const digest = createHash("sha256").update(target).digest("hex").slice(0, 16);
    return join(privateDirectory(), `lock-${digest}-${basename(target)}`);
}

/** Takes the lock on `target` (a real path), waiting at most `options.timeoutMs`. */
export async function acquireFileLock(target: string, options: LockOptions): Promise<HeldLock> {
    try {
        return await acquireAt(lockPathFor(target), target, options);
    } catch (error) {
        if (!PERMISSION_CODES.has(codeOf(error))) throw error;
        return await acquireAt(fallbackLockPathFor(target), target, options);
    }
}

async function acquireAt(path: string, target: string, options: LockOptions): Promise<HeldLock> {
    const clock = options.clock ?? systemClock;
    const sleep = options.sleep ?? timerSleep;
    const started = clock();
    let retryMs = FIRST_RETRY_MS;
    for (;;) {
        const holder: LockHolder = {
            pid: process.pid,
            host: hostname(),
            token: randomBytes(8).toString("hex"),
            since: clock(),
        };
        if (createNamed(path, holder)) {
            if (!swept.has(path)) {
                // Temporaries of takers killed before their link: no lock of theirs exists to break.
                swept.add(path);
                sweepTemporariesSync(path);
            }
            return hold(path, holder.token, clock, options);
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
        const waited = clock() - started;
        if (waited >= options.timeoutMs) throw new LockTimeoutError(target, path, current, waited);
        await sleep(Math.min(retryMs, options.timeoutMs - waited));
        retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
    }
}

/** Marks the lock ours and refreshed now, and keeps refreshing it until it is released. */
function hold(path: string, token: string, clock: Clock, options: LockOptions): HeldLock {
    const refresh = () => {
        const current = readHolder(path);
        if (current === "gone" || current?.token !== token) return;
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
        release: async () => {
            stop();
            await releaseIfOurs(path, token);
        },
    };
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

function isAbandoned(holder: LockHolder, unrefreshedFor: number, staleMs: number): boolean {
    if (holder.host === hostname() && !isProcessAlive(holder.pid)) return true;
    return unrefreshedFor > staleMs;
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
    try {
        const parsed = JSON.parse(text) as Partial<LockHolder>;
        if (typeof parsed.pid === "number" && typeof parsed.token === "string") return parsed as LockHolder;
    } catch {
        // Written by a holder that has not finished writing it yet: treat it as held.
    }
    return undefined;
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

async function releaseIfOurs(path: string, token: string): Promise<void> {
    const current = readHolder(path);
    if (current !== "gone" && current?.token === token) removeQuietly(path);
}
