import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The API reported a delete task SUCCEEDED, yet a GET still finds the datastore. The provider does not
 * take the task's word for it: the delete fails, so the engine keeps the resource in the stack's state.
 */
export class DatastoreDeleteUnconfirmedError extends LifecycleError {
    override readonly name = "DatastoreDeleteUnconfirmedError";

    constructor(
        /** How the datastore is named in messages. */
        readonly datastore: string,
        readonly datastoreId: string,
        readonly taskId: string,
        /** The datastore's state at the API after the task. */
        readonly state: string,
    ) {
        super(
            `${datastore} (id ${datastoreId}): the API reported the delete task ${taskId} succeeded, but the ` +
                `datastore still exists (state ${state}). It stays in the stack's state. Check it at the API; ` +
                "run `pulumi destroy` (or the `pulumi up` that removes it) again to delete it.",
        );
    }
}
