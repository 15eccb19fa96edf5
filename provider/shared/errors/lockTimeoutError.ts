import { LifecycleError } from "./lifecycleError";

/** The lock on a file stayed held by someone else for longer than the bounded wait. */
export class LockTimeoutError extends LifecycleError {
    override readonly name = "LockTimeoutError";

    /**
     * @param lock the lock file, or the kernel lock's name
     * @param holder who holds it ("pid 123 on host h since ..."), where known
     */
    constructor(
        readonly file: string,
        readonly lock: string,
        readonly holder: string | undefined,
        readonly waitedMs: number,
    ) {
        const release = lock.startsWith("the kernel lock")
            ? "The kernel releases it as soon as that process exits."
            : "If no such process is running, delete the lock file.";
        super(
            `timed out after ${Math.round(waitedMs / 100) / 10} s waiting for the lock on ${file} ` +
                `(${lock}, held by ${holder ?? "a process that did not identify itself"}). Another ` +
                `pulumi-lifecycle operation is writing this file: retry when it has finished. ${release}`,
        );
    }
}
