import { LifecycleError } from "../../shared/errors/lifecycleError";

/** `hosts import --stack` would make the stack's state wrong; nothing was imported. Says what to do. */
export class ImportRefusedError extends LifecycleError {
    override readonly name = "ImportRefusedError";
}
