// Reads and writes through an open descriptor at explicit positions, and the directory sync that makes a
// rename or a removal durable; shared by the atomic writer and the in-place journal.

import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync, writevSync } from "node:fs";

/**
 * A file's new content as the stretches it is made of, in order: a big file's edit is its untouched
 * stretches (views of the bytes read) around the edited lines, written without joining them first.
 */
export type FileContent = readonly Uint8Array[];

/** The content as one buffer, for the writers that need one (in place, over SFTP). */
export function joinContent(content: FileContent): Buffer {
    return Buffer.concat(content);
}

/** How many bytes the content has. */
export function contentLength(content: FileContent): number {
    return content.reduce((length, stretch) => length + stretch.length, 0);
}

/** Most buffers one writev takes (Linux's IOV_MAX). */
const MOST_STRETCHES_PER_CALL = 1024;

/** Writes all of `content` at `position`, with as few writev calls as it takes. */
export function writeAllContent(fd: number, content: FileContent, position: number): void {
    let pending = content.filter((stretch) => stretch.length > 0);
    while (pending.length > 0) {
        let written = writevSync(fd, pending.slice(0, MOST_STRETCHES_PER_CALL), position);
        if (written === 0) throw new Error("writev wrote nothing");
        position += written;
        // A short write: drop the stretches it finished, and the part of the next it wrote.
        let done = 0;
        while (done < pending.length && written >= (pending[done] as Uint8Array).length) {
            written -= (pending[done] as Uint8Array).length;
            done++;
        }
        pending = pending.slice(done);
        if (written > 0) pending[0] = (pending[0] as Uint8Array).subarray(written);
    }
}

/** Writes all of `data` at `position`, however many calls it takes. */
export function writeAll(fd: number, data: Uint8Array, position: number): void {
    for (let written = 0; written < data.length; ) {
        written += writeSync(fd, data, written, data.length - written, position + written);
    }
}

/** The whole content of the open file, read from its start whatever the descriptor's position. */
export function readAll(fd: number): Buffer {
    const chunks: Buffer[] = [];
    for (let position = 0; ; ) {
        const chunk = Buffer.allocUnsafe(Math.max(65_536, fstatSync(fd).size - position));
        const read = readSync(fd, chunk, 0, chunk.length, position);
        if (read === 0) return Buffer.concat(chunks);
        chunks.push(chunk.subarray(0, read));
        position += read;
    }
}

/**
 * Makes the directory's entries durable (a rename into it, a file removed from it). Best effort: some
 * file systems, and Windows, cannot sync a directory, and what it syncs has already happened.
 */
export function syncDirectory(directory: string): void {
    if (process.platform === "win32") return;
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
