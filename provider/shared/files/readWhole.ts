import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from "node:fs";
import { fileSignatureSync } from "./signature";

/** The error for a path that is not a regular file; its code `ENOTREG` gets its own advice. */
function notRegular(path: string, stats: Stats): NodeJS.ErrnoException {
    const kind = stats.isFIFO()
        ? "a FIFO"
        : stats.isCharacterDevice()
          ? "a character device"
          : stats.isBlockDevice()
            ? "a block device"
            : stats.isSocket()
              ? "a socket"
              : stats.isDirectory()
                ? "a directory"
                : "not a regular file";
    return Object.assign(new Error(`${path} is ${kind}`), { code: stats.isDirectory() ? "EISDIR" : "ENOTREG", kind });
}

/** Reads beyond this many attempts return the last read: a file rewritten nonstop is not ours to wait for. */
const MAX_ATTEMPTS = 5;

/**
 * Reads a whole file and its signature through one descriptor, and reads again when the file changed
 * while it was being read. Atomic renames never need this; an in-place write by another process (the
 * fallback for bind-mounted files) can be seen half-done, and is then read again once it has moved on.
 */
export function readWholeSync(path: string): { bytes: Buffer; signature: string } {
    for (let attempt = 1; ; attempt++) {
        // Non-blocking, so a FIFO cannot hold the open (and the lock) forever; then only a regular file
        // is read: a device or FIFO would be replaced by a regular file on the first write.
        const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
        try {
            const stats = fstatSync(fd);
            if (!stats.isFile()) throw notRegular(path, stats);
            const before = fileSignatureSync(fd);
            const bytes = readFileSync(fd);
            const after = fileSignatureSync(fd);
            // Still moving after the last attempt: answer with the signature from before the read, which no
            // longer matches the file, so a write computed from these bytes is refused, never a loss.
            if (before === after || attempt >= MAX_ATTEMPTS) return { bytes, signature: before };
        } finally {
            closeSync(fd);
        }
    }
}
