import { LifecycleError } from "../../shared/errors/lifecycleError";

/** The task API answered with something the protocol does not allow (invalid JSON, 202 without Location, an unknown task state). */
export class MalformedResponseError extends LifecycleError {
    override readonly name = "MalformedResponseError";

    constructor(
        readonly method: string,
        readonly path: string,
        readonly problem: string,
    ) {
        super(`the task API's answer to ${method} ${path} is not valid: ${problem}`);
    }
}
