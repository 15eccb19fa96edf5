// The provider process outlives the engine that started it when the CLI is killed (SIGKILL, a crash):
// the engine starts plugins through a launcher shell and in their own process group, so neither the
// kill nor a parent check reaches the node process. Nothing can receive its answers any more, and the
// SDK's provider server reports every error to the dead engine's stderr, whose write error it reports
// again, forever: seen here as 100% CPU and memory growing past 2 GB. So the process exits once the
// engine stops accepting connections (after having accepted them) or a pipe to it breaks. What it had
// started is found again by the next `pulumi up`: the create token or natural key, the dead lock holder.

import { connect } from "node:net";
import { codeOf } from "./files/errno";

/** How often the engine's address is probed; the probe is one TCP connect, closed at once. */
const PROBE_INTERVAL_MS = 2_000;

/** Where the engine listens, from the `host:port` the engine passes the provider process. */
function parseAddress(address: string | undefined): { host: string; port: number } | undefined {
    const match = /^(.*):(\d+)$/.exec(address ?? "");
    if (!match) return undefined;
    const port = Number(match[2]);
    return port > 0 && port < 65_536 ? { host: (match[1] as string).replace(/^\[|\]$/g, ""), port } : undefined;
}

/** Resolves with whether something accepts connections at the address. */
function reachable(target: { host: string; port: number }): Promise<boolean> {
    return new Promise((resolve) => {
        const socket = connect(target);
        socket.once("connect", () => {
            socket.destroy();
            resolve(true);
        });
        socket.once("error", () => resolve(false));
    });
}

let watching = false;

/**
 * Exits the process (through `exit`) when the engine at `engineAddress` goes away. An address that was
 * never reachable (a test that starts the provider without an engine) arms nothing.
 */
export function exitWhenEngineGone(
    engineAddress: string | undefined,
    exit: (reason: string) => void = (reason) => {
        process.exitCode = 1;
        process.stderr.write(`pulumi-lifecycle: provider process exiting: ${reason}\n`, () => process.exit(1));
        setTimeout(() => process.exit(1), 200).unref();
    },
): void {
    if (watching) return;
    watching = true;
    for (const stream of [process.stdout, process.stderr]) {
        stream.on("error", (error: unknown) => {
            if (codeOf(error) === "EPIPE") process.exit(1);
        });
    }
    const target = parseAddress(engineAddress);
    if (!target) return;
    let seen = false;
    const timer = setInterval(() => {
        void reachable(target).then((up) => {
            if (up) seen = true;
            else if (seen) {
                clearInterval(timer);
                exit(`the engine at ${engineAddress} is gone (the pulumi CLI was killed or crashed)`);
            }
        });
    }, PROBE_INTERVAL_MS);
    timer.unref();
    void reachable(target).then((up) => {
        seen ||= up;
    });
}
