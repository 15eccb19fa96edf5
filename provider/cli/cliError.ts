import { LifecycleError } from "../shared/errors/lifecycleError";

/**
 * A failure the command line reports as one line on stderr, without a stack trace. Exit code 2 means
 * the command was used wrongly (unknown command or option), 1 that it could not do its work.
 */
export class CliError extends LifecycleError {
    override readonly name = "CliError";

    constructor(
        message: string,
        readonly exitCode: 1 | 2,
    ) {
        super(message);
    }
}
