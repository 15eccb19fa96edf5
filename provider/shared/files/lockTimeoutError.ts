import { LifecycleError } from "../errors/lifecycleError";
import type { LockHolder } from "./fileLock";

/** The lock on a file stayed held by someone else for longer than the bounded wait. */
export class LockTimeoutError extends LifecycleError {
    override readonly name = "LockTimeoutError";

    constructor(
        readonly file: string,
        readonly lockFile: string,
        readonly holder: LockHolder | undefined,
        readonly waitedMs: number,
    ) {
        const who = holder
            ? `held by pid ${holder.pid} on host ${JSON.stringify(holder.host)} since ${new Date(holder.since).toISOString()}`
            : "held by a process that did not identify itself";
        super(
            `timed out after ${Math.round(waitedMs / 100) / 10} s waiting for the lock on ${file} ` +
                `(lock file ${lockFile}, ${who}). Another pulumi-lifecycle operation is writing this file: ` +
                "retry when it has finished. If no such process is running, delete the lock file.",
        );
    }
}
