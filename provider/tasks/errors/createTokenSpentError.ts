import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * Every create key derived from the resource's createToken was spent without leaving a resource: all of
 * them, or as many as the create's deadline allowed (`deadlineSetting` then names the timeout; a create
 * without a createToken had one key, the one its request was sent with).
 */
export class CreateTokenSpentError extends LifecycleError {
    override readonly name = "CreateTokenSpentError";

    constructor(
        readonly datastore: string,
        readonly attempts: number,
        readonly deadlineSetting?: string,
    ) {
        super(
            deadlineSetting
                ? `${datastore}: ${attempts} create key(s) of this resource were spent (what they made is gone, ` +
                      `or not yet gone for longer than a read may lag) before the deadline passed; nothing was ` +
                      `made. Run the command again (it goes on from there), or raise ${deadlineSetting}`
                : `${datastore}: ${attempts} creates with this createToken were spent; give the resource a new createToken`,
        );
    }
}
