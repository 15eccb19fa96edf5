// Progress lines for the user, sent to the Pulumi engine's Log service.
//
// A dynamic provider's process is not connected to the engine: pulumi.log there falls back to the
// process's stdout and stderr, which the engine records at debug level only (pulumi/pulumi#17943), so
// the user would never see a task's progress. The engine's address is the process's first argument,
// though, so we send the lines ourselves, as ephemeral info messages (shown while the update runs).
// Best effort: with no engine listening, lines go to stderr and the operation carries on.

import { dirname } from "node:path";
import type * as engineGrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import type * as enginePb from "@pulumi/pulumi/proto/engine_pb";

/** Sends one progress line. */
export type Reporter = (message: string) => void;

/** INFO in the engine's LogSeverity. */
const INFO = 1;
const DEADLINE_MS = 2_000;

/** A reporter sending to the engine at `address` (e.g. "127.0.0.1:51234"), or to stderr without one. */
export function engineReporter(address: string | undefined): Reporter {
    const toStderr: Reporter = (message) => process.stderr.write(`${message}\n`);
    if (!address || !/^[\w.[\]:-]+:\d+$/.test(address)) return toStderr;
    let client: engineGrpc.EngineClient | undefined;
    let pb: typeof enginePb | undefined;
    // biome-ignore lint/suspicious/noExplicitAny: grpc-js is loaded from @pulumi/pulumi's dependencies at run time.
    let grpc: any;
    let broken = false;
    return (message) => {
        if (broken) return toStderr(message);
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
            const request = new pb.LogRequest();
            request.setSeverity(INFO);
            request.setMessage(message);
            request.setEphemeral(true);
            client.log(request, new grpc.Metadata(), { deadline: Date.now() + DEADLINE_MS }, (error: unknown) => {
                if (error) {
                    broken = true;
                    toStderr(message);
                }
            });
        } catch {
            broken = true;
            toStderr(message);
        }
    };
}
