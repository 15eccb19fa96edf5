import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * A hosts file that was to be read does not exist. Reading helpers (the `hosts import` command and the
 * lookup functions) raise it instead of answering "no entries", which would hide a wrong path.
 */
export class HostsFileNotFoundError extends LifecycleError {
    override readonly name = "HostsFileNotFoundError";
    readonly code = "ENOENT";

    constructor(
        readonly file: string,
        cause?: unknown,
    ) {
        super(`cannot read hosts file ${file}: it does not exist.`, { cause });
    }
}
