// The backup an in-place write keeps of a file's previous content, and the recovery of a write that a
// crash cut short.
//
// Backups live in a directory only this user can enter ($TMPDIR/pulumi-lifecycle-<uid>, mode 0700,
// checked: ours, a real directory, no access for others), under a name derived from the target. They are
// written to an exclusive temporary file that never follows a symlink, flushed, then linked to their
// final name, which fails rather than replace an existing backup: a backup that exists is the only good
// copy of a file whose in-place write did not finish, and is restored (by the next writer, under the
// lock) before anything else reads or writes that file.

import { createHash } from "node:crypto";
import {
    closeSync,
    constants,
    fsyncSync,
    linkSync,
    lstatSync,
    mkdirSync,
    openSync,
    readFileSync,
    unlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { overwrite, writeAll } from "./descriptors";

/** The private directory holding this user's backups; created when missing, refused when not private. */
export function backupDirectory(): string {
    const uid = process.getuid?.() ?? 0;
    const directory = join(tmpdir(), `pulumi-lifecycle-${uid}`);
    try {
        mkdirSync(directory, { mode: 0o700 });
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const info = lstatSync(directory);
    const problem = !info.isDirectory()
        ? "it is not a directory (a symlink, or a file)"
        : process.platform !== "win32" && info.uid !== uid
          ? `it belongs to uid ${info.uid}, not to this user (${uid})`
          : process.platform !== "win32" && (info.mode & 0o077) !== 0
            ? `others may enter it (mode ${(info.mode & 0o777).toString(8)})`
            : undefined;
    if (problem) {
        throw Object.assign(
            new Error(
                `refusing to keep a backup in ${directory}: ${problem}. Someone may be trying to make this ` +
                    "process write elsewhere; remove it (or set TMPDIR to a private directory) and retry.",
            ),
            { code: "EUNSAFEDIR" },
        );
    }
    return directory;
}

/** Where an in-place write of `target` keeps the previous content until it has succeeded. */
export function backupPath(target: string): string {
    const digest = createHash("sha256").update(target).digest("hex").slice(0, 16);
    return join(backupDirectory(), `backup-${digest}-${basename(target)}`);
}

/**
 * Saves `previous` as the backup of `target`: exclusive, never through a symlink, flushed before it
 * takes its name. Throws EEXIST rather than replace a backup that is already there.
 */
export function saveBackup(target: string, previous: Uint8Array): string {
    const backup = backupPath(target);
    const temporary = `${backup}.${process.pid}.tmp`;
    try {
        // Only this user can create files here: a leftover is ours, from a process with this pid.
        unlinkSync(temporary);
    } catch {
        // None: the usual case.
    }
    const fd = openSync(
        temporary,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
        0o600,
    );
    try {
        writeAll(fd, previous, 0);
        fsyncSync(fd);
    } finally {
        closeSync(fd);
    }
    try {
        linkSync(temporary, backup);
    } finally {
        unlinkSync(temporary);
    }
    return backup;
}

/**
 * Restores `target` from its backup when an in-place write was cut short (the backup is still there),
 * then removes the backup. Call it under the file's lock, before reading the file. Answers whether it
 * restored anything.
 */
export function recoverInPlaceWriteSync(target: string): boolean {
    let backup: string;
    let previous: Buffer;
    try {
        backup = backupPath(target);
        const fd = openSync(backup, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
        try {
            previous = readFileSync(fd);
        } finally {
            closeSync(fd);
        }
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
        throw error;
    }
    const fd = openSync(target, "r+");
    try {
        overwrite(fd, previous);
    } finally {
        closeSync(fd);
    }
    unlinkSync(backup);
    return true;
}
