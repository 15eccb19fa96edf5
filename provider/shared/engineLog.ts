// Progress lines and warnings for the user, sent to the Pulumi engine's Log service.
//
// A dynamic provider's process is not connected to the engine: pulumi.log there falls back to the
// process's stdout and stderr, which the engine records at debug level only (pulumi/pulumi#17943), so
// the user would never see a task's progress. The engine's address is the process's first argument,
// though, so we send the lines ourselves: progress as ephemeral info messages (shown while the update
// runs), warnings as lasting ones. A line sent with the resource's URN is shown on the resource's own
// row; without one the engine puts it on the Stack row.
// Best effort: with no engine listening, lines go to stderr and the operation carries on.

import { type EngineLog, engineLogClient } from "./sdkInternals";
import { messageOf } from "./text";

/** One line for the user: about the resource `urn` (else the stack), a warning or ephemeral progress. */
export interface LogLine {
    readonly message: string;
    readonly urn?: string;
    readonly severity?: "info" | "warning";
}

/** Sends one line. */
export type Reporter = (line: LogLine) => void;

/** The engine's LogSeverity (sdk/proto/engine.proto). */
const SEVERITY = { info: 1, warning: 2 } as const;
const DEADLINE_MS = 2_000;

/**
 * A reporter sending to the engine at `address` (e.g. "127.0.0.1:51234"), or to stderr without one.
 * `connect` builds the Log client (the SDK's, by default); `write` is stderr. When the client cannot be
 * built or the engine refuses a line, the lines go to stderr from then on, after one line saying why:
 * stderr is all that is left (the engine shows it with `--logtostderr -v=9`), so it is never silent.
 */
export function engineReporter(
    address: string | undefined,
    connect: (address: string) => EngineLog = engineLogClient,
    write: (text: string) => void = (text) => process.stderr.write(text),
): Reporter {
    const toStderr: Reporter = ({ message }) => write(`${message}\n`);
    if (!address || !/^[\w.[\]:-]+:\d+$/.test(address)) return toStderr;
    let log: EngineLog | undefined;
    let broken = false;
    const breaks = (why: unknown, line: LogLine) => {
        if (!broken) {
            broken = true;
            write(
                `pulumi-lifecycle: the engine's Log service at ${address} cannot be used (${messageOf(why)}); ` +
                    "progress lines and warnings go to this process's stderr, which the engine shows only with `--logtostderr -v=9`\n",
            );
        }
        toStderr(line);
    };
    return (line) => {
        if (broken) return toStderr(line);
        try {
            log ??= connect(address);
            const severity = line.severity ?? "info";
            log(
                { severity: SEVERITY[severity], message: line.message, urn: line.urn, ephemeral: severity === "info" },
                Date.now() + DEADLINE_MS,
                (error) => {
                    if (error) breaks(error, line);
                },
            );
        } catch (error) {
            breaks(error, line);
        }
    };
}
