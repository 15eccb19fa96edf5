import { LifecycleError } from "../../shared/errors/lifecycleError";

/** An id given to `Datastore.get` or an import that is not a Datastore id. */
export class DatastoreIdError extends LifecycleError {
    override readonly name = "DatastoreIdError";

    constructor(readonly id: string) {
        super(`${JSON.stringify(id)} is not a Datastore id: ids are "<hciClusterUuid>/<clusterId>/<name>"`);
    }
}
