import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * An operation started something it could not see through: the engine is to record `properties` under
 * `id`, with `reasons` as init errors (the dynamic-provider server sends an error with an `id` as
 * ErrorResourceInitFailed). So what exists is never forgotten, and the next `up` deals with it. The
 * properties must include `__provider`, or later operations on the resource cannot run.
 */
export class PartialStateError extends LifecycleError {
    override readonly name = "PartialStateError";

    constructor(
        message: string,
        readonly id: string,
        readonly properties: Record<string, unknown>,
        readonly reasons: string[],
    ) {
        super(message);
    }
}
