import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The task API answered a request with an error status. Carries the status, the API's error code and
 * its message (the token is never part of any of them); `advice`, when given, says why the client gave
 * up and what to do.
 */
export class TaskApiError extends LifecycleError {
    override readonly name = "TaskApiError";

    constructor(
        readonly method: string,
        readonly path: string,
        readonly status: number,
        readonly code: string | undefined,
        readonly apiMessage: string,
        readonly body: unknown,
        readonly advice?: string,
    ) {
        super(
            `the task API answered ${method} ${path} with ${status}${code ? ` (${code})` : ""}: ${apiMessage}` +
                (advice ? `. ${advice}` : ""),
        );
    }
}
