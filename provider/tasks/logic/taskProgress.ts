// Pure: the progress lines a task's states make for the user, each new one once.

import type { AsyncOperation } from "../protocol/wire";

/**
 * A reporter of a task's states: "Create datastore ds19: RUNNING 40% (Creating datastore ds19)", each
 * line passed to `report` only when it differs from the one before.
 */
export function progressReporter(report: (line: string) => void): (operation: AsyncOperation) => void {
    let last = "";
    return (operation) => {
        const latest = operation.logMessages?.at(-1)?.message;
        const line = `${operation.name}: ${operation.state} ${operation.progressPercent}%${latest ? ` (${latest})` : ""}`;
        if (line !== last) report(line);
        last = line;
    };
}
