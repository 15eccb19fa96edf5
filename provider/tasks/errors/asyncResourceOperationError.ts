import { LifecycleError } from "../../shared/errors/lifecycleError";
import { messageOf } from "../../shared/text";

/** An AsyncResource operation stopped on something that is not one of the package's errors. */
export class AsyncResourceOperationError extends LifecycleError {
    override readonly name = "AsyncResourceOperationError";

    constructor(
        /** How the resource is named in messages. */
        readonly resource: string,
        readonly operation: "create" | "read" | "update" | "delete",
        cause: unknown,
    ) {
        super(`${resource}: the ${operation} stopped: ${messageOf(cause)}`, { cause });
    }
}
