import { LifecycleError } from "../../shared/errors/lifecycleError";

/** `adopt` found a datastore with the natural key whose size, type or state does not match the program. */
export class DatastoreAdoptMismatchError extends LifecycleError {
    override readonly name = "DatastoreAdoptMismatchError";

    constructor(
        readonly datastore: string,
        readonly datastoreId: string,
        /** Each difference, as `field: what it is; what to do`. */
        readonly differences: readonly string[],
    ) {
        super(
            `cannot adopt ${datastore} (id ${datastoreId}): ${differences.join("; ")}. Change the program to match, or choose another name.`,
        );
    }
}
