// Progress lines and warnings for the user, sent to the Pulumi engine's Log service.
//
// A dynamic provider's process is not connected to the engine: pulumi.log there falls back to the
// process's stdout and stderr, which the engine records at debug level only (pulumi/pulumi#17943), so
// the user would never see a task's progress. The engine's address is the process's first argument,
// though, so we send the lines ourselves: progress as ephemeral info messages (shown while the update
// runs), warnings as lasting ones. A line sent with the resource's URN is shown on the resource's own
// row; without one the engine puts it on the Stack row.
// Best effort: with no engine listening, lines go to stderr and the operation carries on.

import { dirname } from "node:path";
import type * as engineGrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import type * as enginePb from "@pulumi/pulumi/proto/engine_pb";

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

/** A reporter sending to the engine at `address` (e.g. "127.0.0.1:51234"), or to stderr without one. */
export function engineReporter(address: string | undefined): Reporter {
    const toStderr: Reporter = ({ message }) => process.stderr.write(`${message}\n`);
    if (!address || !/^[\w.[\]:-]+:\d+$/.test(address)) return toStderr;
    let client: engineGrpc.EngineClient | undefined;
    let pb: typeof enginePb | undefined;
    // biome-ignore lint/suspicious/noExplicitAny: grpc-js is loaded from @pulumi/pulumi's dependencies at run time.
    let grpc: any;
    let broken = false;
    return (line) => {
        if (broken) return toStderr(line);
        try {
            if (!client || !pb) {
                // The SDK's own stubs and its grpc-js, resolved through @pulumi/pulumi (a peer dependency).
                grpc = require(
                    require.resolve("@grpc/grpc-js", { paths: [dirname(require.resolve("@pulumi/pulumi"))] }),
                );
                const stubs = require("@pulumi/pulumi/proto/engine_grpc_pb") as typeof engineGrpc;
                pb = require("@pulumi/pulumi/proto/engine_pb") as typeof enginePb;
                client = new stubs.EngineClient(address, grpc.credentials.createInsecure());
            }
            const severity = line.severity ?? "info";
            const request = new pb.LogRequest();
            request.setSeverity(SEVERITY[severity]);
            request.setMessage(line.message);
            if (line.urn) request.setUrn(line.urn);
            request.setEphemeral(severity === "info");
            client.log(request, new grpc.Metadata(), { deadline: Date.now() + DEADLINE_MS }, (error: unknown) => {
                if (error) {
                    broken = true;
                    toStderr(line);
                }
            });
        } catch {
            broken = true;
            toStderr(line);
        }
    };
}
