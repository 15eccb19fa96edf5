import type { AsyncOperation } from "../protocol/wire";
import { TaskWaitError } from "./taskWaitError";

/** The task ended in FAILED; the message carries the task's own error. */
export class TaskFailedError extends TaskWaitError {
    override readonly name = "TaskFailedError";

    constructor(taskUri: string, operation: AsyncOperation) {
        const reason = operation.error
            ? `${operation.error.message} (${operation.error.errorCode})`
            : "no reason given";
        super(`task ${operation.id} (${operation.name}) failed: ${reason}`, taskUri, operation);
    }
}
