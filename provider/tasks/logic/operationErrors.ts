// Pure: every error a Datastore operation ends with names its datastore, and is one of the package's
// (LifecycleError). Errors of the layers below speak of requests and tasks ("the task API answered POST
// /virtualization/v1beta1/datastores with 422"); the operation adds which datastore it was about. The
// class stays, so a program can still tell a TaskApiError from a TaskApiContractError.

import { LifecycleError } from "../../shared/errors/lifecycleError";
import { DatastoreOperationError } from "../errors/datastoreOperationError";

/** The error an operation on the datastore `label` (describeDatastore) with this `name` ends with. */
export function namedFailure(
    error: unknown,
    label: string,
    name: string,
    operation: DatastoreOperationError["operation"],
): Error {
    if (!(error instanceof LifecycleError)) return new DatastoreOperationError(label, operation, error);
    if (!error.message.includes(JSON.stringify(name))) {
        const unnamed = error.message;
        error.message = `${label}: ${unnamed}`;
        if (error.stack?.includes(unnamed)) error.stack = error.stack.replace(unnamed, error.message);
    }
    return error;
}
