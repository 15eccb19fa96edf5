import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The task API answered with something the protocol does not allow (invalid JSON, a body nested too
 * deep, a 202 without a usable Location, an unknown task state, a record without the fields it must
 * have). `status` is the answer's status when there was one: a 2xx that cannot be read may still have
 * done its work.
 */
export class MalformedResponseError extends LifecycleError {
    override readonly name = "MalformedResponseError";

    constructor(
        readonly method: string,
        readonly path: string,
        readonly problem: string,
        readonly status?: number,
    ) {
        super(`the task API's answer to ${method} ${path} is not valid: ${problem}`);
    }
}
