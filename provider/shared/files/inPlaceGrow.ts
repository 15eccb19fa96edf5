// A write in place that grows the file other than by new lines at its end (a line deleted and another
// created, in one batch), made so that a writer ignoring locks (`echo >> /etc/hosts`) may append at any
// moment and lose nothing: nothing of ours is ever written past a length the file has been seen to have,
// except by O_APPEND. The new content goes in at 0 up to the old length (what is appended meanwhile lies
// past it, untouched), the rest is appended (what was appended before it lands before it, whole); then,
// if foreign lines landed between our two parts, they are journaled in the sidecar and moved past ours
// (the same bytes, rewritten in place over our appended part and themselves: the length does not change,
// so nothing is cut and what is appended meanwhile stays). A crash anywhere leaves a state the sidecar's
// record describes (sidecarRecord.ts finishedContent), from which recovery runs the rest of these steps.

import { closeSync, constants, fsyncSync, openSync, writeSync } from "node:fs";
import { readAll, writeAll } from "./descriptors";
import { appendedAfter, grownInPlace, movedBytes, type SidecarRecord } from "./sidecarRecord";

/**
 * Journals a move of foreign bytes (`movedBytes`) before it is made, durably; answers how to drop that
 * journal once the move is done (nothing to do when it went into the write's own sidecar).
 */
export type JournalMove = (moved: Buffer) => () => void;

/**
 * Grows the open file `target` (`fd`) to the content of `record`, from a state the write passes through;
 * `journalMove` records a move in its journal. Answers false when the file is in no such state (a
 * foreign writer rewrote it).
 */
export function growInPlace(fd: number, target: string, journalMove: JournalMove, record: SidecarRecord): boolean {
    const { previous, data } = record;
    let current = readAll(fd);
    let at = grownInPlace(current, record);
    let between = at === undefined ? undefined : appendedAfter(current, record, at);
    if (between === undefined) {
        if (at === undefined) {
            // Up to the old length only: past it may already lie what another tool appended.
            writeAll(fd, data.subarray(0, previous.length), 0);
            fsyncSync(fd);
            at = previous.length;
            // A tool that rewrites the file in place (O_TRUNC, then its write: hostile, Docker) may have
            // run during the flush; the rest, which can start mid-line, would land after its content as
            // a torn line. Checked again after the append, this only narrows that window to microseconds.
            if (!readAll(fd).subarray(0, at).equals(data.subarray(0, at))) return false;
        }
        appendTo(target, data.subarray(at));
        current = readAll(fd);
        between = appendedAfter(current, record, at);
        if (between === undefined) return false;
    }
    if (at === undefined) return false;
    if (between > 0) {
        const foreign = Buffer.from(current.subarray(at, at + between));
        const moved = journalMove(movedBytes(at, foreign));
        writeAll(fd, Buffer.concat([data.subarray(at), foreign]), at);
        fsyncSync(fd);
        moved();
    }
    return true;
}

/** Appends `bytes` to the file, wherever its end is by then; flushed. */
export function appendTo(target: string, bytes: Buffer): void {
    const fd = openSync(target, constants.O_WRONLY | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0));
    try {
        for (let written = 0; written < bytes.length; ) {
            written += writeSync(fd, bytes, written, bytes.length - written);
        }
        fsyncSync(fd);
    } finally {
        closeSync(fd);
    }
}
