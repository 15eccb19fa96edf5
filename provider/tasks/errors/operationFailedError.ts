import { LifecycleError } from "../../shared/errors/lifecycleError";
import type { OperationView } from "../protocol/dialects/dialect";

/** A long-running operation ended failed or canceled at the API; the message carries the API's reason. */
export class OperationFailedError extends LifecycleError {
    override readonly name = "OperationFailedError";

    constructor(
        /** The operation, for messages: "the update of \"w1\" at /widgets". */
        readonly what: string,
        /** Its last view: state failed or canceled, with the API's error. */
        readonly view: OperationView,
        next: string,
    ) {
        super(`${what} ended ${view.state} (${view.status}): ${view.error ?? "the API gave no reason"}; ${next}`);
    }
}
