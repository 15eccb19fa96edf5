// The one directory this package may create in $TMPDIR: $TMPDIR/pulumi-lifecycle-<uid>, mode 0700,
// checked on every use (ours, a real directory and not a symlink, no access for others). What the package
// keeps per user lives inside it, where no other user can plant a symlink or a file, so names there may
// be predictable. Nothing a writer of a shared file must find belongs here: another user, or the same
// user with another $TMPDIR, would not find it.

import { lstatSync, mkdirSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codeOf } from "./errno";

/** This user's private directory; created when missing, refused when not private. */
export function privateDirectory(): string {
    const directory = privateDirectoryPath();
    try {
        mkdirSync(directory, { mode: 0o700 });
    } catch (error) {
        if (codeOf(error) !== "EEXIST") throw error;
    }
    return checked(directory, lstatSync(directory));
}

/**
 * The private directory when it exists (refused when not private), or undefined: for readers, which must
 * not create it in every user's $TMPDIR just to find it empty.
 */
export function existingPrivateDirectory(): string | undefined {
    const directory = privateDirectoryPath();
    // Asked before every read of a journal or sidecar, where it is usually absent: no error to build then.
    const info = lstatSync(directory, { throwIfNoEntry: false });
    return info && checked(directory, info);
}

function privateDirectoryPath(): string {
    return join(tmpdir(), `pulumi-lifecycle-${process.getuid?.() ?? 0}`);
}

/** `directory`, unless `info` shows it is not a directory only this user may enter. */
function checked(directory: string, info: Stats): string {
    const uid = process.getuid?.() ?? 0;
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
                `refusing to keep private files in ${directory}: ${problem}. Someone may be trying to make this ` +
                    "process write elsewhere; remove it (or set TMPDIR to a private directory) and retry.",
            ),
            { code: "EUNSAFEDIR" },
        );
    }
    return directory;
}
