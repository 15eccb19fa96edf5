import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The API said a delete ended well, yet the resource is still there. Its word is not taken: the delete
 * fails, so the engine keeps the resource in the stack's state.
 */
export class DeleteUnconfirmedError extends LifecycleError {
    override readonly name = "DeleteUnconfirmedError";

    constructor(
        /** How the resource is named in messages. */
        readonly resource: string,
        readonly resourceId: string,
        /** The delete's operation at the API (a task id, a request token), when it had one. */
        readonly operation?: string,
    ) {
        super(
            `${resource} (id ${resourceId}): the API said the delete${operation ? ` (operation ${operation})` : ""} ended well, but the resource still ` +
                "exists. It stays in the stack's state; check it at the API, then run `pulumi destroy` (or the " +
                "`pulumi up` that removes it) again.",
        );
    }
}
