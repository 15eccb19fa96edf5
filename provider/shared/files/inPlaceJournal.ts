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

import { createHash } from "node:crypto";
import { fsyncSync, ftruncateSync, readFileSync } from "node:fs";
import { writeAll } from "./descriptors";

const MAGIC = Buffer.from("\0pulumi-lifecycle in-place write v1\n", "latin1");
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

/** What a file holding journal records should become; undefined when it holds none (nothing to recover). */
export function recoveredContent(file: Buffer): Buffer | undefined {
    const first = file.indexOf(MAGIC);
    if (first < 0) return undefined;
    // The last complete record is the newest write that reached its journal: redo it.
    let complete: { content: Buffer; end: number } | undefined;
    for (let at = first; at >= 0; at = file.indexOf(MAGIC, at + 1)) {
        complete = completeRecord(file, at) ?? complete;
    }
    if (complete) {
        // Bytes appended after the record by a writer that ignores locks are kept; our own later records
        // and holes (which start with NUL) are not theirs.
        const after = file.subarray(complete.end);
        const nul = after.indexOf(0);
        return Buffer.concat([complete.content, nul < 0 ? after : after.subarray(0, nul)]);
    }
    // No record is complete: the crash came while the first was being appended, before the content was
    // touched. The old content is everything before the first NUL (the hole or the record).
    return file.subarray(0, file.indexOf(0));
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
    | { readonly truncate: number }
    | { readonly sync: true };

/**
 * The steps that write `data` over a file whose content is `previous`: append the record past both
 * lengths, flush; write the content at 0, flush; cut to length (dropping the record), flush.
 * `previous` holds no NUL byte (a hosts file we parsed), or a complete record (a recovery's input).
 */
export function journaledWriteSteps(previous: Uint8Array, data: Uint8Array): JournalStep[] {
    const record = journalRecord(previous.length, data);
    return [
        { write: record.bytes, at: record.position },
        { sync: true },
        { write: data, at: 0 },
        { sync: true },
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
 * Writes `data` over the open file whose current content is `previous`, journaled. If a step fails, the
 * previous content is put back (which drops the record); a crash is recovered by the next writer.
 */
export function writeJournaled(fd: number, previous: Uint8Array, data: Uint8Array): void {
    run(fd, journaledWriteSteps(previous, data), previous);
}

/**
 * Finishes or undoes an in-place write that a crash cut short, on the open file `fd` (read-write); call
 * it under the file's lock before reading. Answers whether there was anything to recover.
 */
export function recoverJournaled(fd: number): boolean {
    const current = readFileSync(fd);
    const steps = recoverySteps(current);
    if (!steps) return false;
    run(fd, steps, current);
    return true;
}

function run(fd: number, steps: readonly JournalStep[], previous: Uint8Array): void {
    try {
        for (const step of steps) {
            if ("write" in step) writeAll(fd, step.write, step.at);
            else if ("truncate" in step) ftruncateSync(fd, step.truncate);
            else fsyncSync(fd);
        }
    } catch (error) {
        try {
            // Put the previous content back, which also drops the record. Should that fail too, a complete
            // record stays, and the next writer redoes this write.
            writeAll(fd, previous, 0);
            ftruncateSync(fd, previous.length);
            fsyncSync(fd);
        } catch {
            // The error below says what failed.
        }
        throw error;
    }
}

/** Whether `bytes` hold a journal record: an in-place write is under way, or was cut short. */
export function holdsJournal(bytes: Uint8Array): boolean {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(MAGIC) >= 0;
}
