import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { codeOf } from "./errno";

/**
 * The real path behind `file` (relative paths against the working directory): symlinks followed, so the
 * target is what gets written and the link stays. A file that does not exist yet resolves through its
 * directory. Other errors (a path through a file, permission denied) are thrown.
 */
export function realPathSync(file: string, hops = 0): string {
    const absolute = resolve(file);
    try {
        // The C library's, in one call: Node's own walks the path with a system call per component.
        return realpathSync.native(absolute);
    } catch (error) {
        if (codeOf(error) !== "ENOENT") throw error;
    }
    // A dangling symlink: its target is the file (created by the first write), not the link, which
    // a rename would otherwise replace. Bounded like the kernel's 40 links.
    if (hops < 40 && isSymlink(absolute))
        return realPathSync(resolve(dirname(absolute), readlinkSync(absolute)), hops + 1);
    let directory = dirname(absolute);
    try {
        directory = realpathSync(directory);
    } catch {
        // A missing directory: writing will say so; the path itself is still the best answer.
    }
    return join(directory, basename(absolute));
}

function isSymlink(path: string): boolean {
    try {
        return lstatSync(path).isSymbolicLink();
    } catch {
        return false;
    }
}
