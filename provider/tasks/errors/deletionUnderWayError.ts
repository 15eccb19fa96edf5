import { formatDuration } from "../../shared/duration";
import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The resource was still being deleted at the API when the operation's deadline came: a deletion
 * started outside this operation (an interrupted `destroy` whose DELETE landed, or another client's)
 * and not ended. Nothing was written; what to record waits for that deletion's end.
 */
export class DeletionUnderWayError extends LifecycleError {
    override readonly name = "DeletionUnderWayError";

    constructor(
        /** How the resource is named in messages. */
        readonly resource: string,
        readonly resourceId: string,
        /** What the operation was doing: "the read", "the create". */
        operation: string,
        waitedMs: number,
        /** The setting that bounds the wait (`timeouts.read`), for the message. */
        setting: string,
    ) {
        super(
            `${resource} (id ${resourceId}) is being deleted at the API, and still was after ${operation} waited ` +
                `${formatDuration(waitedMs)} for that deletion to end; nothing was changed. Run the command again once ` +
                `the deletion has ended (the resource is then gone, or back if the deletion failed), or raise \`${setting}\`.`,
        );
    }
}
