import { formatDuration } from "../../shared/duration";
import type { AsyncOperation } from "../protocol/wire";
import { describeTaskState, TaskWaitError } from "./taskWaitError";

/** The operation's timeout passed before the task ended. */
export class TaskDeadlineError extends TaskWaitError {
    override readonly name = "TaskDeadlineError";

    constructor(taskUri: string, operation: AsyncOperation | undefined, timeoutMs: number) {
        super(
            `gave up waiting for task ${operation?.id ?? taskUri} after ${formatDuration(timeoutMs)} ` +
                `(last seen ${describeTaskState(operation)}); raise the resource's timeouts if the task needs longer`,
            taskUri,
            operation,
        );
    }
}
