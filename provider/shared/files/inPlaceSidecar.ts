// In-place writes journaled in a sidecar file (sidecarRecord.ts), which every writer of the file finds,
// whoever runs it and whatever its $TMPDIR:
// - beside the target, `.<name>.pulumi-lifecycle.write`, where its directory may be written (a bind-mounted
//   /etc/hosts in a container, a file with ACLs or attributes);
// - else in one well-known shared directory, `/tmp/pulumi-lifecycle-shared` (mode 1777, checked on every
//   use: a real directory, sticky), as `write-<file digest>-<uid>`;
// - else (that directory unusable) in this user's private directory, where only writers of this user and
//   $TMPDIR find it.
// The hosts file itself only ever holds whole contents, ours or another tool's, and nothing of the journal
// a tool that ignores locks could copy.
//
// The sidecar is created exclusively (never through a symlink), readable by whoever may read the file,
// and flushed (with its directory) before the file is touched. Then: the file must still hold the old
// content (else a foreign writer changed it: the sidecar goes, FileChangedError); new lines at the end
// only are appended (O_APPEND: what a foreign writer appends meanwhile lands before ours, both whole);
// content that grows the file otherwise goes in up to the old end only, the rest appended, and foreign
// lines that landed between are journaled and moved past ours (inPlaceGrow.ts); otherwise (the file
// shrinks or keeps its length) the new content is written at 0, flushed, what a foreign writer appended
// meanwhile is kept after it (a file they rewrote is theirs: FileChangedError), and it is cut to length,
// flushed. Then the sidecar goes. A crash anywhere leaves the sidecar, and the next writer, under the
// lock, finishes the write when the file is in a state the write passes through (journaling a move it
// needs in a sidecar of its own when the one it finishes is another user's it may not write). A sidecar the file has
// moved past is only removed (or, another user's in the shared directory, left to its owner): it is never
// applied over a later write. A sidecar in the shared directory is trusted only from root, this user, the
// file's owner, or anyone when the file is writable by all: from anyone else it could make this process
// write what they may not.

import { createHash } from "node:crypto";
import {
    type BigIntStats,
    chmodSync,
    closeSync,
    constants,
    fstatSync,
    fsyncSync,
    ftruncateSync,
    lstatSync,
    mkdirSync,
    openSync,
    readdirSync,
    unlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { readAll, syncDirectory, writeAll } from "./descriptors";
import { codeOf } from "./errno";
import { FileChangedError } from "./fileChangedError";
import { appendTo, growInPlace, type JournalMove } from "./inPlaceGrow";
import { existingPrivateDirectory, privateDirectory } from "./privateDirectory";
import { finishedContent, isGrownInPlace, parseSidecar, type SidecarRecord, sidecarBytes } from "./sidecarRecord";
import { signatureOf } from "./signature";

const PERMISSION_CODES = new Set(["EACCES", "EPERM", "EROFS"]);

/** The shared directory: the same path for every user and $TMPDIR of the machine. */
export const SHARED_SIDECAR_DIRECTORY =
    process.platform === "win32" ? join(tmpdir(), "pulumi-lifecycle-shared") : "/tmp/pulumi-lifecycle-shared";

/** Where the sidecar of an in-place write of `target` lives when the target's directory may be written. */
export function sidecarPathFor(target: string): string {
    return join(dirname(target), `.${basename(target)}.pulumi-lifecycle.write`);
}

/** The name of this user's sidecar of `target` in the shared or the private directory. */
export function sidecarNameFor(target: string, uid: number = process.getuid?.() ?? 0): string {
    return `write-${createHash("sha256").update(target).digest("hex").slice(0, 16)}-${uid}`;
}

/**
 * Writes `data` over the open file `target` (`fd`), whose content is `previous`, journaled in a sidecar.
 * Throws FileChangedError when a foreign writer changed the file meanwhile (nothing of ours is left).
 */
export function writeWithSidecar(fd: number, previous: Uint8Array, data: Uint8Array, target: string): void {
    const info = fstatSync(fd, { bigint: true });
    const record: SidecarRecord = {
        previous: Buffer.from(previous),
        data: Buffer.from(data),
        previousSignature: signatureOf(info),
    };
    const path = createSidecar(target, sidecarBytes(record), sidecarMode(info.mode));
    if (!readAll(fd).equals(record.previous)) giveUp(path, target);
    if (data.length > previous.length && record.data.subarray(0, previous.length).equals(record.previous)) {
        // Only new lines at the end (a create): appended, so that what another tool appends meanwhile is
        // never written over; it lands before ours, and both stay whole.
        appendTo(target, record.data.subarray(previous.length));
        removeSidecar(path);
        return;
    }
    if (isGrownInPlace(record)) {
        // Written at 0 whole, its bytes past the old end would overwrite what another tool appended since
        // the check above: in place up to the old end only, the rest appended (inPlaceGrow.ts).
        if (!growInPlace(fd, target, journalIn(path), record)) giveUp(path, target, true);
        removeSidecar(path);
        return;
    }
    writeAll(fd, data, 0);
    fsyncSync(fd);
    const written = Buffer.concat([record.data, record.previous.subarray(data.length)]);
    const current = readWithWholeTail(fd, written.length);
    // A writer that ignores locks appended since the check above (`echo >>` lands past the old end, after
    // what we wrote over): keep what it appended after our content, rather than leave our write half done.
    // This writer knows its content went in, so it does not ask finishedContent: recovering from a crash,
    // that cannot tell a write that has not changed a byte yet (the last lines deleted, only the cut to
    // length left) from a later write that restored the old bytes, and so kept the deleted lines.
    const finished = !startsWith(current, written)
        ? finishedContent(current, "", record)
        : current.length === written.length
          ? record.data
          : Buffer.concat([record.data, current.subarray(written.length)]);
    if (!finished) giveUp(path, target, true);
    if (finished !== record.data) writeAll(fd, finished, 0);
    if (fstatSync(fd).size > finished.length) ftruncateSync(fd, finished.length);
    fsyncSync(fd);
    removeSidecar(path);
}

/**
 * Finishes the in-place write a crash cut short, if a sidecar of `target` (`fd`, read-write) says one
 * was; call it under the file's lock before reading. Answers whether there was a sidecar to act on.
 */
export function recoverWithSidecar(fd: number, target: string): boolean {
    let found = false;
    for (const path of sidecarPaths(target)) {
        const record = readTrusted(path, fd);
        if (record === "absent") continue;
        found = true;
        // Incomplete or damaged: the crash came before the file was touched. Else finish it, unless the
        // file moved on.
        const info = fstatSync(fd, { bigint: true });
        const current = readAll(fd);
        const finished = record && finishedContent(current, signatureOf(info), record);
        if (finished && !record.moved && record.data.length > record.previous.length) {
            // A file that grows is never written past its end but by O_APPEND (what another tool appends
            // meanwhile lies there): the steps the write had left, as it would have run them.
            growInPlace(fd, target, recoveryJournal(path, target, record, info.mode), record);
        } else if (finished) {
            writeAll(fd, finished, 0);
            if (fstatSync(fd).size > finished.length) ftruncateSync(fd, finished.length);
            fsyncSync(fd);
        }
        if (!removeSidecar(path) && path === sidecarPathFor(target)) leaveBehind(path);
    }
    return found;
}

/**
 * Sidecars beside a file that this process's recovery acted on (under the file's lock) but could not
 * remove: another user's, in a directory only they may write (root's, after a crash mid-write in a
 * root-only /etc). By path, with what identified the file then.
 */
const leftBehind = new Map<string, string>();

function identityOf(path: string): string | undefined {
    const info = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    return info && `${info.dev}:${info.ino}:${info.ctimeNs}`;
}

function leaveBehind(path: string): void {
    const identity = identityOf(path);
    if (identity) leftBehind.set(path, identity);
}

/** Whether the sidecar at `path` is the very one this process's recovery left behind. */
function isLeftBehind(path: string): boolean {
    const identity = leftBehind.get(path);
    return identity !== undefined && identityOf(path) === identity;
}

/** Whether an in-place write of `target` is under way, or was cut short: a sidecar of it exists. */
export function hasSidecar(target: string): boolean {
    return sidecarPaths(target).some((path) => lstatSync(path, { throwIfNoEntry: false }) !== undefined);
}

/**
 * The open file's content, read again (a few times at most) while what lies past `from` ends mid-line:
 * another tool's append that crosses a page is seen half done by a read in between, and keeping half of
 * it would cut its end off with the cut to length.
 */
function readWithWholeTail(fd: number, from: number): Buffer {
    let current = readAll(fd);
    for (let read = 0; read < 5 && current.length > from && current[current.length - 1] !== 0x0a; read++) {
        current = readAll(fd);
    }
    return current;
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
    return bytes.length >= prefix.length && bytes.subarray(0, prefix.length).equals(prefix);
}

/** Journals a move in the write's own sidecar at `path`, kept until the sidecar goes. */
function journalIn(path: string): JournalMove {
    return (moved) => {
        appendTo(path, moved);
        return () => undefined;
    };
}

/**
 * Where a recovery journals a move: in the sidecar it finishes, or, when that is another user's that it
 * may read but not write (beside the file, in a directory only its owner may write), in one of its own.
 */
function recoveryJournal(path: string, target: string, record: SidecarRecord, fileMode: bigint): JournalMove {
    return (moved) => {
        try {
            return journalIn(path)(moved);
        } catch (error) {
            if (!PERMISSION_CODES.has(codeOf(error))) throw error;
            const own = createSidecar(target, Buffer.concat([sidecarBytes(record), moved]), sidecarMode(fileMode), 1);
            return () => removeSidecar(own);
        }
    };
}

/** A sidecar's mode, from the file's: its owner's, and readable by whoever may read the file, to finish its write. */
function sidecarMode(fileMode: bigint): number {
    return 0o600 | Number(fileMode & 0o044n);
}

/**
 * Creates the sidecar holding `bytes` in the first place that takes it, from place `from` on (beside the
 * file, the shared directory, the private one); answers its path.
 */
function createSidecar(target: string, bytes: Buffer, mode: number, from = 0): string {
    const places: (() => string)[] = [
        () => sidecarPathFor(target),
        () => join(sharedDirectory(), sidecarNameFor(target)),
        () => join(privateDirectory(), sidecarNameFor(target)),
    ];
    for (const [index, place] of places.entries()) {
        if (index < from) continue;
        let path: string;
        let fd: number;
        try {
            path = place();
            if (index > 0) removeIfPresent(path); // a leftover of this user's, whose write the file moved past
            fd = openSync(
                path,
                constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
                mode,
            );
        } catch (error) {
            const code = codeOf(error);
            // Beside the file, the sidecar the recovery before this write acted on but could not remove
            // (`leftBehind`) must not stop every other user's writes until its owner writes again: the
            // file has moved past it, so it is never applied later, and ours goes elsewhere. Any other
            // sidecar there is a write under way (a writer that lost the lock while stopped and resumed):
            // EEXIST stands, and nothing is written.
            const taken = index === 0 && code === "EEXIST" && isLeftBehind(sidecarPathFor(target));
            if (index < places.length - 1 && (PERMISSION_CODES.has(code) || code === "EUNSAFEDIR" || taken)) {
                continue;
            }
            throw error;
        }
        try {
            writeAll(fd, bytes, 0);
            fsyncSync(fd);
        } catch (error) {
            removeSidecar(path);
            throw error;
        } finally {
            closeSync(fd);
        }
        syncDirectory(dirname(path));
        return path;
    }
    throw new Error("unreachable: the private directory is the last place");
}

/**
 * The shared directory, created when missing (mode 1777); refused (EUNSAFEDIR) when it is not a real
 * directory, or others may write it without the sticky bit. Its owner, whoever created it first, could
 * remove sidecars there, but could not forge one: each is trusted by its own owner (see `trusted`).
 */
function sharedDirectory(create = true): string {
    const path = SHARED_SIDECAR_DIRECTORY;
    if (create) {
        try {
            mkdirSync(path, { mode: 0o1777 });
            // The process umask cut the mode: every user must be able to create their sidecar there.
            chmodSync(path, 0o1777);
        } catch (error) {
            if (codeOf(error) !== "EEXIST") throw error;
        }
    }
    const info = lstatSync(path);
    const openToOthers = (info.mode & 0o022) !== 0 && (info.mode & 0o1000) === 0;
    if (!info.isDirectory() || (process.platform !== "win32" && openToOthers)) {
        throw Object.assign(
            new Error(
                `${path} is not a safe shared directory (not a directory, or open to others without the sticky bit)`,
            ),
            { code: "EUNSAFEDIR" },
        );
    }
    return path;
}

/** Every place a sidecar of `target` may be: beside it, in the shared directory, in the private one. */
function sidecarPaths(target: string): string[] {
    const paths = [sidecarPathFor(target)];
    const prefix = sidecarNameFor(target, 0).replace(/-0$/, "-");
    try {
        const shared = sharedDirectory(false);
        for (const name of readdirSync(shared)) if (name.startsWith(prefix)) paths.push(join(shared, name));
    } catch {
        // Absent or unsafe: nothing there to trust.
    }
    try {
        const directory = existingPrivateDirectory();
        if (directory) paths.push(join(directory, sidecarNameFor(target)));
    } catch {
        // Not private (refused): nothing of ours can be there.
    }
    return paths;
}

/**
 * The record in the sidecar at `path`: "absent" when there is none, or none that may be trusted (not a
 * regular file, or in the shared directory from a user who could not have written the file anyway);
 * undefined when it is incomplete or damaged.
 */
function readTrusted(path: string, fd: number): SidecarRecord | undefined | "absent" {
    let sidecar: number;
    try {
        sidecar = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0));
    } catch (error) {
        if (codeOf(error) === "ENOENT" || PERMISSION_CODES.has(codeOf(error)) || codeOf(error) === "ELOOP")
            return "absent";
        throw error;
    }
    try {
        const info = fstatSync(sidecar, { bigint: true });
        if (!info.isFile() || !trusted(path, info, fstatSync(fd, { bigint: true }))) return "absent";
        return parseSidecar(readAll(sidecar));
    } finally {
        closeSync(sidecar);
    }
}

function trusted(path: string, sidecar: BigIntStats, file: BigIntStats): boolean {
    if (dirname(path) !== SHARED_SIDECAR_DIRECTORY) return true;
    const owner = sidecar.uid;
    return (
        owner === 0n || owner === BigInt(process.getuid?.() ?? 0) || owner === file.uid || (file.mode & 0o002n) !== 0n
    );
}

/** Leaves the file to the foreign writer that changed it; `shown` when our bytes were in it for a moment. */
function giveUp(path: string, target: string, shown = false): never {
    removeSidecar(path);
    throw new FileChangedError(target, shown);
}

/** Removes the sidecar at `path`; answers whether it is gone. */
function removeSidecar(path: string): boolean {
    const gone = removeIfPresent(path);
    syncDirectory(dirname(path));
    return gone;
}

/** Removes `path`; answers whether it is gone (false when it stays: another user's, left to its owner). */
function removeIfPresent(path: string): boolean {
    try {
        unlinkSync(path);
        return true;
    } catch (error) {
        return codeOf(error) === "ENOENT";
    }
}
