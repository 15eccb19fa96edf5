// Writes through an open descriptor, shared by the atomic writer and the in-place backups.

import { fsyncSync, ftruncateSync, writeSync } from "node:fs";

/** Writes all of `data` at `position`, however many calls it takes. */
export function writeAll(fd: number, data: Uint8Array, position: number): void {
    for (let written = 0; written < data.length; ) {
        written += writeSync(fd, data, written, data.length - written, position + written);
    }
}

/** Makes the file exactly `data`: new bytes first, then cut to length (never shorter than what it holds), flushed. */
export function overwrite(fd: number, data: Uint8Array): void {
    writeAll(fd, data, 0);
    ftruncateSync(fd, data.length);
    fsyncSync(fd);
}
