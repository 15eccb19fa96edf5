import { closeSync, openSync, readFileSync } from "node:fs";
import { fileSignatureSync } from "./atomicWrite";

/** Reads beyond this many attempts return the last read: a file rewritten nonstop is not ours to wait for. */
const MAX_ATTEMPTS = 5;

/**
 * Reads a whole file and its signature through one descriptor, and reads again when the file changed
 * while it was being read. Atomic renames never need this; an in-place write by another process (the
 * fallback for bind-mounted files) can be seen half-done, and is then read again once it has moved on.
 */
export function readWholeSync(path: string): { bytes: Buffer; signature: string } {
    for (let attempt = 1; ; attempt++) {
        const fd = openSync(path, "r");
        try {
            const before = fileSignatureSync(fd);
            const bytes = readFileSync(fd);
            const after = fileSignatureSync(fd);
            if (before === after || attempt >= MAX_ATTEMPTS) return { bytes, signature: after };
        } finally {
            closeSync(fd);
        }
    }
}
