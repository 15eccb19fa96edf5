import { LifecycleError } from "../../shared/errors/lifecycleError";
import { messageOf } from "../../shared/text";

/**
 * An operation on a datastore stopped on something the package did not explain itself: the abort of a
 * Ctrl-C, or an error of the runtime. Names the datastore and the operation; `cause` is what stopped it.
 */
export class DatastoreOperationError extends LifecycleError {
    override readonly name = "DatastoreOperationError";

    constructor(
        /** How the datastore is named in messages. */
        readonly datastore: string,
        readonly operation: "create" | "read" | "update" | "delete",
        cause: unknown,
    ) {
        super(`${datastore}: the ${operation} stopped: ${messageOf(cause)}`, { cause });
    }
}
