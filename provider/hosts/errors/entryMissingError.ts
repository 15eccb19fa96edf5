import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * An update found that the entry's line was removed outside Pulumi. `pulumi up` does not refresh by
 * default, so the stack still holds the entry; a refresh clears it and the next `up` creates it again.
 */
export class EntryMissingError extends LifecycleError {
    override readonly name = "EntryMissingError";

    constructor(
        readonly entry: string,
        readonly file: string,
    ) {
        super(
            `hosts entry ${entry} is no longer in ${file} (it was removed outside Pulumi), so it cannot be updated. ` +
                'Run "pulumi refresh" (or "pulumi up --refresh") so the stack forgets it; the next "pulumi up" creates it again.',
        );
    }
}
