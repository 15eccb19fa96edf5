import { LifecycleError } from "./lifecycleError";

/** A resource's state was written by a newer pulumi-lifecycle, whose shape this version cannot read. */
export class NewerStateError extends LifecycleError {
    constructor(
        /** The resource, as messages name it. */
        readonly resource: string,
        /** The state-shape version on record. */
        readonly found: number,
        /** The newest state-shape version this package reads. */
        readonly supported: number,
    ) {
        super(
            `${resource}: its state was written by a newer pulumi-lifecycle (state version ${found}; this one ` +
                `reads up to ${supported}); nothing was done. Install the pulumi-lifecycle version the stack was ` +
                "last updated with, or a newer one, and run the command again",
        );
        this.name = "NewerStateError";
    }
}
