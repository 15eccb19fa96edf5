import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * A datastore the stack knows is gone at the API: deleted outside Pulumi, or gone right after the task
 * that created it ended. Says how to get it back.
 */
export class DatastoreMissingError extends LifecycleError {
    override readonly name = "DatastoreMissingError";

    constructor(
        /** How the datastore is named in messages. */
        readonly datastore: string,
        /** The API's id of the datastore, when the stack had one. */
        readonly datastoreId: string | undefined,
        readonly operation: "create" | "update",
    ) {
        super(
            operation === "create"
                ? `${datastore}: the create task succeeded but its datastore is gone (deleted at the API as it was made); run "pulumi up" again to create it`
                : `${datastore} (id ${datastoreId}) no longer exists at the API (deleted outside Pulumi). ` +
                      'Run "pulumi refresh" so the stack forgets it; the next "pulumi up" creates it again.',
        );
    }
}
