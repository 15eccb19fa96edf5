// A cross-process lock on a file, for read-modify-write cycles by several processes (two stacks, the
// provider and the import helper, a test's second writer).
//
// The lock is a file created with O_EXCL beside the target, naming its holder. A lock whose holder
// process is gone (same host) or that is older than `staleMs` is abandoned and broken, so a process
// killed with SIGKILL never blocks the next one. Where the directory is not writable, the lock lives in
// the temporary directory instead, keyed by the target's real path. Its file operations are synchronous
// (microseconds, and no event-loop turns while deciding); only waiting for a held lock sleeps.

import { createHash, randomBytes } from "node:crypto";
import { linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { type Clock, type Sleep, systemClock, timerSleep } from "../time";
import { codeOf, removeQuietly, sweepTemporariesSync, temporaryName } from "./atomicWrite";
import { LockTimeoutError } from "./lockTimeoutError";
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
    /** Age after which a lock counts as abandoned even when its pid looks alive (pid reuse, other hosts). */
    readonly staleMs: number;
    readonly clock?: Clock;
    readonly sleep?: Sleep;
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

/** The lock file used when the target's directory is not writable. */
export function fallbackLockPathFor(target: string): string {
    const digest = createHash("sha256").update(target).digest("hex").slice(0, 16);
    return join(tmpdir(), `pulumi-lifecycle-${digest}.lock`);
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
            return { path, release: () => releaseIfOurs(path, holder.token) };
        }
        const current = readHolder(path);
        if (current === "gone") continue;
        if (current !== undefined && isAbandoned(current, clock(), options.staleMs)) {
            breakLock(path, current.token);
            continue;
        }
        if (current === undefined && isUnnamedAndOld(path, options.staleMs)) {
            removeQuietly(path);
            continue;
        }
        const waited = clock() - started;
        if (waited >= options.timeoutMs) throw new LockTimeoutError(target, path, current, waited);
        await sleep(Math.min(retryMs, options.timeoutMs - waited));
        retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
    }
}

function isAbandoned(holder: LockHolder, now: number, staleMs: number): boolean {
    if (holder.host === hostname() && !isProcessAlive(holder.pid)) return true;
    return now - holder.since > staleMs;
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

/** A lock file that never got its holder written (its writer died at once) and is older than `staleMs`. */
function isUnnamedAndOld(path: string, staleMs: number): boolean {
    try {
        return Date.now() - statSync(path).mtimeMs > staleMs;
    } catch {
        return false;
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
