// Pure: every error an operation on an async resource (an AsyncResource, a Datastore) ends with names
// its resource, and is one of the package's (LifecycleError). Errors of the layers below speak of
// requests and operations ("the task API answered POST /virtualization/v1beta1/datastores with 422");
// the operation adds which resource it was about. The class stays, so a program can still tell a
// TaskApiError from a TaskApiContractError.

import { LifecycleError } from "../../shared/errors/lifecycleError";
import { AsyncResourceOperationError } from "../errors/asyncResourceOperationError";

/**
 * The error an operation on the resource `label` ends with. `mention`: what a message that already
 * names the resource contains (its quoted name), so it is not named twice.
 */
export function namedFailure(
    error: unknown,
    label: string,
    mention: string,
    operation: AsyncResourceOperationError["operation"],
): Error {
    if (!(error instanceof LifecycleError)) return new AsyncResourceOperationError(label, operation, error);
    if (!error.message.includes(mention)) {
        const unnamed = error.message;
        error.message = `${label}: ${unnamed}`;
        if (error.stack?.includes(unnamed)) error.stack = error.stack.replace(unnamed, error.message);
    }
    return error;
}
