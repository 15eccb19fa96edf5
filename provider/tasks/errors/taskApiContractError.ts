import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The task API answered in a way its contract rules out (a task naming another datastore, a 409 for a
 * name no list shows, one natural key matching several datastores). Nothing was changed on our side;
 * the message says what the API answered and what to do.
 */
export class TaskApiContractError extends LifecycleError {
    override readonly name = "TaskApiContractError";
}
