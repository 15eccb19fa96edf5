// Crash-safe replacement of a file's content.
//
// The new bytes go to a temporary file beside the target, are flushed to disk, get the target's mode and
// owner, and are renamed over it: a reader (or a crash) sees the old file or the new one, never a partial
// one. Where that is impossible or would lose something (a bind-mounted file gives EBUSY or EXDEV, as
// Docker's /etc/hosts does; a directory we may not write; an owner we may not give the new file; ACLs or
// extended attributes a new file would not carry) the file is written in place instead, journaled so that
// the next writer finishes a write a crash cut short (inPlaceSidecar.ts). A file without write permission
// is refused as `echo >>` would refuse it, even where its directory would allow a rename.
//
// The system calls are synchronous on purpose: each takes microseconds, and a writer holding a lock must
// not wait behind other work on the event loop between them (a busy provider process would otherwise
// hold the lock, and its callers, for many event-loop turns per write). One is not: the flush of a big
// file's new content takes milliseconds, and `writeFileAtomic` has the thread pool do it while this thread
// does the caller's own work (`BeforeChange`), which would otherwise follow it.

import {
    accessSync,
    type BigIntStats,
    closeSync,
    constants,
    fchmodSync,
    fchownSync,
    fstatSync,
    fsync,
    fsyncSync,
    openSync,
    renameSync,
    statSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { remembered } from "../remembered";
import { type FileContent, joinContent, readAll, syncDirectory, writeAll, writeAllContent } from "./descriptors";
import { codeOf } from "./errno";
import { hasExtendedAttributes } from "./extendedAttributes";
import { FileChangedError } from "./fileChangedError";
import { writeWithSidecar } from "./inPlaceSidecar";
import { fileSignatureSync, signatureOf } from "./signature";
import { removeQuietly, temporaryName } from "./temporaryFiles";

/** How a write reached the disk. */
export type WriteMethod = "rename" | "in-place";

/** The signature of a write that left more than its own content (matches no file). */
export const UNVOUCHED = "unvouched";

/** What a write did, and the identity of the file it left, for change detection. */
export interface WriteOutcome {
    readonly method: WriteMethod;
    /** `dev:ino:size:mtime` of the written file, as `fileSignature` computes it; UNVOUCHED when it holds more than the write. */
    readonly signature: string;
}

/** What a write checks just before it replaces the file. */
export interface WriteGuards {
    /**
     * The signature of the content the new bytes were computed from ("" for no file): if the file is no
     * longer that content, FileChangedError is thrown and nothing is written.
     */
    readonly unchangedSince?: string;
    /**
     * Called immediately before the file is replaced (the lock's `verify`): throwing writes nothing. The
     * synchronous local writer needs it to answer at once; the remote one awaits it.
     */
    readonly beforeCommit?: () => void | Promise<void>;
}

/** Rename errors that mean "this file cannot be replaced by rename", not "the write failed". */
const RENAME_IMPOSSIBLE = new Set(["EBUSY", "EXDEV", "EPERM", "EACCES"]);
/** Errors creating or preparing the temporary file that an in-place write may still get around. */
const TEMPORARY_IMPOSSIBLE = new Set(["EACCES", "EPERM", "EROFS"]);

export { fileSignatureSync, signatureOf } from "./signature";

/**
 * Work of the caller's that must be done before the file changes, and may be done while the new content
 * flushes to disk (the hosts store's create journal, and its answers): run once, before the target is
 * renamed over or written in place. If it throws, nothing is written and the write throws its error.
 */
export type BeforeChange = () => void;

/**
 * Replaces the content of `target` (a real path, symlinks already resolved) with `data` (one buffer, or
 * the stretches it is made of, written without joining them where the file is replaced). Creates the file
 * (mode 0644) when it does not exist. Keeps mode and owner, and ACLs and extended attributes (by writing
 * in place where the file has them, or is empty). Throws the underlying error when neither the rename nor the
 * in-place write is possible, or the file may not be written (EACCES); the file is then unchanged.
 *
 * `guards` are checked as late as possible, after the new bytes are on disk and just before they replace
 * the file: a foreign change (FileChangedError) or a lost lock (`beforeCommit` throws) writes nothing.
 */
export function writeFileAtomicSync(
    target: string,
    data: Uint8Array | FileContent,
    guards: WriteGuards = {},
    beforeChange: BeforeChange = () => undefined,
): WriteOutcome {
    const steps = replacement(target, data, guards, remembered(beforeChange));
    for (let step = steps.next(); ; ) {
        if (step.done) return step.value;
        try {
            fsyncSync(step.value);
        } catch (error) {
            step = steps.throw(error);
            continue;
        }
        step = steps.next();
    }
}

/**
 * `writeFileAtomicSync`, with the new content's flush to disk (the longest wait of a write) done by the
 * thread pool while this thread runs `beforeChange`: the two overlap instead of following each other.
 * Every other system call stays synchronous, so the event loop runs nothing else between them.
 */
export async function writeFileAtomic(
    target: string,
    data: Uint8Array | FileContent,
    guards: WriteGuards,
    beforeChange: BeforeChange,
): Promise<WriteOutcome> {
    const work = remembered(beforeChange);
    const steps = replacement(target, data, guards, work);
    for (let step = steps.next(); ; ) {
        if (step.done) return step.value;
        const flushed = new Promise<unknown>((resolve) => fsync(step.value as number, resolve));
        let failure: { error: unknown } | undefined;
        try {
            work();
        } catch (error) {
            failure = { error };
        }
        // Always waited for: the descriptor is closed, and the temporary file removed, only after it.
        const flushError = await flushed;
        failure ??= flushError ? { error: flushError } : undefined;
        step = failure ? steps.throw(failure.error) : steps.next();
    }
}

/**
 * The steps of a replacement, with the flush of the temporary file left to the driver: it yields the
 * descriptor to flush, and is resumed once the flush is done (or thrown into with its error).
 */
function* replacement(
    target: string,
    data: Uint8Array | FileContent,
    guards: WriteGuards,
    beforeChange: BeforeChange,
): Generator<number, WriteOutcome, undefined> {
    const content: FileContent = data instanceof Uint8Array ? [data] : data;
    const inPlace = () => {
        beforeChange();
        return writeInPlace(target, joinContent(content), guards);
    };
    const existing = statOrUndefined(target);
    if (existing) {
        // Refused as `echo >> file` is, rather than replaced behind the permission by a rename.
        accessSync(target, constants.W_OK);
        // An empty file may be a tool's rewrite between its truncation and its write (`cat new > file`):
        // replaced, the tool's write would go into the file our rename took away, and its whole content
        // with it. Written in place, that write lands over ours instead, and nothing of the file is lost.
        if (existing.size === 0n || hasExtendedAttributes(target)) return inPlace();
    }
    const temporary = join(dirname(target), temporaryName(basename(target)));
    let fd: number | undefined;
    try {
        fd = openSync(temporary, "wx", existing ? Number(existing.mode & 0o7777n) : 0o644);
        writeAllContent(fd, content, 0);
        if (existing) {
            fchmodSync(fd, Number(existing.mode & 0o7777n));
            keepOwner(fd, existing);
        }
        yield fd;
        const signature = fileSignatureSync(fd);
        closeSync(fd);
        fd = undefined;
        // The file about to be replaced, held open: a writer that ignores locks and opened it before our
        // rename writes into it even after (its write would vanish with it).
        const replaced = existing && guards.unchangedSince !== undefined ? openReplaced(target) : undefined;
        try {
            if (guards.unchangedSince !== undefined) assertUnchanged(target, guards.unchangedSince);
            beforeChange();
            guards.beforeCommit?.();
            try {
                renameSync(temporary, target);
            } catch (error) {
                if (existing && RENAME_IMPOSSIBLE.has(codeOf(error))) {
                    removeQuietly(temporary);
                    return inPlace();
                }
                throw error;
            }
            syncDirectory(dirname(target));
            if (replaced !== undefined && existing) {
                putBackWhatWasWrittenInto(replaced, target, guards.unchangedSince as string, existing.size);
            }
        } finally {
            if (replaced !== undefined) closeQuietly(replaced);
        }
        return { method: "rename", signature };
    } catch (error) {
        if (fd !== undefined) closeQuietly(fd);
        removeQuietly(temporary);
        // (Caller's work that failed fails the in-place write too, before it writes: it is `remembered`.)
        if (existing && (TEMPORARY_IMPOSSIBLE.has(codeOf(error)) || error instanceof OwnerNotKeptError)) {
            return inPlace();
        }
        throw error;
    }
}

/** The file at `target`, open for reading, or undefined when it cannot be (no longer there, say). */
function openReplaced(target: string): number | undefined {
    try {
        return openSync(target, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
        return undefined;
    }
}

/**
 * After our rename: if the file we replaced (`replaced`, read as `readAs`, `readSize` bytes) was written
 * meanwhile, by a writer that ignores locks and held it open (an append, a tool rewriting it in place),
 * that write went into a file no longer there. Its content is put back in place, and FileChangedError makes the caller
 * redo its edits on it: the tool's write is not lost to ours. A file it emptied is not put back (see below).
 */
function putBackWhatWasWrittenInto(replaced: number, target: string, readAs: string, readSize: bigint): void {
    if (fileSignatureSync(replaced) === readAs) return;
    let theirs = readAll(replaced);
    // Let a write still going into it finish: read until two reads agree (a few times at most).
    for (let read = 0; read < 5; read++) {
        const again = readAll(replaced);
        if (again.equals(theirs)) break;
        theirs = again;
    }
    // Shorter than it was read: truncated by a tool that rewrites it in place (`cat new > hosts`), whose
    // write may not have landed yet (what another tool appends meanwhile lands first). Put back then, it
    // would take everything with it (the multi-writer suite lost a whole base file so): wait for it.
    if (BigInt(theirs.length) < readSize) theirs = settled(replaced, theirs);
    // Still empty: the tool's write, if any, lands in the file our rename took away, out of reach. Ours
    // stays: only that tool's change is lost.
    if (theirs.length === 0) return;
    const temporary = join(dirname(target), temporaryName(basename(target)));
    const info = fstatSync(replaced, { bigint: true });
    const fd = openSync(temporary, "wx", Number(info.mode & 0o7777n));
    try {
        writeAll(fd, theirs, 0);
        fchmodSync(fd, Number(info.mode & 0o7777n));
        try {
            keepOwner(fd, info);
        } catch {
            // Their content, under our owner: better than lost.
        }
        fsyncSync(fd);
    } finally {
        closeSync(fd);
    }
    renameSync(temporary, target);
    syncDirectory(dirname(target));
    throw new FileChangedError(target, true);
}

/** How long (ms) a replaced file being rewritten must stay unchanged to count as written, and the longest wait (here and over SFTP). */
export const REWRITE_SETTLED_MS = 5;
export const REWRITE_WAIT_MS = 100;
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/** The content of `fd` once it stayed unchanged for REWRITE_SETTLED_MS (or REWRITE_WAIT_MS passed), from `current`. */
function settled(fd: number, current: Buffer): Buffer {
    let content = current;
    for (let waited = 0, stable = 0; waited < REWRITE_WAIT_MS && stable < REWRITE_SETTLED_MS; waited++) {
        Atomics.wait(SLEEPER, 0, 0, 1);
        const again = readAll(fd);
        stable = again.equals(content) ? stable + 1 : 0;
        content = again;
    }
    return content;
}

/**
 * Writes over the file itself: same inode, so mode, owner, ACLs and attributes stay. Journaled in a
 * sidecar (inPlaceSidecar.ts), so a crash at any point is finished by the next writer, and a write that
 * finds the file changed by another writer leaves it to that writer.
 */
function writeInPlace(target: string, data: Uint8Array, guards: WriteGuards): WriteOutcome {
    const fd = openSync(target, constants.O_RDWR | (constants.O_NOFOLLOW ?? 0));
    try {
        const { bytes: previous, signature } = readSigned(fd);
        if (guards.unchangedSince !== undefined && (signature === UNVOUCHED || signature !== guards.unchangedSince)) {
            throw new FileChangedError(target);
        }
        guards.beforeCommit?.();
        writeWithSidecar(fd, previous, data, target);
        // A writer that ignores locks may have appended meanwhile, kept after our content, or rewritten the
        // file since: then the file is not `data`, and no signature may vouch for it (the caller reads again).
        const written = readSigned(fd);
        return { method: "in-place", signature: written.bytes.equals(data) ? written.signature : UNVOUCHED };
    } finally {
        closeSync(fd);
    }
}

/**
 * The open file's content, and its signature when it kept it throughout the read (else UNVOUCHED). A tool
 * that rewrites the file in place without the lock (O_TRUNC, then its write) may run between a read and a
 * look at the signature: a signature taken after the read alone vouched once for the truncated file's,
 * with our content in the cache, and the next write appended its whole content to the tool's (the
 * multi-writer suite found the file doubled).
 */
function readSigned(fd: number): { bytes: Buffer; signature: string } {
    const before = fileSignatureSync(fd);
    const bytes = readAll(fd);
    return { bytes, signature: fileSignatureSync(fd) === before ? before : UNVOUCHED };
}

class OwnerNotKeptError extends Error {}

function keepOwner(fd: number, existing: { uid: bigint; gid: bigint }): void {
    if (process.platform === "win32") return;
    const uid = Number(existing.uid);
    const gid = Number(existing.gid);
    if (uid === process.getuid?.() && gid === process.getgid?.()) return;
    try {
        fchownSync(fd, uid, gid);
    } catch {
        // We may write the file but not give a new file its owner: only an in-place write keeps it.
        throw new OwnerNotKeptError();
    }
}

/** Throws FileChangedError when `target`'s signature is no longer `expected` ("" for no file). */
function assertUnchanged(target: string, expected: string): void {
    const current = statOrUndefined(target);
    if ((current ? signatureOf(current) : "") !== expected) throw new FileChangedError(target);
}

function statOrUndefined(path: string): BigIntStats | undefined {
    try {
        return statSync(path, { bigint: true });
    } catch (error) {
        if (codeOf(error) === "ENOENT") return undefined;
        throw error;
    }
}

function closeQuietly(fd: number): void {
    try {
        closeSync(fd);
    } catch {
        // Already closed or invalid: nothing left to release.
    }
}
