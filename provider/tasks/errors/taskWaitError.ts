import { LifecycleError } from "../../shared/errors/lifecycleError";
import type { AsyncOperation } from "../protocol/wire";

/**
 * Waiting for a task ended without the task succeeding: it failed, the deadline passed, polling kept
 * failing, or the process was interrupted. The task may still exist and may still finish, so whatever it
 * was creating must be recorded as partial state, never forgotten.
 */
export abstract class TaskWaitError extends LifecycleError {
    constructor(
        message: string,
        /** The task's URI (its Location). */
        readonly taskUri: string,
        /** The task as last seen, if it was seen at all. */
        readonly lastSeen: AsyncOperation | undefined,
        options?: { cause: unknown },
    ) {
        super(message, options);
    }

    /** The task id: from the task as seen, or the last segment of its URI. */
    get taskId(): string {
        return this.lastSeen?.id ?? this.taskUri.slice(this.taskUri.lastIndexOf("/") + 1);
    }
}

/** "RUNNING 40%" for messages. */
export function describeTaskState(operation: AsyncOperation | undefined): string {
    return operation ? `${operation.state} ${operation.progressPercent}%` : "never seen";
}
