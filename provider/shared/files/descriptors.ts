// Reads and writes through an open descriptor at explicit positions, shared by the atomic writer and the
// in-place journal.

import { fstatSync, readSync, writeSync } from "node:fs";

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
