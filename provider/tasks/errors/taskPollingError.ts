import { messageOf } from "../../shared/text";
import type { AsyncOperation } from "../protocol/wire";
import { describeTaskState, TaskWaitError } from "./taskWaitError";

/** Looking at the task kept failing, so its outcome is unknown. */
export class TaskPollingError extends TaskWaitError {
    override readonly name = "TaskPollingError";

    constructor(taskUri: string, operation: AsyncOperation | undefined, cause: unknown) {
        const reason = messageOf(cause);
        super(
            `could not follow task ${operation?.id ?? taskUri} (last seen ${describeTaskState(operation)}): ${reason}`,
            taskUri,
            operation,
            { cause },
        );
    }
}
