import { open } from "node:fs/promises";
import { fileSignature } from "./atomicWrite";

/** Reads beyond this many attempts return the last read: a file rewritten nonstop is not ours to wait for. */
const MAX_ATTEMPTS = 5;

/**
 * Reads a whole file and its signature through one handle, and reads again when the file changed while
 * it was being read. Atomic renames never need this; an in-place write by another process (the fallback
 * for bind-mounted files) can be seen half-done, and is then read again once it has moved on.
 */
export async function readWhole(path: string): Promise<{ bytes: Buffer; signature: string }> {
    for (let attempt = 1; ; attempt++) {
        const handle = await open(path, "r");
        try {
            const before = await fileSignature(handle);
            const bytes = await handle.readFile();
            const after = await fileSignature(handle);
            if (before === after || attempt >= MAX_ATTEMPTS) return { bytes, signature: after };
        } finally {
            await handle.close();
        }
    }
}
