// Crash-safe replacement of a file's content.
//
// The new bytes go to a temporary file beside the target, are flushed to disk, get the target's mode and
// owner, and are renamed over it: a reader (or a crash) sees the old file or the new one, never a partial
// one. Where that is impossible (a bind-mounted file gives EBUSY or EXDEV, as Docker's /etc/hosts does;
// a directory we may not write; an owner we may not give the new file) we fall back to writing the file
// in place, after saving a backup copy that restores the old content if the in-place write fails.

import { createHash, randomBytes } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { type FileHandle, open, readdir, rename, stat, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { isProcessAlive } from "./processes";

/** How a write reached the disk. */
export type WriteMethod = "rename" | "in-place";

/** What a write did, and the identity of the file it left, for change detection. */
export interface WriteOutcome {
    readonly method: WriteMethod;
    /** `dev:ino:size:mtime` of the written file, as `fileSignature` computes it. */
    readonly signature: string;
}

/** Rename errors that mean "this file cannot be replaced by rename", not "the write failed". */
const RENAME_IMPOSSIBLE = new Set(["EBUSY", "EXDEV", "EPERM", "EACCES"]);
/** Errors creating or preparing the temporary file that an in-place write may still get around. */
const TEMPORARY_IMPOSSIBLE = new Set(["EACCES", "EPERM", "EROFS"]);

/** `dev:ino:size:mtime`: changes whenever a file's content is rewritten or it is replaced by another. */
export function signatureOf(info: BigIntStats): string {
    return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}`;
}

/** The signature of an open file. */
export async function fileSignature(handle: FileHandle): Promise<string> {
    return signatureOf(await handle.stat({ bigint: true }));
}

/**
 * Replaces the content of `target` (a real path, symlinks already resolved) with `data`. Creates the file
 * (mode 0644) when it does not exist. Keeps mode and owner. Throws the underlying error when neither
 * the rename nor the in-place write is possible; the file is then unchanged.
 */
export async function writeFileAtomic(target: string, data: Uint8Array): Promise<WriteOutcome> {
    const existing = await statOrUndefined(target);
    const temporary = join(dirname(target), temporaryName(basename(target)));
    let handle: FileHandle | undefined;
    try {
        handle = await open(temporary, "wx", existing ? Number(existing.mode & 0o7777n) : 0o644);
        await handle.writeFile(data);
        if (existing) {
            await handle.chmod(Number(existing.mode & 0o7777n));
            await keepOwner(handle, existing);
        }
        await handle.sync();
        const signature = await fileSignature(handle);
        await handle.close();
        handle = undefined;
        try {
            await rename(temporary, target);
        } catch (error) {
            if (existing && RENAME_IMPOSSIBLE.has(codeOf(error))) {
                await unlink(temporary).catch(() => undefined);
                return await writeInPlace(target, data);
            }
            throw error;
        }
        await syncDirectory(dirname(target));
        return { method: "rename", signature };
    } catch (error) {
        await handle?.close().catch(() => undefined);
        await unlink(temporary).catch(() => undefined);
        if (existing && (TEMPORARY_IMPOSSIBLE.has(codeOf(error)) || error instanceof OwnerNotKeptError)) {
            return await writeInPlace(target, data);
        }
        throw error;
    }
}

/**
 * Removes temporary files that a killed writer left beside `target` (their process is gone). Safe to
 * call at any time: a live writer's temporary file is never touched.
 */
export async function sweepTemporaries(target: string): Promise<number> {
    const prefix = `.${basename(target)}.`;
    let removed = 0;
    const names = await readdir(dirname(target)).catch(() => [] as string[]);
    for (const name of names) {
        const pid = name.startsWith(prefix) ? /\.(\d+)\.[0-9a-f]+\.pulumi-lifecycle\.tmp$/.exec(name)?.[1] : undefined;
        if (pid !== undefined && !isProcessAlive(Number(pid))) {
            await unlink(join(dirname(target), name)).then(
                () => removed++,
                () => undefined,
            );
        }
    }
    return removed;
}

/** Where an in-place write keeps the previous content until it has succeeded. */
export function backupPath(target: string): string {
    const digest = createHash("sha256").update(target).digest("hex").slice(0, 16);
    return join(tmpdir(), `pulumi-lifecycle-backup-${digest}-${basename(target)}`);
}

/**
 * Writes over the file itself: same inode, so mode and owner stay. Not atomic, so the old content is
 * saved first and written back if the write fails; new bytes are written before the file is cut to
 * length, so the file is never empty or shorter than the content it holds.
 */
async function writeInPlace(target: string, data: Uint8Array): Promise<WriteOutcome> {
    const handle = await open(target, "r+");
    try {
        const previous = await handle.readFile();
        const backup = backupPath(target);
        await writeFile(backup, previous, { mode: 0o600 });
        try {
            await handle.write(data, 0, data.length, 0);
            await handle.truncate(data.length);
            await handle.sync();
        } catch (error) {
            await handle.write(previous, 0, previous.length, 0).catch(() => undefined);
            await handle.truncate(previous.length).catch(() => undefined);
            throw error;
        }
        const signature = await fileSignature(handle);
        await unlink(backup).catch(() => undefined);
        return { method: "in-place", signature };
    } finally {
        await handle.close();
    }
}

class OwnerNotKeptError extends Error {}

async function keepOwner(handle: FileHandle, existing: { uid: bigint; gid: bigint }): Promise<void> {
    if (process.platform === "win32") return;
    const uid = Number(existing.uid);
    const gid = Number(existing.gid);
    if (uid === process.getuid?.() && gid === process.getgid?.()) return;
    try {
        await handle.chown(uid, gid);
    } catch {
        // We may write the file but not give a new file its owner: only an in-place write keeps it.
        throw new OwnerNotKeptError();
    }
}

async function syncDirectory(directory: string): Promise<void> {
    if (process.platform === "win32") return;
    const handle = await open(directory, "r").catch(() => undefined);
    await handle
        ?.sync()
        .catch(() => undefined)
        .finally(() => handle.close());
}

async function statOrUndefined(path: string) {
    return await stat(path, { bigint: true }).catch((error) => {
        if (codeOf(error) === "ENOENT") return undefined;
        throw error;
    });
}

/** A name for a temporary file beside `base`, which `sweepTemporaries` removes once its process is gone. */
export function temporaryName(base: string): string {
    return `.${base}.${process.pid}.${randomBytes(4).toString("hex")}.pulumi-lifecycle.tmp`;
}

/** The `code` of a Node.js system error, or "" for anything else. */
export function codeOf(error: unknown): string {
    return typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
}
