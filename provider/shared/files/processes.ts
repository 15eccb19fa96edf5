// Facts about processes on this machine, for deciding whether a lock's holder is still there.

import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { codeOf } from "./errno";

/**
 * Whether a process with this pid exists on this machine. EPERM means it exists but belongs to another
 * user, which is still alive for our purposes (a lock or temporary file of theirs must be respected).
 */
export function isProcessAlive(pid: number): boolean {
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        return codeOf(error) === "EPERM";
    }
}

/**
 * When the process `pid` started, as the kernel counts it (clock ticks since boot, from /proc), or
 * undefined where that cannot be read (not Linux, no /proc, the process is gone). A pid with another
 * start time is another process that reused the pid.
 */
export function processStartTime(pid: number): string | undefined {
    if (process.platform !== "linux" || !Number.isInteger(pid) || pid <= 0) return undefined;
    return statFields(pid)?.[19];
}

/** Whether the process `pid` is stopped (SIGSTOP, a debugger), where /proc tells; false when unknown. */
export function isProcessStopped(pid: number): boolean {
    const state = process.platform === "linux" ? statFields(pid)?.[0] : undefined;
    return state === "T" || state === "t";
}

/** The fields of /proc/<pid>/stat after the command name (field 3 onwards), or undefined. */
function statFields(pid: number): string[] | undefined {
    let stat: string;
    try {
        stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
        return undefined;
    }
    // The command name (field 2) is in parentheses and may itself contain spaces and parentheses.
    return stat
        .slice(stat.lastIndexOf(")") + 2)
        .trim()
        .split(" ");
}

/** This process as a writer names itself in what it leaves in shared files: `host:pid:start`. */
export function processIdentity(): string {
    return `${hostname()}:${process.pid}:${processStartTime(process.pid) ?? ""}`;
}

/**
 * Whether the process a `processIdentity` names is gone: on this host, its pid is dead or now runs a
 * process that started at another time. A process of another host cannot be examined: not gone.
 */
export function isIdentityGone(identity: string): boolean {
    const [host, pid, start] = identity.split(":");
    if (host !== hostname()) return false;
    if (!isProcessAlive(Number(pid))) return true;
    const now = processStartTime(Number(pid));
    return start !== "" && now !== undefined && now !== start;
}
