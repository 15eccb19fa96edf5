// In-place writes journaled in a sidecar file: beside the target where its directory may be written (a
// bind-mounted /etc/hosts in a container, a file with ACLs or attributes), so that every writer of the file
// finds it; else in this user's private directory (privateDirectory.ts), where only writers of this user
// and $TMPDIR find it. The hosts file itself only ever holds whole contents, ours or another tool's, and
// nothing of the journal a tool that ignores locks could copy.
//
// The sidecar is created exclusively (never through a symlink), holds the old and the new content with
// their digests, and is flushed (with its directory) before the file is touched. Then: the file must
// still hold the old content (else a foreign writer changed it: the sidecar goes, FileChangedError); the
// new content is written at 0, flushed; the file must hold it, and what a foreign writer appended
// meanwhile is kept after it (a file they rewrote is theirs: FileChangedError); it is cut to length,
// flushed; the sidecar goes. A crash anywhere leaves the sidecar, and the next writer that sees it, under
// the lock, finishes the write when the file is in a state the write passes through (the old content,
// the new one, or the new over the old up to some byte), keeping bytes appended after it when the
// sidecar is beside the file; a file that has moved on since is left as it is, and only the sidecar goes,
// so no stale copy is ever applied over a later write.

import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { readAll, writeAll } from "./descriptors";
import { codeOf } from "./errno";
import { FileChangedError } from "./fileChangedError";
import { existingPrivateDirectory, privateDirectory } from "./privateDirectory";

const MAGIC = Buffer.from("pulumi-lifecycle in-place write v1\n", "latin1");
const END = Buffer.from("\npulumi-lifecycle in-place write end\n", "latin1");
const PERMISSION_CODES = new Set(["EACCES", "EPERM", "EROFS"]);

/** Where the sidecar of an in-place write of `target` lives when the target's directory may be written. */
export function sidecarPathFor(target: string): string {
    return join(dirname(target), `.${basename(target)}.pulumi-lifecycle.write`);
}

/** Where it lives otherwise: in `directory`, this user's private directory. */
export function privateSidecarPathFor(target: string, directory: string): string {
    const digest = createHash("sha256").update(target).digest("hex").slice(0, 16);
    return join(directory, `write-${digest}-${basename(target)}`);
}

/** Every place a sidecar of `target` may be: beside it, and this user's private directory if it exists. */
function sidecarPaths(target: string): string[] {
    const paths = [sidecarPathFor(target)];
    try {
        const directory = existingPrivateDirectory();
        if (directory) paths.push(privateSidecarPathFor(target, directory));
    } catch {
        // Not private (refused): nothing of ours can be there.
    }
    return paths;
}

/** The sidecar's bytes: MAGIC, both lengths, both digests, the old content, the new one, END. */
export function sidecarRecord(previous: Uint8Array, data: Uint8Array): Buffer {
    const header = Buffer.alloc(16 + 64);
    header.writeBigUInt64BE(BigInt(previous.length), 0);
    header.writeBigUInt64BE(BigInt(data.length), 8);
    createHash("sha256").update(previous).digest().copy(header, 16);
    createHash("sha256").update(data).digest().copy(header, 48);
    return Buffer.concat([MAGIC, header, previous, data, END]);
}

/** The old and new content a sidecar holds, or undefined when it is incomplete (a crash while writing it). */
export function parseSidecar(bytes: Buffer): { previous: Buffer; data: Buffer } | undefined {
    const at = MAGIC.length;
    if (bytes.length < at + 80 || !bytes.subarray(0, at).equals(MAGIC)) return undefined;
    const n = Number(bytes.readBigUInt64BE(at));
    const m = Number(bytes.readBigUInt64BE(at + 8));
    const start = at + 80;
    if (bytes.length !== start + n + m + END.length || !bytes.subarray(start + n + m).equals(END)) return undefined;
    const previous = bytes.subarray(start, start + n);
    const data = bytes.subarray(start + n, start + n + m);
    const digest = (content: Buffer) => createHash("sha256").update(content).digest();
    if (!digest(previous).equals(bytes.subarray(at + 16, at + 48))) return undefined;
    if (!digest(data).equals(bytes.subarray(at + 48, at + 80))) return undefined;
    return { previous, data };
}

/** Where a write(2) that a crash cut short can have stopped: between pages, or at its end. */
const PAGE = 4096;

/**
 * What a file whose interrupted write the sidecar describes should become: the new content, plus what was
 * appended after the write's bytes, when the file is in a state the write passes through (the old content,
 * the new one written over it up to some byte, the new one before or after its cut); undefined when a
 * foreign writer has changed it since.
 */
export function finishedContent(
    current: Buffer,
    previous: Buffer,
    data: Buffer,
    appendsAllowed = true,
): Buffer | undefined {
    /** The file when the new content has been written over the old up to byte `cut`. */
    const passing = (cut: number) =>
        Buffer.concat([data.subarray(0, cut), cut < previous.length ? previous.subarray(cut) : Buffer.alloc(0)]);
    let k = 0;
    while (k < current.length && k < data.length && current[k] === data[k]) k++;
    if (current.equals(passing(k)) || current.equals(data)) return data;
    if (!appendsAllowed) return undefined;
    // Longer than any such state: a writer that ignores locks appended after the crash. Where the write
    // stopped is then told by where a write can stop: whole (before its cut, or after), or between pages
    // (the appended bytes may begin as ours did).
    const stops = [passing(data.length), data];
    for (let cut = Math.floor((data.length - 1) / PAGE) * PAGE; cut >= 0; cut -= PAGE) stops.push(passing(cut));
    for (const state of stops) {
        if (current.length > state.length && current.subarray(0, state.length).equals(state)) {
            return Buffer.concat([data, current.subarray(state.length)]);
        }
    }
    return undefined;
}

/**
 * Writes `data` over the open file `target` (`fd`), whose content is `previous`, journaled in a sidecar.
 * Throws FileChangedError when a foreign writer changed the file meanwhile (nothing of ours is left).
 */
export function writeWithSidecar(fd: number, previous: Uint8Array, data: Uint8Array, target: string): void {
    let path = sidecarPathFor(target);
    let sidecar: number;
    try {
        sidecar = createSidecar(path);
    } catch (error) {
        if (!PERMISSION_CODES.has(codeOf(error))) throw error;
        path = privateSidecarPathFor(target, privateDirectory());
        sidecar = createSidecar(path);
    }
    try {
        writeAll(sidecar, sidecarRecord(previous, data), 0);
        fsyncSync(sidecar);
    } catch (error) {
        closeSync(sidecar);
        removeSidecar(path);
        throw error;
    }
    closeSync(sidecar);
    syncDirectory(dirname(path));
    if (!readAll(fd).equals(previous)) giveUp(path, target);
    writeAll(fd, data, 0);
    fsyncSync(fd);
    const current = readAll(fd);
    const expected = Buffer.concat([data, Buffer.from(previous).subarray(data.length)]);
    // A writer that ignores locks wrote meanwhile (an append that landed as the content went in): finish
    // over what it left, keeping what it appended, rather than leave our write half done.
    const finished = current.equals(expected)
        ? data
        : finishedContent(current, Buffer.from(previous), Buffer.from(data));
    if (!finished) return giveUp(path, target);
    if (finished !== data) writeAll(fd, finished, 0);
    if (fstatSync(fd).size > finished.length) ftruncateSync(fd, finished.length);
    fsyncSync(fd);
    removeSidecar(path);
}

/** Creates a sidecar: exclusively, never through a symlink, readable by its owner only. */
function createSidecar(path: string): number {
    return openSync(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
        0o600,
    );
}

/**
 * Finishes the in-place write a crash cut short, if a sidecar of `target` (`fd`, read-write) that this
 * process can see says one was; call it under the file's lock before reading. A sidecar whose write the
 * file has moved past (a later write, or another tool's) is only removed, never applied: no stale copy
 * ever goes over a later write. Answers whether there was a sidecar.
 */
export function recoverWithSidecar(fd: number, target: string): boolean {
    let found = false;
    for (const path of sidecarPaths(target)) {
        let bytes: Buffer;
        try {
            const sidecar = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
            try {
                bytes = readAll(sidecar);
            } finally {
                closeSync(sidecar);
            }
        } catch (error) {
            if (codeOf(error) === "ENOENT") continue;
            throw error;
        }
        found = true;
        const record = parseSidecar(bytes);
        // Incomplete: the crash came before the file was touched. Complete: finish it, unless the file moved
        // on. Beside the file, every writer of ours finished it before writing, so bytes after a state of the
        // write can only be another tool's append; a private sidecar other writers did not see, so the file
        // must be exactly such a state (anything more may be a later write of theirs).
        const beside = path === sidecarPathFor(target);
        const finished = record && finishedContent(readAll(fd), record.previous, record.data, beside);
        if (finished) {
            writeAll(fd, finished, 0);
            if (fstatSync(fd).size > finished.length) ftruncateSync(fd, finished.length);
            fsyncSync(fd);
        }
        removeSidecar(path);
    }
    return found;
}

/** Whether an in-place write of `target` is under way, or was cut short: a sidecar this process can see exists. */
export function hasSidecar(target: string): boolean {
    return sidecarPaths(target).some((path) => {
        try {
            closeSync(openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0)));
            return true;
        } catch {
            return false;
        }
    });
}

function giveUp(path: string, target: string): never {
    removeSidecar(path);
    throw new FileChangedError(target);
}

function removeSidecar(path: string): void {
    try {
        unlinkSync(path);
    } catch {
        // Gone already.
    }
    syncDirectory(dirname(path));
}

function syncDirectory(directory: string): void {
    try {
        const fd = openSync(directory, "r");
        try {
            fsyncSync(fd);
        } finally {
            closeSync(fd);
        }
    } catch {
        // Some file systems cannot sync a directory.
    }
}
