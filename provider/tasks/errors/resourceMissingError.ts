import { LifecycleError } from "../../shared/errors/lifecycleError";

/** A resource the stack knows is gone at the API (deleted outside Pulumi). Says how to get it back. */
export class ResourceMissingError extends LifecycleError {
    override readonly name = "ResourceMissingError";

    constructor(
        /** How the resource is named in messages. */
        readonly resource: string,
        /** The API's id the stack had for it. */
        readonly resourceId: string,
    ) {
        super(
            `${resource} (id ${resourceId}) no longer exists at the API (deleted outside Pulumi). ` +
                'Run "pulumi refresh" so the stack forgets it; the next "pulumi up" creates it again.',
        );
    }
}
