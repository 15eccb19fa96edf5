import { type BigIntStats, closeSync, constants, fstatSync, openSync, read, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { fileSignatureSync, signatureOf } from "./signature";

/** The error for a path that is not a regular file; its code `ENOTREG` gets its own advice. */
function notRegular(path: string, stats: BigIntStats): NodeJS.ErrnoException {
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
 * How recently a file may have changed for bytes read from it to be vouched for by its signature. File
 * times tick coarsely (a kernel tick, up to 10 ms, behind the clock Node reads): a file changed within the
 * tick of a read could change again, to the same size, within that tick, and keep its signature. A file
 * last changed longer ago than this cannot.
 */
const SETTLED_MS = 50;

/** A whole file as read, with the signature it had. */
export interface WholeRead {
    readonly bytes: Buffer;
    readonly signature: string;
    /**
     * Whether the file had last changed long enough before the read (SETTLED_MS) that, for as long as it
     * keeps this signature, it holds these very bytes.
     */
    readonly settled: boolean;
}

/** Whether a file whose status is `info` had settled when a read of it started at `started` (ms). */
function settledAt(info: BigIntStats, started: number): boolean {
    return Number(info.mtimeNs / 1_000_000n) <= started - SETTLED_MS;
}

/**
 * Reads a whole file and its signature through one descriptor, and reads again when the file changed
 * while it was being read. Atomic renames never need this; an in-place write by another process (the
 * fallback for bind-mounted files) can be seen half-done, and is then read again once it has moved on.
 */
export function readWholeSync(path: string): WholeRead {
    for (let attempt = 1; ; attempt++) {
        const started = Date.now();
        // Non-blocking, so a FIFO cannot hold the open (and the lock) forever; then only a regular file
        // is read: a device or FIFO would be replaced by a regular file on the first write.
        const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
        try {
            const info = fstatSync(fd, { bigint: true });
            if (!info.isFile()) throw notRegular(path, info);
            const before = signatureOf(info);
            const bytes = readFileSync(fd);
            const after = fileSignatureSync(fd);
            // Still moving after the last attempt: answer with the signature from before the read, which no
            // longer matches the file, so a write computed from these bytes is refused, never a loss.
            if (before === after || attempt >= MAX_ATTEMPTS) {
                return { bytes, signature: before, settled: before === after && settledAt(info, started) };
            }
        } finally {
            closeSync(fd);
        }
    }
}

/**
 * Reads a whole regular file by the thread pool, so that the read overlaps this thread's own work (the
 * hosts store reads ahead while it takes the lock). Answers undefined for anything but a regular file, a
 * file that changed while it was read, or one that changed too recently (SETTLED_MS): the caller then
 * reads it as usual. The signature is the file's before and after the read, so a caller that finds the
 * file still has it may use the bytes.
 */
export async function readWholeAhead(path: string): Promise<WholeRead | undefined> {
    const started = Date.now();
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
        const stats = fstatSync(fd, { bigint: true });
        if (!stats.isFile() || !settledAt(stats, started)) return undefined;
        const before = signatureOf(stats);
        const bytes = Buffer.allocUnsafe(Number(stats.size));
        for (let filled = 0; filled < bytes.length; ) {
            const { bytesRead } = await promisify(read)(fd, bytes, filled, bytes.length - filled, filled);
            if (bytesRead === 0) return undefined;
            filled += bytesRead;
        }
        return fileSignatureSync(fd) === before ? { bytes, signature: before, settled: true } : undefined;
    } finally {
        closeSync(fd);
    }
}
