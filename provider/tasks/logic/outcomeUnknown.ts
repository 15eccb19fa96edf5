// Pure: whether a failed request may still have been carried out by the server, which decides
// whether what it may have made is recorded (partial state) or the failure is a plain refusal.

import { LifecycleError } from "../../shared/errors/lifecycleError";
import { MalformedResponseError } from "../errors/malformedResponseError";
import { TaskApiError } from "../errors/taskApiError";
import { TaskApiUnreachableError } from "../errors/taskApiUnreachableError";

/**
 * Whether a failed request may still have been carried out by the server. A positive list: no answer
 * (network error, timeout), a 5xx or 408, a success answer that cannot be read (not JSON, no usable
 * Location), an abort while it was in flight (`aborted`), or any error answer to a retry after an attempt
 * of unknown outcome (a 400, a 409 while the key is in progress, a 429 past the deadline: the last
 * answer does not undo what the earlier attempt may have done). Anything else is definite: a 4xx says
 * the request was refused, and an error of our own (a bug, a stack overflow) is no reason to think it was not.
 */
export function outcomeUnknown(error: unknown, aborted = false): boolean {
    if (error instanceof TaskApiError) {
        return error.earlierOutcomeUnknown || error.status >= 500 || error.status === 408;
    }
    if (error instanceof TaskApiUnreachableError) return true;
    if (error instanceof MalformedResponseError) {
        return error.status !== undefined && error.status >= 200 && error.status < 300;
    }
    if (error instanceof LifecycleError) return false;
    return aborted;
}
