// The SDK's dynamic-provider server answers a failed check, diff, read or delete with the error's
// message, which the engine shows on the resource's row and in its diagnostics, and it ALSO prints
// `${error}: ${error.stack}` to the provider process's stderr (cmd/dynamic-provider/index.js), which the
// engine shows under the Stack row: the message twice more, then JavaScript stack frames. For an error
// whose message already says what went wrong and what to do, that echo is noise, so it is dropped: a
// line is dropped only when it is exactly the echo of an error handed over here, so every other line
// (an error the package did not explain, our own logs) still reaches the engine.

/** How many echoes are awaited at most: creates and updates are answered without one, so some never come. */
const MAX_AWAITED = 256;

const awaited = new Set<string>();
let filter: typeof console.error | undefined;

/** The line the SDK's server prints for `error`. */
function echoOf(error: Error): string {
    return `${error}: ${error.stack}`;
}

/**
 * Marks `error` as one the engine shows on its resource's row, so the SDK's echo of it (message and
 * stack frames) does not reach the Stack row too. Call it last, once the message is final. Returns it.
 */
export function shownOnItsRow<E extends Error>(error: E): E {
    install();
    awaited.add(echoOf(error));
    if (awaited.size > MAX_AWAITED) awaited.delete(awaited.values().next().value as string);
    return error;
}

/** Puts the filter in front of console.error, again if something replaced it since. */
function install(): void {
    if (console.error === filter) return;
    const print = console.error;
    filter = (...args: unknown[]) => {
        const [line] = args;
        if (args.length === 1 && typeof line === "string" && awaited.delete(line)) return;
        print.apply(console, args);
    };
    console.error = filter;
}
