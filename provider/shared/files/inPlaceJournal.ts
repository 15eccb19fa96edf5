// In-place writes that any later writer can finish or undo, from the file alone.
//
// Where a file cannot be replaced by rename (a bind mount, a directory we may not write, attributes a new
// file would lose), it is written over itself, which a crash can cut short. So the new content first goes
// into the file itself, as a journal record appended past both the old and the new length:
//
//   old content (n bytes) [hole] MAGIC n m sha256(new) new-content END
//
// The record starts at the first multiple of 4096 at or past both lengths, a page and sector boundary,
// as SQLite aligns its journal headers: a write(2) that a signal cuts short stops between pages, and a
// power loss tears at sector granularity, so a record is either absent or begins with its whole header.
// flushed; then the new content (m bytes) is written at offset 0, flushed; then the file is cut to m
// bytes, which removes the record. A crash at any point leaves either the old content intact before an
// incomplete record (undo: cut at the record), or a complete record (redo: its content, plus whatever a
// writer that ignores locks appended after it). The record starts with a NUL byte and contains one more,
// and hosts files with NUL bytes are refused, so a record can never be a user's bytes. Every writer of
// the file, whoever and wherever it runs, finds the record in the file under the lock and recovers before
// it reads: there is no backup elsewhere that one writer's environment would hide from another's, and
// no stale copy that could be restored over a later write.
//
// A tool that ignores locks may copy the file mid-write and write the copy back, record included. Redoing
// that record is then still right: it gives the content the interrupted copy was of (what the copy would
// have held had it waited), plus what the tool appended; whatever was written between its read and its
// write-back, the tool had already overwritten.
//
// A writer that ignores locks may change the file while the record is being written. So just before the
// new content goes over the old, the file is read again: unless it holds exactly the old content and the
// record, the write is given up as a foreign change (the caller redoes its edits on their content), and
// the record, where it still is, is marked given up with one byte, touching nothing of theirs; recovery
// then removes it like an incomplete one. The file is only ever cut shorter, never extended (extending
// would fill it with NUL bytes a foreign cut left room for).

import { createHash } from "node:crypto";
import { fstatSync, fsyncSync, ftruncateSync } from "node:fs";
import { readAll, writeAll } from "./descriptors";
import { FileChangedError } from "./fileChangedError";

const MAGIC = Buffer.from("\0pulumi-lifecycle in-place write v1\n", "latin1");
/** What every record starts with; then the last byte of MAGIC, or GIVEN_UP once its write was given up. */
const RECORD_PREFIX = MAGIC.subarray(0, MAGIC.length - 1);
const GIVEN_UP = Buffer.from("!", "latin1");
const END = Buffer.from("\0pulumi-lifecycle in-place write end\n", "latin1");
/** n and m as 64-bit integers, then the SHA-256 of the new content. */
const HEADER_BYTES = 8 + 8 + 32;
/** Where records start: on a page (and sector) boundary. */
export const RECORD_ALIGNMENT = 4096;

/** The journal record of a write of `data` over a file of `oldLength` bytes, and where it goes. */
export function journalRecord(oldLength: number, data: Uint8Array): { position: number; bytes: Buffer } {
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeBigUInt64BE(BigInt(oldLength), 0);
    header.writeBigUInt64BE(BigInt(data.length), 8);
    createHash("sha256").update(data).digest().copy(header, 16);
    const position = Math.ceil(Math.max(oldLength, data.length) / RECORD_ALIGNMENT) * RECORD_ALIGNMENT;
    return { position, bytes: Buffer.concat([MAGIC, header, data, END]) };
}

/** What a file holding journal records should become (call under the lock); undefined when it holds none. */
export function recoveredContent(file: Buffer): Buffer | undefined {
    const first = file.indexOf(RECORD_PREFIX);
    if (first < 0) return undefined;
    // The last complete record is the newest write that reached its journal; a given-up one is not.
    let complete: { content: Buffer; end: number } | undefined;
    let givenUpEnd: number | undefined;
    for (let at = first; at >= 0; at = file.indexOf(RECORD_PREFIX, at + 1)) {
        const record = completeRecord(file, at);
        if (file[at + MAGIC.length - 1] === GIVEN_UP[0]) givenUpEnd = record?.end ?? givenUpEnd;
        else complete = record ?? complete;
    }
    // Bytes a writer that ignores locks appended after a record are kept; our own later records and holes
    // (which start with NUL) are not theirs.
    if (complete) return Buffer.concat([complete.content, appendedAfter(file, complete.end)]);
    // No record is complete and none was given up: a crash came while the first was being appended, before
    // the content was touched. The old content is everything before the first NUL (the hole or the
    // record). A given-up write's content is whatever the foreign writer left, with what it appended.
    const before = file.subarray(0, file.indexOf(0));
    return givenUpEnd === undefined ? before : Buffer.concat([before, appendedAfter(file, givenUpEnd)]);
}

/** What follows `end` up to the next NUL byte: what a writer that ignores locks appended after a record. */
function appendedAfter(file: Buffer, end: number): Buffer {
    const after = file.subarray(end);
    const nul = after.indexOf(0);
    return nul < 0 ? after : after.subarray(0, nul);
}

function completeRecord(file: Buffer, at: number): { content: Buffer; end: number } | undefined {
    const headerAt = at + MAGIC.length;
    if (headerAt + HEADER_BYTES > file.length) return undefined;
    const length = Number(file.readBigUInt64BE(headerAt + 8));
    const contentAt = headerAt + HEADER_BYTES;
    const end = contentAt + length + END.length;
    if (end > file.length || !file.subarray(contentAt + length, end).equals(END)) return undefined;
    const content = file.subarray(contentAt, contentAt + length);
    const digest = createHash("sha256").update(content).digest();
    return digest.equals(file.subarray(headerAt + 16, headerAt + 48)) ? { content, end } : undefined;
}

/** One system call of an in-place write, in the order they are made. */
export type JournalStep =
    | { readonly write: Uint8Array; readonly at: number }
    /** Cut the file to this length, if it is longer: never extends it. */
    | { readonly truncate: number }
    | { readonly sync: true }
    /**
     * Before the content goes over the old: the file must hold exactly `expect` (with `record` at its
     * place); else a foreign writer changed it, the record is marked given up, and the write stops with
     * FileChangedError.
     */
    | { readonly expect: Buffer; readonly record: { position: number; bytes: Buffer } }
    /**
     * After the content is written, before the cut: the file must hold exactly `written`; else a foreign
     * writer wrote over it (a copy it took mid-write, say). With our record still in place, the write is
     * finished from it, keeping what they appended; without, it stops with FileChangedError.
     */
    | { readonly written: Buffer; readonly record: { position: number; bytes: Buffer } };

/**
 * The steps that write `data` over a file whose content is `previous`: append the record past both
 * lengths, flush; make sure nobody changed the file meanwhile; write the content at 0, flush; cut to
 * length (dropping the record), flush. `previous` holds no NUL byte (a hosts file we parsed), or a
 * complete record (a recovery's input).
 */
export function journaledWriteSteps(previous: Uint8Array, data: Uint8Array): JournalStep[] {
    const record = journalRecord(previous.length, data);
    const hole = (from: number) => Buffer.alloc(record.position - from);
    const expect = Buffer.concat([previous, hole(previous.length), record.bytes]);
    const written = Buffer.concat([
        data,
        previous.subarray(data.length),
        hole(Math.max(previous.length, data.length)),
        record.bytes,
    ]);
    return [
        { write: record.bytes, at: record.position },
        { sync: true },
        { expect, record },
        { write: data, at: 0 },
        { sync: true },
        { written, record },
        { truncate: data.length },
        { sync: true },
    ];
}

/**
 * The steps that finish or undo the in-place write a crash cut short in a file holding `current`, or
 * undefined when it holds no record. An undo is a cut; a redo is a journaled write like any other,
 * its record appended past everything now in the file.
 */
export function recoverySteps(current: Buffer): JournalStep[] | undefined {
    const content = recoveredContent(current);
    if (content === undefined) return undefined;
    if (current.subarray(0, content.length).equals(content)) return [{ truncate: content.length }, { sync: true }];
    return journaledWriteSteps(current, content);
}

/**
 * Writes `data` over the open file `target` whose current content is `previous`, journaled. Throws
 * FileChangedError, with nothing of ours left in the file, when a foreign writer changed it meanwhile.
 * If a step fails, the previous content is put back (which drops the record); a crash is recovered by
 * the next writer.
 */
export function writeJournaled(fd: number, previous: Uint8Array, data: Uint8Array, target: string): void {
    applyJournalSteps(fd, journaledWriteSteps(previous, data), previous, target);
}

/**
 * Finishes or undoes an in-place write that a crash cut short, on the open file `target` (`fd`, read-
 * write); call it under the file's lock before reading. Answers whether there was anything to recover.
 */
export function recoverJournaled(fd: number, target: string): boolean {
    const current = readAll(fd);
    const steps = recoverySteps(current);
    if (!steps) return false;
    applyJournalSteps(fd, steps, current, target);
    return true;
}

/**
 * Makes the system calls `steps` describe on the open file `target` (`fd`), whose content is `previous`:
 * on a failure, `previous` is put back; on a foreign change (an `expect` step), FileChangedError.
 */
export function applyJournalSteps(
    fd: number,
    steps: readonly JournalStep[],
    previous: Uint8Array,
    target: string,
    depth = 0,
): void {
    try {
        for (const step of steps) {
            if ("write" in step) writeAll(fd, step.write, step.at);
            else if ("truncate" in step) shrink(fd, step.truncate);
            else if ("expect" in step) expectUnchanged(fd, step.expect, step.record, target);
            else if ("written" in step) {
                const current = readAll(fd);
                if (current.equals(step.written)) continue;
                finishFromRecord(fd, current, step.record, target, depth);
                return;
            } else fsyncSync(fd);
        }
    } catch (error) {
        if (error instanceof FileChangedError) throw error;
        try {
            // Put the previous content back, which also drops the record. Should that fail too, a complete
            // record stays, and the next writer redoes this write.
            writeAll(fd, previous, 0);
            shrink(fd, previous.length);
            fsyncSync(fd);
        } catch {
            // The error below says what failed.
        }
        throw error;
    }
}

/** Passes of finishing a write from its record before a writer that ignores locks is given the last word. */
const MAX_FINISH_DEPTH = 3;

/**
 * A foreign writer wrote over the file after our content went in. If our record is still where we put it
 * (their copy was taken mid-write), the write is finished from it, keeping what they appended; else
 * FileChangedError, and the caller redoes its edits on their content.
 */
function finishFromRecord(
    fd: number,
    current: Buffer,
    record: { position: number; bytes: Buffer },
    target: string,
    depth: number,
): void {
    const intact = current.subarray(record.position, record.position + record.bytes.length).equals(record.bytes);
    const steps = intact && depth < MAX_FINISH_DEPTH ? recoverySteps(current) : undefined;
    if (!steps) throw new FileChangedError(target);
    applyJournalSteps(fd, steps, current, target, depth + 1);
}

/** Cuts the file to `length` if it is longer; a file a foreign writer cut shorter is left as it is. */
function shrink(fd: number, length: number): void {
    if (fstatSync(fd).size > length) ftruncateSync(fd, length);
}

/** Throws FileChangedError, after marking the record given up, unless the file holds exactly `content`. */
function expectUnchanged(
    fd: number,
    content: Buffer,
    record: { position: number; bytes: Buffer },
    target: string,
): void {
    const current = readAll(fd);
    if (current.equals(content)) return;
    // Only our own record is ours to touch, and only where it still is.
    const { position, bytes } = record;
    if (current.subarray(position, position + bytes.length).equals(bytes)) {
        writeAll(fd, GIVEN_UP, position + MAGIC.length - 1);
        fsyncSync(fd);
    }
    throw new FileChangedError(target);
}

/** Whether `bytes` hold a journal record: an in-place write is under way, or was cut short. */
export function holdsJournal(bytes: Uint8Array): boolean {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(RECORD_PREFIX) >= 0;
}
