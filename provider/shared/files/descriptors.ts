// Writes through an open descriptor, shared by the atomic writer and the in-place journal.

import { writeSync } from "node:fs";

/** Writes all of `data` at `position`, however many calls it takes. */
export function writeAll(fd: number, data: Uint8Array, position: number): void {
    for (let written = 0; written < data.length; ) {
        written += writeSync(fd, data, written, data.length - written, position + written);
    }
}
