// The engine's Cancel, as a provider process can hear it.
//
// On the first Ctrl-C (or a `kill -INT` of the CLI) the engine stops starting steps, waits for the
// running ones, and sends Cancel to every provider (pkg/resource/deploy/deployment_executor.go,
// SignalCancellation). The SDK's dynamic-provider server answers Cancel as a no-op and gives the
// provider no hook, so a create waiting on a long task would hold the whole `up` until its timeout
// (20 minutes by default). That server is a gRPC (HTTP/2) server in this very process: Cancel arrives on
// it as a stream whose path names the method, which any listener of the server's "stream" event sees.
// The SDK's own handling is untouched; this only listens.

import { EventEmitter } from "node:events";
import type { IncomingHttpHeaders } from "node:http2";

/** The gRPC path of the engine's Cancel call to a resource provider. */
export const CANCEL_PATH = "/pulumirpc.ResourceProvider/Cancel";

/** Something that emits HTTP/2 "stream" events: the gRPC server's HTTP/2 server. */
type StreamSource = EventEmitter & { listenerCount(event: "stream"): number };

/**
 * Calls `onCancel` when the engine sends Cancel to this process, by listening on every HTTP/2 server in
 * it that serves gRPC streams (`servers`: the active handles of the process by default). Answers
 * whether it found one to listen on; without one, only a second Ctrl-C (SIGINT) interrupts.
 */
export function onEngineCancel(onCancel: () => void, servers: readonly unknown[] = activeHandles()): boolean {
    let listening = false;
    for (const server of servers) {
        if (!isStreamSource(server)) continue;
        server.prependListener("stream", (_stream: unknown, headers: IncomingHttpHeaders) => {
            if (headers[":path"] === CANCEL_PATH) onCancel();
        });
        listening = true;
    }
    return listening;
}

function isStreamSource(value: unknown): value is StreamSource {
    return value instanceof EventEmitter && value.listenerCount("stream") > 0;
}

/** The process's live handles: its listening servers among them. */
function activeHandles(): unknown[] {
    const lister = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles;
    return typeof lister === "function" ? lister.call(process) : [];
}
