// What the engine says with each call, as the provider's own code can hear it.
//
// The engine sends every Create, Update and Delete the resource's URN and its `customTimeouts` entry
// (CreateRequest.timeout, in seconds), and every call its URN. The SDK's dynamic-provider server passes
// a provider only the properties, so a create cannot know how long the user allowed it, and a progress
// line cannot say which resource it is about (the engine then shows it on the Stack row).
//
// The server is @grpc/grpc-js's, in this very process. Each call's handler is found by
// `Server.prototype._retrieveHandler(path)`; wrapping what it answers runs the SDK's own handler,
// unchanged, inside an AsyncLocalStorage context that holds the decoded request's URN and timeout, so
// every await under it (the provider's create, our lifecycle, our reporter) sees them. That prototype
// is an SDK internal: sdkInternals.ts finds it, and says which versions it was checked against. The
// hook is installed when this package is first loaded in the process, which happens
// inside the first call that names one of our resources: that one call is not heard (its handler has
// started), every later one is. Where the hook cannot attach, operations fall back to the resource's
// `timeouts` input and progress lines go out without a URN, and `hearEngineCalls` says so.

import { AsyncLocalStorage } from "node:async_hooks";
import { type GrpcServerPrototype, type GrpcHandler as Handler, sdkGrpcServerPrototype } from "./sdkInternals";

/** What one call from the engine says about its resource. */
export interface EngineCall {
    /** The gRPC method: "Create", "Update", "Delete", "Read", ... */
    readonly method: string;
    /** The resource's URN, when the request carries one. */
    readonly urn?: string;
    /** The resource's `customTimeouts` entry for this operation, in milliseconds, when the user set one. */
    readonly timeoutMs?: number;
}

/** The prefix of every call to the provider service. */
const PROVIDER_SERVICE = "/pulumirpc.ResourceProvider/";

const calls = new AsyncLocalStorage<EngineCall>();

/** The engine's call this code runs under, if it was heard. */
export function currentEngineCall(): EngineCall | undefined {
    return calls.getStore();
}

const HOOKED = Symbol.for("pulumi-lifecycle.engineCalls");

/**
 * Makes every later call of the provider service run under its `EngineCall` (see `currentEngineCall`),
 * by wrapping the handlers the gRPC server of this process retrieves (`server`: the prototype of the
 * SDK's @grpc/grpc-js Server by default). Answers whether the hook is in place; installing it twice
 * changes nothing.
 */
export function hearEngineCalls(server: GrpcServerPrototype | undefined = sdkGrpcServerPrototype()): boolean {
    if (!server || typeof server._retrieveHandler !== "function") return false;
    const marked = server as GrpcServerPrototype & { [HOOKED]?: boolean };
    if (marked[HOOKED]) return true;
    const retrieve = server._retrieveHandler;
    const wrapped = new WeakMap<Handler, Handler>();
    server._retrieveHandler = function (this: unknown, path: string) {
        const handler = retrieve.call(this, path);
        if (handler?.type !== "unary" || typeof path !== "string" || !path.startsWith(PROVIDER_SERVICE)) {
            return handler;
        }
        let hooked = wrapped.get(handler);
        if (!hooked) {
            const method = path.slice(PROVIDER_SERVICE.length);
            const func = handler.func;
            hooked = {
                ...handler,
                func: (call, ...rest) => calls.run(engineCallOf(method, call?.request), () => func(call, ...rest)),
            };
            wrapped.set(handler, hooked);
        }
        return hooked;
    };
    marked[HOOKED] = true;
    return true;
}

/** What a decoded provider request says: its URN (`getUrn`) and timeout in seconds (`getTimeout`). */
export function engineCallOf(method: string, request: unknown): EngineCall {
    const ask = (getter: string): unknown => {
        const read = (request as Record<string, unknown> | undefined)?.[getter];
        return typeof read === "function" ? read.call(request) : undefined;
    };
    const urn = ask("getUrn");
    const seconds = ask("getTimeout");
    return {
        method,
        ...(typeof urn === "string" && urn !== "" ? { urn } : {}),
        ...(typeof seconds === "number" && Number.isFinite(seconds) && seconds > 0
            ? { timeoutMs: Math.round(seconds * 1000) }
            : {}),
    };
}
