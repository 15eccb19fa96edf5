import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * `HostEntry.get` named an entry that is not in the file. The engine cannot tell a read that found
 * nothing from one that found something (the SDK's provider server answers both with properties), so a
 * get of a missing line must fail in the provider or it would record an entry that does not exist.
 */
export class EntryNotFoundError extends LifecycleError {
    override readonly name = "EntryNotFoundError";

    constructor(
        readonly entry: string,
        readonly file: string,
    ) {
        super(
            `hosts entry ${entry} is not in ${file}, so HostEntry.get cannot read it. Check the id ` +
                '("<ipv4|ipv6>/<canonical name>", for example "ipv4/web.internal") and the file, ' +
                "or declare it with new hosts.HostEntry(...) to create it.",
        );
    }
}
