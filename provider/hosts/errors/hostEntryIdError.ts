import { LifecycleError } from "../../shared/errors/lifecycleError";

/** An id given to `HostEntry.get` (or found in state) that is not a HostEntry id. */
export class HostEntryIdError extends LifecycleError {
    override readonly name = "HostEntryIdError";

    constructor(readonly id: string) {
        super(
            `${JSON.stringify(id)} is not a HostEntry id: ids are "<family>/<canonical name>", ` +
                'for example "ipv4/web.internal" or "ipv6/web.internal", with "@<host>:<port>" after it ' +
                'for an entry on another machine ("ipv4/web.internal@10.0.0.5:22"). Use the id `pulumi stack ' +
                "output` or the entry's `id` output shows.",
        );
    }
}
