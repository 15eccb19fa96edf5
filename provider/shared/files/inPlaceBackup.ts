// The backup an in-place write keeps of a file's previous content, and the recovery of a write that a
// crash cut short.
//
// Backups live in this user's private directory (privateDirectory.ts), under a name derived from the
// target. They are
// written to an exclusive temporary file that never follows a symlink, flushed, then linked to their
// final name, which fails rather than replace an existing backup: a backup that exists is the only good
// copy of a file whose in-place write did not finish, and is restored (by the next writer, under the
// lock) before anything else reads or writes that file.

import { createHash } from "node:crypto";
import { closeSync, constants, fsyncSync, linkSync, openSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { overwrite, writeAll } from "./descriptors";
import { existingPrivateDirectory, privateDirectory } from "./privateDirectory";
import { isProcessAlive } from "./processes";

/** Where an in-place write of `target` keeps the previous content until it has succeeded. */
export function backupPath(target: string, directory = privateDirectory()): string {
    const digest = createHash("sha256").update(target).digest("hex").slice(0, 16);
    return join(directory, `backup-${digest}-${basename(target)}`);
}

/**
 * Saves `previous` as the backup of `target`: exclusive, never through a symlink, flushed before it
 * takes its name. Throws EEXIST rather than replace a backup that is already there.
 */
export function saveBackup(target: string, previous: Uint8Array): string {
    const backup = backupPath(target);
    const temporary = `${backup}.${process.pid}.tmp`;
    sweepBackupTemporaries(backup);
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
 * Removes the temporaries that writers killed while saving a backup of the same target left behind
 * (only this user can create files here, so each is ours, and a dead pid's is abandoned), and any of
 * this pid's own.
 */
function sweepBackupTemporaries(backup: string): void {
    const prefix = `${basename(backup)}.`;
    for (const name of readdirSync(dirname(backup))) {
        const pid = name.startsWith(prefix) ? /^\.(\d+)\.tmp$/.exec(name.slice(prefix.length - 1))?.[1] : undefined;
        if (pid === undefined || (Number(pid) !== process.pid && isProcessAlive(Number(pid)))) continue;
        try {
            unlinkSync(join(dirname(backup), name));
        } catch {
            // Removed meanwhile.
        }
    }
}

/**
 * Restores `target` from its backup when an in-place write was cut short (the backup is still there),
 * then removes the backup. Call it under the file's lock, before reading the file. Answers whether it
 * restored anything.
 */
export function recoverInPlaceWriteSync(target: string): boolean {
    let backup: string;
    let previous: Buffer;
    // Every batch of edits calls this: look in the private directory only if it exists, never create it.
    const directory = existingPrivateDirectory();
    if (directory === undefined) return false;
    try {
        backup = backupPath(target, directory);
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
