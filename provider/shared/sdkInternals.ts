// Every reach of this package into the Pulumi SDK's internals, in one place: nothing else in provider/
// loads a non-public path of @pulumi/pulumi, resolves @grpc/grpc-js through it, or lists the process's
// handles (test/shared/sdkInternals.test.ts guards that). None of these is a public API of the SDK, so
// each can change in any release; each is used so that its absence degrades, never breaks:
//
// | reach                                            | used by            | without it                        |
// | ------------------------------------------------ | ------------------ | --------------------------------- |
// | @grpc/grpc-js as the SDK resolves it:            | engineCalls.ts     | customTimeouts and the URN of     |
// |   Server.prototype._retrieveHandler              |                    |   progress lines are not heard    |
// | process._getActiveHandles (the SDK's gRPC server | engineCancel.ts    | the engine's Cancel is not heard  |
// |   among them, its HTTP/2 "stream" event)         |                    |                                   |
// | proto/engine_grpc_pb, proto/engine_pb and the    | engineLog.ts       | progress lines go to stderr,      |
// |   SDK's grpc-js (credentials, Metadata)          |                    |   after one line saying why       |
// | runtime/config `isConfigSecret`                  | tokenWarning.ts    | PULUMI_CONFIG_SECRET_KEYS is read |
//
// Checked against @pulumi/pulumi 3.142.0 (the oldest the peer range `^3.142.0` admits) and 3.270.0
// (the newest when this was written, and the dev dependency): both ask for @grpc/grpc-js ^1.10.1,
// which resolves to 1.14.7 in both installs, and each reach above is present in both, under Node.js
// 20.20.2, 22.23.3 and 24.21.0 (process._getActiveHandles). The compatibility suite
// (test/compat/pulumiSdk.test.ts) runs the oldest and the newest @pulumi/pulumi on the registry with
// the real CLI and proves the three provider-process hooks by what the engine sees; the others are
// covered by the unit and real-CLI suites on the dev dependency. A hook that cannot attach says so,
// once per process (tasks/processContext.ts), naming what the user loses and can do.

import { dirname } from "node:path";
import type * as engineGrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import type * as enginePb from "@pulumi/pulumi/proto/engine_pb";

/** The @pulumi/pulumi versions every reach in this module was checked against. */
export const SDK_VERSIONS_CHECKED = ["3.142.0", "3.270.0"] as const;

/** A gRPC handler as @grpc/grpc-js keeps it. */
export interface GrpcHandler {
    readonly type: string;
    readonly func: (call: { request?: unknown }, ...rest: unknown[]) => unknown;
}

/** The part of @grpc/grpc-js's Server prototype the engine-call hook replaces. */
export interface GrpcServerPrototype {
    _retrieveHandler?: (this: unknown, path: string) => GrpcHandler | null;
}

/** The part of @grpc/grpc-js the Log client uses. */
interface GrpcModule {
    readonly Server?: { prototype?: GrpcServerPrototype };
    readonly credentials: { createInsecure(): unknown };
    readonly Metadata: new () => unknown;
}

/**
 * The Server prototype of the @grpc/grpc-js that serves this process: the one the SDK's
 * dynamic-provider server (the process's main module) resolves, else the one @pulumi/pulumi resolves.
 */
export function sdkGrpcServerPrototype(): GrpcServerPrototype | undefined {
    for (const anchor of [require.main?.filename, safeResolve("@pulumi/pulumi")]) {
        const prototype = anchor ? grpcFrom(anchor)?.Server?.prototype : undefined;
        if (prototype) return prototype;
    }
    return undefined;
}

/**
 * The process's live handles (its listening servers among them), or none where Node.js no longer
 * offers `process._getActiveHandles`.
 */
export function activeHandles(): unknown[] {
    const lister = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles;
    return typeof lister === "function" ? lister.call(process) : [];
}

/** Sends one message to the engine's Log service. */
export type EngineLog = (
    message: { severity: number; message: string; urn?: string; ephemeral: boolean },
    deadline: number,
    done: (error: unknown) => void,
) => void;

/**
 * A client of the engine's Log service at `address`, built from the SDK's own stubs and the grpc-js
 * they use (resolved through @pulumi/pulumi, a peer dependency). Throws where the SDK no longer has them.
 */
export function engineLogClient(address: string): EngineLog {
    const sdk = safeResolve("@pulumi/pulumi");
    const grpc = sdk ? grpcFrom(sdk) : undefined;
    if (!grpc) throw new Error("@grpc/grpc-js cannot be resolved from @pulumi/pulumi");
    const stubs = require("@pulumi/pulumi/proto/engine_grpc_pb") as typeof engineGrpc;
    const pb = require("@pulumi/pulumi/proto/engine_pb") as typeof enginePb;
    const client = new stubs.EngineClient(address, grpc.credentials.createInsecure() as never);
    return ({ severity, message, urn, ephemeral }, deadline, done) => {
        const request = new pb.LogRequest();
        request.setSeverity(severity as enginePb.LogSeverity);
        request.setMessage(message);
        if (urn) request.setUrn(urn);
        request.setEphemeral(ephemeral);
        client.log(request, new grpc.Metadata() as never, { deadline }, done);
    };
}

/**
 * Whether stack config `key` is a secret, as the language host told the program (the SDK's
 * `isConfigSecret`), or undefined where the SDK no longer offers it.
 */
export function sdkIsConfigSecret(key: string): boolean | undefined {
    try {
        const config = require("@pulumi/pulumi/runtime/config") as { isConfigSecret?: (k: string) => boolean };
        return typeof config.isConfigSecret === "function" ? config.isConfigSecret(key) : undefined;
    } catch {
        return undefined;
    }
}

/** The @grpc/grpc-js module that `anchor` (a file) resolves, if any. */
function grpcFrom(anchor: string): GrpcModule | undefined {
    const path = safeResolve("@grpc/grpc-js", dirname(anchor));
    return path ? (require(path) as GrpcModule) : undefined;
}

function safeResolve(request: string, from?: string): string | undefined {
    try {
        return require.resolve(request, from ? { paths: [from] } : undefined);
    } catch {
        return undefined;
    }
}
