import { formatDuration } from "../../shared/duration";
import { LifecycleError } from "../../shared/errors/lifecycleError";
import type { OperationHandle, OperationView } from "../protocol/dialects/dialect";

/** Why following an operation stopped before it ended. */
export type OperationWaitStop = "interrupted" | "deadline" | "polling";

/**
 * Following a long-running operation stopped before it ended: Ctrl-C or SIGINT, the deadline, or looks
 * at it that kept failing. The operation may still run and finish, so whatever it was writing must be
 * recorded (with its handle, so the next `up` follows it on), never forgotten.
 */
export class OperationWaitError extends LifecycleError {
    override readonly name = "OperationWaitError";

    constructor(
        readonly stop: OperationWaitStop,
        /** How to look at the operation again. */
        readonly handle: OperationHandle,
        /** The operation as last seen, if it was seen at all. */
        readonly lastSeen: OperationView | undefined,
        detail: { timeoutMs?: number; setting?: string; cause?: unknown; what: string },
    ) {
        super(messageOf(stop, lastSeen, detail), detail.cause === undefined ? undefined : { cause: detail.cause });
    }
}

function messageOf(
    stop: OperationWaitStop,
    lastSeen: OperationView | undefined,
    detail: { timeoutMs?: number; setting?: string; cause?: unknown; what: string },
): string {
    const seen = lastSeen
        ? `last seen ${lastSeen.status}${lastSeen.progressPercent === undefined ? "" : ` ${lastSeen.progressPercent}%`}`
        : "never seen";
    switch (stop) {
        case "interrupted":
            return `stopped following ${detail.what} (${seen}): interrupted; it runs on at the API`;
        case "deadline":
            return (
                `gave up waiting for ${detail.what} after ${formatDuration(detail.timeoutMs ?? 0)} (${seen}); ` +
                `raise ${detail.setting ? `\`${detail.setting}\`` : "the resource's timeouts"} if it needs longer`
            );
        case "polling": {
            const cause = detail.cause instanceof Error ? detail.cause.message : String(detail.cause);
            return `could not look at ${detail.what} (${seen}): ${cause}`;
        }
    }
}
