import { LifecycleError } from "../shared/errors/lifecycleError";

/**
 * The data file exists but is not one this server wrote (or is damaged). The server refuses to start
 * rather than overwrite it.
 */
export class DataFileError extends LifecycleError {
    override readonly name = "DataFileError";

    constructor(
        readonly file: string,
        problem: string,
    ) {
        super(
            `${file} is not a task API data file (${problem}). Move it away or pass another --data file; ` +
                "the server does not overwrite a file it cannot read.",
        );
    }
}
