// Facts about the machine a test runs on, and real processes for tests that need them.

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** True when the tests run as root (CI machines here do); some checks need another user then. */
export const isRoot = process.getuid?.() === 0;

/** The unprivileged user root tests switch to. */
export const NOBODY = { uid: 65534, gid: 65534 };

/** The pid of a process that has exited: a real "dead holder". */
export async function deadPid(): Promise<number> {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await once(child, "exit");
    return child.pid ?? 0;
}

/** Whether the command `name` is on PATH. */
export function hasTool(name: string): boolean {
    return spawnSync("sh", ["-c", 'command -v "$1"', "sh", name], { stdio: "ignore" }).status === 0;
}

/** Whether this machine lets us bind-mount a file (root with mount rights), as Docker does for /etc/hosts. */
export function canBindMount(): boolean {
    if (!isRoot) return false;
    try {
        execFileSync("sh", ["-c", "command -v mount && command -v umount"], { stdio: "ignore" });
        return true;
    } catch {
        return false;
    }
}

/** Bind-mounts `source` over `target` (both files); returns the unmount. */
export function bindMount(source: string, target: string): () => void {
    execFileSync("mount", ["--bind", source, target]);
    return () => execFileSync("umount", [target]);
}

/**
 * Makes `dir`/hosts, holding `content`, a file the hosts store can write only in place: bind-mounted
 * where this process may mount (rename onto it fails with EBUSY, as on Docker's /etc/hosts), else in a
 * directory it may not write (no temporary file beside it). Skips the test where neither can be made
 * (root without mount). Returns the file and the undoing, to run before `dir` is removed.
 */
export function inPlaceHostsFile(
    context: Mocha.Context,
    dir: string,
    content: string,
): { readonly file: string; readonly undo: () => void } {
    const file = join(dir, "hosts");
    if (canBindMount()) {
        const source = join(dir, "source");
        writeFileSync(source, content);
        writeFileSync(file, "");
        return { file, undo: bindMount(source, file) };
    }
    if (isRoot) skipBecause(context, "needs mount(8) and umount(8) as root, to bind-mount the hosts file");
    writeFileSync(file, content);
    chmodSync(dir, 0o555);
    return { file, undo: () => chmodSync(dir, 0o755) };
}

/**
 * Runs `code` in a fresh Node.js process as an unprivileged user: `nobody` when the tests run as root
 * (root ignores file permissions), else the current user. Resolves with its stdout; rejects with stderr.
 */
export async function runUnprivileged(code: string, cwd: string): Promise<string> {
    const child = spawn(process.execPath, ["-e", code], {
        cwd,
        stdio: ["ignore", "pipe", "pipe"],
        ...(isRoot ? NOBODY : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
    });
    const [code_] = await once(child, "exit");
    if (code_ !== 0) throw new Error(stderr || `exited with ${code_}`);
    return stdout;
}

/** Skips the running test, printing what is missing so a skip is never silent. */
export function skipBecause(context: Mocha.Context, missing: string): never {
    console.log(`      skipped: ${missing}`);
    context.skip();
}

/**
 * Points TMPDIR (what os.tmpdir() reads, here and in the processes started from here) at `dir`;
 * returns what puts the previous value back.
 */
export function useTmpdir(dir: string): () => void {
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    return () => {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
    };
}
