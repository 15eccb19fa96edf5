// Temporary files beside a file being written: their names, which tell the process that made them, and the
// sweep that removes those whose process is gone.

import { randomBytes } from "node:crypto";
import { readdirSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isProcessAlive } from "./processes";

/** A name for a temporary file beside `base`, which `sweepTemporariesSync` removes once its process is gone. */
export function temporaryName(base: string): string {
    return `.${base}.${process.pid}.${randomBytes(4).toString("hex")}.pulumi-lifecycle.tmp`;
}

/**
 * Removes temporary files that a killed writer left beside `target` (their process is gone). Safe to
 * call at any time: a live writer's temporary file is never touched.
 */
export function sweepTemporariesSync(target: string): number {
    const prefix = `.${basename(target)}.`;
    let removed = 0;
    let names: string[];
    try {
        names = readdirSync(dirname(target));
    } catch {
        return 0;
    }
    for (const name of names) {
        const pid = name.startsWith(prefix) ? /\.(\d+)\.[0-9a-f]+\.pulumi-lifecycle\.tmp$/.exec(name)?.[1] : undefined;
        if (pid !== undefined && !isProcessAlive(Number(pid)) && removeQuietly(join(dirname(target), name))) removed++;
    }
    return removed;
}

/** Removes a file, answering whether it did; a missing file or a refusal is not an error here. */
export function removeQuietly(path: string): boolean {
    try {
        unlinkSync(path);
        return true;
    } catch {
        return false;
    }
}
