import { LifecycleError } from "./lifecycleError";

/**
 * State names a resource kind this version of the package does not have: it was written by a newer
 * version. Nothing was done.
 */
export class UnknownResourceKindError extends LifecycleError {
    override readonly name = "UnknownResourceKindError";

    constructor(readonly kind: string) {
        super(
            `pulumi-lifecycle has no provider for ${JSON.stringify(kind)}: the stack was written by a newer version ` +
                "of the package. Install that version (or a later one) in the project and run the command again.",
        );
    }
}
