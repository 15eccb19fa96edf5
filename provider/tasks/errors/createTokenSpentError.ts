import { LifecycleError } from "../../shared/errors/lifecycleError";

/** Every create key derived from the resource's createToken was spent without leaving a datastore. */
export class CreateTokenSpentError extends LifecycleError {
    override readonly name = "CreateTokenSpentError";

    constructor(
        readonly datastore: string,
        readonly attempts: number,
    ) {
        super(
            `${datastore}: ${attempts} creates with this createToken were spent; give the resource a new createToken`,
        );
    }
}
