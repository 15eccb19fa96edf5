import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * Every create key derived from the resource's createToken was spent without leaving a datastore: all
 * of them, or as many as the create's deadline allowed (`deadlineSetting` then names the timeout).
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
                ? `${datastore}: ${attempts} creates with this createToken were spent (their datastores are gone) ` +
                      `before the create's deadline passed; nothing was made. Run \`pulumi up\` again (it goes on ` +
                      `with the next key), or raise ${deadlineSetting}`
                : `${datastore}: ${attempts} creates with this createToken were spent; give the resource a new createToken`,
        );
    }
}
