import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * A create request whose outcome is unknown (no answer, a 5xx, Ctrl-C while it was in flight), sent while a
 * datastore with the same natural key already existed. The API keeps names unique, so the request cannot
 * have made another one: nothing is recorded as pending, which would let a later refresh or destroy take
 * that datastore (perhaps someone else's) for this resource's. The next `pulumi up` replays the
 * createToken, which tells whether it is this resource's.
 */
export class CreateOutcomeUnknownError extends LifecycleError {
    override readonly name = "CreateOutcomeUnknownError";

    constructor(
        /** How the datastore is named in messages. */
        readonly datastore: string,
        /** The id of the datastore that existed before the request. */
        readonly existingId: string,
        reason: string,
    ) {
        super(
            `${datastore}: the create request's outcome is unknown (${reason}). A datastore with this name ` +
                `(id ${existingId}) existed before it, so the request made no other and nothing is recorded; ` +
                "run `pulumi up` again: replaying the createToken tells whether that datastore is this resource's.",
        );
    }
}
