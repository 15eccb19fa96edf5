import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The task API named a URL on another origin than the configured API URL (a task's Location, most
 * likely). Following it would send the bearer token, the body and the Idempotency-Key to that origin.
 */
export class CrossOriginError extends LifecycleError {
    override readonly name = "CrossOriginError";

    constructor(
        readonly url: string,
        readonly apiOrigin: string,
    ) {
        super(
            `the task API named ${url}, which is not on ${apiOrigin}: refusing to send the API token there. ` +
                "If the API really answers on that origin, set pulumi-lifecycle:taskApiUrl to it; otherwise " +
                "the API (or something between us and it) is misconfigured.",
        );
    }
}
