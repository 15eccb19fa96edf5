import { LifecycleError } from "../shared/errors/lifecycleError";

/**
 * The data file cannot be written where it was asked for (its directory is missing, not a directory, or
 * not writable). Found when the server starts, not at the first request that changes something.
 */
export class DataFileUnwritableError extends LifecycleError {
    override readonly name = "DataFileUnwritableError";

    constructor(
        readonly file: string,
        problem: string,
    ) {
        super(
            `the task API cannot keep its data in ${file}: ${problem}. ` +
                "Create that directory (or make it writable), or pass another --data file.",
        );
    }
}
