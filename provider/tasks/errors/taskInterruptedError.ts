import type { AsyncOperation } from "../protocol/wire";
import { describeTaskState, TaskWaitError } from "./taskWaitError";

/** The provider process was interrupted (SIGINT: a second Ctrl-C) while it waited for the task. */
export class TaskInterruptedError extends TaskWaitError {
    override readonly name = "TaskInterruptedError";

    constructor(taskUri: string, operation: AsyncOperation | undefined) {
        super(
            `interrupted while waiting for task ${operation?.id ?? taskUri} (last seen ${describeTaskState(operation)})`,
            taskUri,
            operation,
        );
    }
}
