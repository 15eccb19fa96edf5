import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { codeOf } from "./atomicWrite";

/**
 * The real path behind `file` (relative paths against the working directory): symlinks followed, so the
 * target is what gets written and the link stays. A file that does not exist yet resolves through its
 * directory. Other errors (a path through a file, permission denied) are thrown.
 */
export function realPathSync(file: string): string {
    const absolute = resolve(file);
    try {
        return realpathSync(absolute);
    } catch (error) {
        if (codeOf(error) !== "ENOENT") throw error;
    }
    let directory = dirname(absolute);
    try {
        directory = realpathSync(directory);
    } catch {
        // A missing directory: writing will say so; the path itself is still the best answer.
    }
    return join(directory, basename(absolute));
}
