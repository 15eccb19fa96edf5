import { LifecycleError } from "../../shared/errors/lifecycleError";

/** Requests to the task API kept failing at the network level (refused, reset, timed out). */
export class TaskApiUnreachableError extends LifecycleError {
    override readonly name = "TaskApiUnreachableError";

    constructor(
        readonly method: string,
        readonly url: string,
        readonly attempts: number,
        readonly reason: string,
    ) {
        super(
            `could not reach the task API for ${method} ${url} after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${reason}. ` +
                "Check that the server is running and that pulumi-lifecycle:taskApiUrl (or TASK_API_URL) points to it.",
        );
    }
}
