import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The bytes cannot be a hosts file we may safely rewrite (UTF-16, a NUL byte after other bytes of its line, or
 * nothing but NUL bytes): nothing was written.
 * The message says what was found and how to save the file instead.
 */
export class UnsupportedHostsFileError extends LifecycleError {
    override readonly name = "UnsupportedHostsFileError";
}
