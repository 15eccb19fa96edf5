import { LifecycleError } from "../../shared/errors/lifecycleError";

/** A read without the resource's definition: an import, or `AsyncResource.get` without the state it needs. */
export class AsyncResourceDefinitionError extends LifecycleError {
    override readonly name = "AsyncResourceDefinitionError";

    constructor(readonly id: string) {
        super(
            `cannot read AsyncResource ${JSON.stringify(id)} without its definition: pass api, collectionPath, ` +
                "itemPath, naturalKey and body in AsyncResource.get's state (the id is the natural key), or " +
                "declare the resource with `adopt: true`",
        );
    }
}
