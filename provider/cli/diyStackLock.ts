// The Pulumi CLI's own lock on a stack of the local file backend (`file://`), taken the way the CLI
// takes it, so that no `pulumi up`, refresh, destroy or `stack import` of the stack can start while the
// import helper reads the state it is about to replace.
//
// What the CLI does (pkg/backend/diy/lock.go at v3.259.0): every operation that writes the state, and
// `pulumi stack import` (ImportDeployment in pkg/backend/diy/backend.go), first lists the stack's lock
// directory and fails if it holds any file; then writes its own `<uuid>.json` there ({pid, username,
// hostname, timestamp}); then lists again and, if any file but its own is there, deletes its own and
// fails with "the stack is currently locked". Of two takers at least one sees the other, so two never
// both hold it. The directory is `.pulumi/locks/organization/<project>/<stack>/` when the backend has
// project-scoped stacks (`.pulumi/meta.yaml` with version 1) and `.pulumi/locks/<stack>/` in the legacy
// layout (no meta.yaml). `pulumi stack export` takes no lock, and `pulumi cancel` deletes every lock.
//
// We take it by the same three steps, with a lock file of the same shape (named pulumi-lifecycle-*.json
// so a lock we left behind when killed is recognised as ours, and broken once its process is gone).
// The lock must be released before `pulumi stack import` runs, since that import takes the lock itself
// and fails on any other: see stackImport.ts for the short window that leaves.

import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir, hostname, userInfo } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { codeOf } from "../shared/files/errno";
import { isProcessAlive } from "../shared/files/processes";
import { CliError } from "./cliError";

/** A held stack lock. */
export interface HeldStackLock {
    readonly path: string;
    /** Deletes the lock file (synchronously, so a signal handler can call it). */
    release(): void;
}

/** What a lock file of the CLI holds. */
interface LockContent {
    readonly pid?: number;
    readonly username?: string;
    readonly hostname?: string;
    readonly timestamp?: string;
}

const OWN_PREFIX = "pulumi-lifecycle-";

/**
 * The directory of a `file://` backend URL as the CLI resolves it (`~` is the home directory, a relative
 * path is relative to `cwd`, the query is ignored), or undefined for any other backend.
 */
export function fileBackendRoot(url: string, cwd: string): string | undefined {
    if (!url.startsWith("file://")) return undefined;
    // The CLI expands `~` and makes the path absolute, then its storage library reads the result as a
    // URL, decoding %-escapes (pkg/backend/diy/backend.go, massageBlobPath).
    let path = url.slice("file://".length).split("?")[0] ?? "";
    if (path === "~") path = homedir();
    else if (path.startsWith("~/")) path = join(homedir(), path.slice(2));
    try {
        path = decodeURIComponent(path);
    } catch {
        // Not %-encoded: used as it is.
    }
    return isAbsolute(path) ? path : resolve(cwd, path);
}

/**
 * The stack's lock directory in the backend at `root`, or undefined when the backend's layout is one
 * this code does not know (a newer meta.yaml version): then no lock is taken, and compare-and-swap alone
 * guards the import.
 */
export function stackLockDirectory(root: string, project: string, stack: string): string | undefined {
    let meta: string | undefined;
    try {
        meta = readFileSync(join(root, ".pulumi", "meta.yaml"), "utf8");
    } catch (error) {
        if (codeOf(error) !== "ENOENT") throw error;
    }
    const version = meta === undefined ? 0 : Number(/^version:\s*(\d+)\s*$/m.exec(meta)?.[1]);
    if (version === 0) return join(root, ".pulumi", "locks", stack);
    if (version === 1) return join(root, ".pulumi", "locks", "organization", project, stack);
    return undefined;
}

/**
 * Takes the CLI's lock on the stack whose lock directory is `directory`, or throws CliError naming the
 * holders when another process holds it (a `pulumi up` running, or a lock a killed CLI left behind).
 */
export function acquireStackLock(directory: string, stack: string): HeldStackLock {
    breakAbandonedOwnLocks(directory);
    refuseIfLocked(directory, stack, undefined);
    const name = `${OWN_PREFIX}${randomUUID()}.json`;
    const path = join(directory, name);
    mkdirSync(directory, { recursive: true, mode: 0o755 });
    // Written beside the lock directory and renamed in, so a CLI listing the directory never reads a
    // half-written lock (it fails on one it cannot parse).
    const temporary = join(directory, "..", `.${OWN_PREFIX}${randomUUID()}.tmp`);
    const content: LockContent = {
        pid: process.pid,
        username: userInfo().username,
        hostname: hostname(),
        timestamp: new Date().toISOString(),
    };
    writeFileSync(temporary, JSON.stringify(content), { flag: "wx", mode: 0o644 });
    try {
        renameSync(temporary, path);
    } catch (error) {
        removeQuietly(temporary);
        throw error;
    }
    const release = () => removeQuietly(path);
    try {
        refuseIfLocked(directory, stack, name);
    } catch (error) {
        release();
        throw error;
    }
    return { path, release };
}

/** Throws CliError when the directory holds a lock file other than `own`. */
function refuseIfLocked(directory: string, stack: string, own: string | undefined): void {
    const others = lockFiles(directory).filter((name) => name !== own);
    if (others.length === 0) return;
    const holders = others.map((name) => {
        const content = readContent(join(directory, name));
        const who = content
            ? `${content.username ?? "?"}@${content.hostname ?? "?"} (pid ${content.pid ?? "?"}) since ${content.timestamp ?? "?"}`
            : "a process that did not identify itself";
        return `${join(directory, name)}, taken by ${who}`;
    });
    throw new CliError(
        `stack ${stack} is locked by another Pulumi operation (${holders.join("; ")}); nothing was written. ` +
            "Run the command again when it has finished; if no Pulumi command is running on the stack, " +
            "`pulumi cancel` removes the lock.",
        1,
    );
}

/** Removes the locks of helpers on this host that were killed while holding them. */
function breakAbandonedOwnLocks(directory: string): void {
    for (const name of lockFiles(directory)) {
        if (!name.startsWith(OWN_PREFIX)) continue;
        const content = readContent(join(directory, name));
        if (content?.hostname !== hostname() || typeof content.pid !== "number") continue;
        if (!isProcessAlive(content.pid)) removeQuietly(join(directory, name));
    }
}

/**
 * The files of the lock directory as the CLI lists them: every file is a lock, except the `.attrs`
 * files in which the CLI's storage library (gocloud.dev fileblob) keeps a file's attributes.
 */
function lockFiles(directory: string): string[] {
    try {
        return readdirSync(directory, { withFileTypes: true })
            .filter((entry) => !entry.isDirectory() && !entry.name.endsWith(".attrs"))
            .map((entry) => entry.name);
    } catch (error) {
        if (codeOf(error) === "ENOENT") return [];
        throw error;
    }
}

function readContent(path: string): LockContent | undefined {
    try {
        const parsed = JSON.parse(readFileSync(path, "utf8")) as unknown;
        return typeof parsed === "object" && parsed !== null ? (parsed as LockContent) : undefined;
    } catch {
        return undefined;
    }
}

function removeQuietly(path: string): void {
    try {
        unlinkSync(path);
    } catch (error) {
        if (codeOf(error) !== "ENOENT") throw error;
    }
}
