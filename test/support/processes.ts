// Watching the processes a real `pulumi` run starts: the dynamic-provider processes of a project, and
// waiting for a condition without a timer of our own (the test's timeout bounds every wait).

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** Pids of the dynamic-provider processes the engine started in `dir` (it runs plugins in the project). */
export function providersIn(dir: string): number[] {
    return readdirSync("/proc")
        .filter((entry) => /^\d+$/.test(entry))
        .filter((pid) => {
            try {
                return (
                    readlinkSync(`/proc/${pid}/cwd`) === dir &&
                    readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("dynamic-provider")
                );
            } catch {
                return false;
            }
        })
        .map(Number);
}

/**
 * Waits until `condition` holds; the test's own timeout bounds the wait. With `run`, fails at once (with
 * its output) if that CLI process ends first.
 */
export async function until(
    condition: () => boolean,
    run?: { done: Promise<{ code: number | null; output: string }> },
): Promise<void> {
    let ended: { code: number | null; output: string } | undefined;
    void run?.done.then((result) => {
        ended = result;
    });
    while (!condition()) {
        if (ended) assert.fail(`pulumi exited (${ended.code}) first:\n${ended.output}`);
        await sleep(25);
    }
}
