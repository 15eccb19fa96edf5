import { LifecycleError } from "../../shared/errors/lifecycleError";

/** A `connection` given to a read helper (`listHostEntries`, `findHostEntries`) or to `HostEntry.get` failed its checks. */
export class ConnectionSettingsError extends LifecycleError {
    override readonly name = "ConnectionSettingsError";

    /** @param failures each failing field and why, as `check` words them (never a secret's value) */
    constructor(readonly failures: readonly { property: string; reason: string }[]) {
        super(
            `the connection cannot be used: ${failures.map((failure) => `${failure.property} ${failure.reason}`).join("; ")}.`,
        );
    }
}
