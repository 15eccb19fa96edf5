// Watching the processes a real `pulumi` run starts: the dynamic-provider processes of a project, and
// waiting for a condition without a timer of our own (the test's timeout bounds every wait).

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** Pids of the processes whose working directory is `dir`, and whose command line names `name` when given. */
export function processesIn(dir: string, name?: string): number[] {
    return readdirSync("/proc")
        .filter((entry) => /^\d+$/.test(entry))
        .filter((pid) => {
            try {
                return (
                    readlinkSync(`/proc/${pid}/cwd`) === dir &&
                    (name === undefined || readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(name))
                );
            } catch {
                return false;
            }
        })
        .map(Number)
        .filter((pid) => pid !== process.pid);
}

/** Pids of the dynamic-provider processes the engine started in `dir` (it runs plugins in the project). */
export function providersIn(dir: string): number[] {
    return processesIn(dir, "dynamic-provider");
}

/**
 * Stops what still runs in `dir`: a test that kills the CLI outright (SIGKILL) leaves its language host,
 * which runs in a process group of its own, to a health check that notices the engine gone only minutes
 * later, as a user's would be.
 */
export function stopProcessesIn(dir: string): void {
    for (const pid of processesIn(dir)) {
        try {
            process.kill(pid, "SIGKILL");
        } catch {
            // Gone meanwhile.
        }
    }
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
