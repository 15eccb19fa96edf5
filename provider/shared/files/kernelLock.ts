// A lock the kernel keeps for us: a Unix socket bound in Linux's abstract namespace, under a name derived
// from the file it protects. Binding a name that is bound fails (EADDRINUSE), so at most one process holds
// it; the kernel releases it the moment its holder exits, however it exits (SIGKILL included), and never
// while its holder lives (a stopped or hung holder keeps it: its lock is never broken under it). The
// abstract namespace has no files and no permissions: every user and every $TMPDIR of the machine (of one
// network namespace) meets the same name, so writers of one file exclude each other whatever their
// environment. Linux only; elsewhere `acquireKernelLock` answers undefined and the lock file alone serves.

import { createHash } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { basename, dirname } from "node:path";
import type { Clock, Sleep } from "../time";
import { codeOf } from "./errno";

/** What a held kernel lock offers. */
export interface HeldKernelLock {
    /** The socket's name as `ss -xl` and /proc/net/unix show it: `@pulumi-lifecycle:<digest>`. */
    readonly name: string;
    release(): Promise<void>;
}

/** Whether this platform has the kernel lock. */
export const kernelLocksSupported = process.platform === "linux";

const PREFIX = "pulumi-lifecycle:";
const FIRST_RETRY_MS = 2;
const LONGEST_RETRY_MS = 50;

/**
 * The name that guards `target`: its directory's device and inode plus its base name, so every path to
 * the same directory (a symlink, a bind mount, another spelling) meets the same lock. A directory that
 * cannot be examined is named by its path.
 */
export function kernelLockName(target: string): string {
    let directory: string;
    try {
        const info = statSync(dirname(target), { bigint: true });
        directory = `${info.dev}:${info.ino}`;
    } catch {
        directory = dirname(target);
    }
    const digest = createHash("sha256")
        .update(`${directory}\0${basename(target)}`)
        .digest("hex")
        .slice(0, 32);
    return `${PREFIX}${digest}`;
}

/**
 * Takes the kernel lock named `name`, waiting until `deadline` (clock time); answers undefined where the
 * platform has none. Rejects with the `timedOut()` error when it stays held.
 */
export async function acquireKernelLock(
    name: string,
    deadline: number,
    clock: Clock,
    sleep: Sleep,
    timedOut: () => Error,
): Promise<HeldKernelLock | undefined> {
    if (!kernelLocksSupported) return undefined;
    let retryMs = FIRST_RETRY_MS;
    let hungUp: Promise<void> | undefined;
    for (;;) {
        const held = await bind(name);
        if (held) return { name: `@${name}`, release: held };
        const remaining = deadline - clock();
        if (remaining <= 0) throw timedOut();
        // Waiters stay connected to the holder, which hangs up on them as it releases: they try again at
        // once, instead of at their next poll, when a busy holder may already have taken it back.
        hungUp ??= released(name).then(() => {
            hungUp = undefined;
        });
        await Promise.race([hungUp, sleep(Math.min(retryMs, remaining))]);
        retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
    }
}

/** Resolves when the holder of `name` hangs up on us (it released the lock), or at once when none holds it. */
function released(name: string): Promise<void> {
    return new Promise((resolve) => {
        const socket = connect({ path: `\0${name}` });
        const done = () => {
            socket.destroy();
            resolve();
        };
        socket.once("close", done);
        socket.once("error", done);
        // A waiter that gives up (its poll came first) must not keep the process alive.
        socket.unref();
    });
}

/**
 * Binds the abstract socket `name`: how to release it, or undefined when another process holds the
 * name. The holder keeps its waiters' connections and closes them as it releases.
 */
function bind(name: string): Promise<(() => Promise<void>) | undefined> {
    return new Promise((resolve, reject) => {
        const waiters = new Set<Socket>();
        const server: Server = createServer((waiter) => {
            waiters.add(waiter);
            waiter.on("error", () => undefined);
            waiter.once("close", () => waiters.delete(waiter));
            waiter.unref();
        });
        const release = () =>
            new Promise<void>((done) => {
                server.close(() => done());
                for (const waiter of waiters) waiter.destroy();
            });
        server.once("error", (error) => (codeOf(error) === "EADDRINUSE" ? resolve(undefined) : reject(error)));
        // `exclusive`: never shared through a cluster primary. Unref'd: holding a lock keeps no process alive.
        server.listen({ path: `\0${name}`, exclusive: true }, () => {
            server.unref();
            resolve(release);
        });
    });
}

/**
 * The pids of the processes holding the abstract socket `name`, where /proc tells (Linux; as root, or the
 * holder is this user's): for an error that names who to wait for. Empty when unknown.
 */
export function kernelLockHolders(name: string): number[] {
    if (!kernelLocksSupported) return [];
    try {
        const inodes = new Set<string>();
        for (const line of readFileSync("/proc/net/unix", "utf8").split("\n").slice(1)) {
            const fields = line.trim().split(/\s+/);
            // Node.js binds the whole sun_path, so the name shows with the NUL padding as trailing "@"s.
            if (fields[7]?.replace(/@+$/, "") === `@${name}`) inodes.add(fields[6] as string);
        }
        if (inodes.size === 0) return [];
        const holders: number[] = [];
        for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
            if (holdsSocket(pid, inodes)) holders.push(Number(pid));
        }
        return holders;
    } catch {
        return [];
    }
}

function holdsSocket(pid: string, inodes: ReadonlySet<string>): boolean {
    let descriptors: string[];
    try {
        descriptors = readdirSync(`/proc/${pid}/fd`);
    } catch {
        return false;
    }
    return descriptors.some((fd) => {
        try {
            const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
            return inode !== undefined && inodes.has(inode);
        } catch {
            return false;
        }
    });
}
