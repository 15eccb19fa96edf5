// The engine's Cancel, as a provider process can hear it.
//
// On the first Ctrl-C (or a `kill -INT` of the CLI) the engine stops starting steps, waits for the
// running ones, and sends Cancel to every provider (pkg/resource/deploy/deployment_executor.go,
// SignalCancellation). The SDK's dynamic-provider server answers Cancel as a no-op and gives the
// provider no hook, so a create waiting on a long task would hold the whole `up` until its timeout
// (20 minutes by default). That server is a gRPC (HTTP/2) server in this very process: Cancel arrives on
// it as a stream whose path names the method, which any listener of the server's "stream" event sees.
// The SDK's own handling is untouched; this only listens.
//
// Which streams count. Only a well-formed gRPC call (POST, content-type application/grpc) to the Cancel
// path, on an HTTP/2 session that has already carried another call to the provider service. The engine
// opens one connection to the provider (sdk/go/common/resource/plugin/plugin.go: one grpc.ClientConn on
// 127.0.0.1:<port>) and calls Handshake, GetPluginInfo, Configure, Check... on it long before any
// Cancel; a stream on a fresh session, whoever opened it, is ignored.
//
// Finding that server takes the process's handles, an internal of Node.js (sdkInternals.ts). Where none
// is found the hook cannot attach, and the process says so (tasks/processContext.ts).
//
// Why listening at all widens nothing. The SDK's server (@pulumi/pulumi/cmd/dynamic-provider/index.js)
// listens on 127.0.0.1:<port> without credentials (grpc.ServerCredentials.createInsecure()) and serves
// every RPC of the provider service to whoever connects: Create, Update and Delete run the `__provider`
// code the request itself carries (requireFromString of the request's property), so any local process
// that can reach the port can already make this process run any code, delete any resource, or end it.
// Cancel, which at most makes operations in flight answer early (as partial state, which the next `up`
// resumes), is strictly less than that; the session rule above only keeps a stray or probing client
// from triggering it by accident.

import { EventEmitter } from "node:events";
import type { IncomingHttpHeaders } from "node:http2";
import { activeHandles } from "./sdkInternals";

/** The gRPC path of the engine's Cancel call to a resource provider. */
export const CANCEL_PATH = "/pulumirpc.ResourceProvider/Cancel";

/** The prefix of every call to the provider service. */
const PROVIDER_SERVICE = "/pulumirpc.ResourceProvider/";

/** Something that emits HTTP/2 "stream" events: the gRPC server's HTTP/2 server. */
type StreamSource = EventEmitter & { listenerCount(event: "stream"): number };

/** The part of an HTTP/2 stream this module reads: the session it belongs to. */
interface StreamOnSession {
    readonly session?: object | null;
}

/**
 * Calls `onCancel` when the engine sends Cancel to this process, by listening on every HTTP/2 server in
 * it that serves gRPC streams (`servers`: the active handles of the process by default). Answers
 * whether it found one to listen on; without one, only a second Ctrl-C (SIGINT) interrupts.
 */
export function onEngineCancel(onCancel: () => void, servers: readonly unknown[] = activeHandles()): boolean {
    let listening = false;
    for (const server of servers) {
        if (!isStreamSource(server)) continue;
        // Sessions that have carried a provider call other than Cancel: the engine's.
        const engineSessions = new WeakSet<object>();
        server.prependListener("stream", (stream: StreamOnSession, headers: IncomingHttpHeaders) => {
            const session = stream?.session;
            const path = headers[":path"];
            if (!session || !isGrpcCall(headers) || typeof path !== "string" || !path.startsWith(PROVIDER_SERVICE)) {
                return;
            }
            if (path !== CANCEL_PATH) engineSessions.add(session);
            else if (engineSessions.has(session)) onCancel();
        });
        listening = true;
    }
    return listening;
}

/** A gRPC request as the protocol defines it: POST, content-type application/grpc (or +proto, ...). */
function isGrpcCall(headers: IncomingHttpHeaders): boolean {
    const type = headers["content-type"];
    return headers[":method"] === "POST" && typeof type === "string" && /^application\/grpc(\+|;|$)/.test(type);
}

function isStreamSource(value: unknown): value is StreamSource {
    return value instanceof EventEmitter && value.listenerCount("stream") > 0;
}
