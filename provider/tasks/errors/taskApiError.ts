import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The task API answered a request with an error status. Carries the status, the API's error code and
 * its message (the token is never part of any of them); `advice`, when given, says why the client gave
 * up and what to do. `earlierOutcomeUnknown`: an earlier attempt of this same request (a retry with the
 * same Idempotency-Key) got no definite answer (no answer, a 5xx, a 408), so the API may have carried the
 * request out whatever this last answer says.
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
        readonly earlierOutcomeUnknown = false,
    ) {
        // The API's own sentence may end with a period: one is enough.
        const said = apiMessage.replace(/\.$/, "");
        super(
            `the task API answered ${method} ${path} with ${status}${code ? ` (${code})` : ""}: ${said}` +
                (advice ? `. ${advice}` : "") +
                (earlierOutcomeUnknown
                    ? ". An earlier attempt of this request got no definite answer, so the API may have carried it out"
                    : ""),
        );
    }
}
