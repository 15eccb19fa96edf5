// A stand-in for the engine's Log service (pulumirpc.Engine), so tests can see what a provider process
// sends the user: the provider reaches it at the address given as its first argument, as it would the
// real engine. Only Log is implemented; the other Engine methods answer UNIMPLEMENTED.

import * as grpc from "@grpc/grpc-js";
import * as enginerpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import type * as enginepb from "@pulumi/pulumi/proto/engine_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";

/** One message a provider logged. */
export interface LoggedMessage {
    readonly severity: number;
    readonly message: string;
    readonly ephemeral: boolean;
}

/** A running Engine Log service. */
export interface EngineLogServer {
    /** `127.0.0.1:<port>`, to pass to the provider process. */
    readonly address: string;
    readonly messages: LoggedMessage[];
    close(): Promise<void>;
}

/** Starts the service on a free port. */
export async function startEngineLogServer(): Promise<EngineLogServer> {
    const server = new grpc.Server();
    const messages: LoggedMessage[] = [];
    const unimplemented = (_call: unknown, callback: grpc.sendUnaryData<unknown>) =>
        callback({ code: grpc.status.UNIMPLEMENTED, details: "not part of the test engine" }, null);
    const handlers = Object.fromEntries(Object.keys(enginerpc.EngineService).map((method) => [method, unimplemented]));
    server.addService(enginerpc.EngineService, {
        ...handlers,
        log: (call: grpc.ServerUnaryCall<enginepb.LogRequest, Empty>, callback: grpc.sendUnaryData<Empty>) => {
            const request = call.request;
            messages.push({
                severity: request.getSeverity(),
                message: request.getMessage(),
                ephemeral: request.getEphemeral(),
            });
            callback(null, new Empty());
        },
    });
    const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
            error ? reject(error) : resolve(bound),
        ),
    );
    return {
        address: `127.0.0.1:${port}`,
        messages,
        close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
    };
}
