// The task API server's requests and replies as plain values: which route a method and path name, the
// checks of a query and a JSON body, and the replies the server sends. No sockets here: the HTTP server
// (taskApiServer.ts) reads a request into a `Request`, and writes out the `Reply` it gets back.

import type { IncomingMessage } from "node:http";
import { messageOf } from "../shared/text";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH, type ErrorBody, type TaskAccepted } from "../tasks/protocol/wire";
import { ApiError, badRequest } from "./apiError";
import { type Fault, TEST_API_PATH } from "./control";
import type { Accepted, Idempotency } from "./datastoreModel";
import type { RouteKind } from "./faults";
import { parseFilter } from "./filterParser";
import { FilterSyntaxError } from "./filterSyntaxError";
import { parseIdempotencyKey } from "./requests";

/** A response about to be sent. */
export interface Reply {
    readonly status: number;
    readonly headers: Readonly<Record<string, string>>;
    readonly body: unknown;
}

/** What became of a request: a reply, unless a fault dropped it. */
export interface Outcome {
    readonly reply: Reply | undefined;
    readonly fault?: Fault;
    /** Test control API requests are neither logged nor delayed. */
    readonly control?: boolean;
}

/** A request once its body is read. */
export interface Request {
    readonly method: string;
    readonly path: string;
    readonly query: URLSearchParams;
    readonly headers: IncomingMessage["headers"];
    readonly body: Buffer;
    readonly bodyTooLarge: boolean;
}

const DATASTORE_PATH = new RegExp(`^${DATASTORES_PATH}/([^/]+)$`);
const OPERATION_PATH = new RegExp(`^${ASYNC_OPERATIONS_PATH}/([^/]+)$`);

/** A route, with the id from its path. */
export interface Route {
    readonly kind: RouteKind;
    readonly id: string;
}

/** The route a method and path name: 404 for an unknown path, 405 (with Allow) for a method it does not take. */
export function resolveRoute(method: string, path: string): Route {
    if (path === DATASTORES_PATH) {
        if (method === "GET") return { kind: "listDatastores", id: "" };
        if (method === "POST") return { kind: "createDatastore", id: "" };
        throw methodNotAllowed(method, path, ["GET", "POST"]);
    }
    const datastore = DATASTORE_PATH.exec(path);
    if (datastore) {
        const id = decodeSegment(datastore[1] ?? "");
        if (method === "GET") return { kind: "getDatastore", id };
        if (method === "PATCH") return { kind: "resizeDatastore", id };
        if (method === "DELETE") return { kind: "deleteDatastore", id };
        throw methodNotAllowed(method, path, ["GET", "PATCH", "DELETE"]);
    }
    const operation = OPERATION_PATH.exec(path);
    if (operation) {
        if (method === "GET") return { kind: "getOperation", id: decodeSegment(operation[1] ?? "") };
        throw methodNotAllowed(method, path, ["GET"]);
    }
    throw noRoute(path);
}

/** Whether the path is under the test control API (`/_test`). */
export function isControlPath(path: string): boolean {
    return path === TEST_API_PATH || path.startsWith(`${TEST_API_PATH}/`);
}

/** The 404 for a path no route takes. */
export function noRoute(path: string): ApiError {
    return new ApiError(404, "not_found", `there is no route ${JSON.stringify(path)}.`);
}

/** The 405 for a method the path does not take, with the Allow header listing those it does. */
export function methodNotAllowed(method: string, path: string, allowed: readonly string[]): ApiError {
    return new ApiError(405, "method_not_allowed", `${path} does not take ${method}; it takes ${allowed.join(", ")}.`, {
        headers: { Allow: allowed.join(", ") },
    });
}

function decodeSegment(segment: string): string {
    try {
        return decodeURIComponent(segment);
    } catch {
        return segment;
    }
}

/** Splits a request target into its path and query; `rawQuery` is the query as sent, for the request log. */
export function parseTarget(url: string): { path: string; query: URLSearchParams; rawQuery: string } {
    const question = url.indexOf("?");
    const path = question < 0 ? url : url.slice(0, question);
    const rawQuery = question < 0 ? "" : url.slice(question + 1);
    return { path, query: new URLSearchParams(rawQuery), rawQuery };
}

/** 400 naming the first query parameter the route does not take. */
export function allowQuery(query: URLSearchParams, allowed: readonly string[]): void {
    for (const name of query.keys()) {
        if (!allowed.includes(name)) {
            const takes = allowed.length === 0 ? "takes no query parameters" : `takes only ${allowed.join(", ")}`;
            throw badRequest(`unknown query parameter ${JSON.stringify(name)}; this route ${takes}.`);
        }
    }
}

/** The `filter` query parameter parsed; 400 with the parser's message when it is not valid. */
export function parseFilterParameter(text: string): ReturnType<typeof parseFilter> {
    try {
        return parseFilter(text);
    } catch (error) {
        if (error instanceof FilterSyntaxError) throw badRequest(`${error.message}.`);
        throw error;
    }
}

/** The request's JSON body: 400 when missing or not JSON, 415 when not declared as JSON. */
export function jsonBody(request: Request): unknown {
    if (request.body.length === 0) throw badRequest(`${request.method} ${request.path} needs a JSON body.`);
    const type = request.headers["content-type"];
    const [mediaType, ...parameters] = (type ?? "").split(";").map((part) => part.trim().toLowerCase());
    const charset = parameters.find((parameter) => parameter.startsWith("charset="))?.slice("charset=".length);
    if (mediaType !== "application/json" || (charset !== undefined && charset.replaceAll('"', "") !== "utf-8")) {
        throw new ApiError(
            415,
            "unsupported_media_type",
            `Content-Type must be application/json, not ${type === undefined ? "absent" : JSON.stringify(type)}.`,
        );
    }
    try {
        return JSON.parse(request.body.toString("utf8"));
    } catch (error) {
        throw badRequest(`the body is not valid JSON: ${messageOf(error)}.`);
    }
}

/** The request's Idempotency-Key with what it must match on a repeat; undefined without the header. */
export function idempotencyOf(request: Request, body: unknown): Idempotency | undefined {
    const key = parseIdempotencyKey(request.headers["idempotency-key"]);
    return key === undefined ? undefined : { key, method: request.method, path: request.path, body };
}

/** The 202 for a mutation that started a task: Location and taskUri point at the task. */
export function accepted(result: Accepted): Reply {
    return {
        status: 202,
        headers: { Location: result.location },
        body: { taskUri: result.location } satisfies TaskAccepted,
    };
}

/** A reply with this status and JSON body, and no headers of its own. */
export function json(status: number, body: unknown): Reply {
    return { status, headers: {}, body };
}

const STATUS_CODES = {
    429: ["rate_limited", "too many requests (injected fault)"],
    500: ["internal_error", "the server failed (injected fault)"],
    502: ["bad_gateway", "the gateway got no valid answer (injected fault)"],
    503: ["service_unavailable", "the service is unavailable (injected fault)"],
    504: ["gateway_timeout", "the gateway timed out (injected fault)"],
} as const;

/** The answer of a `status` fault: the error, and Retry-After when asked (always for 429, default 1 s). */
export function faultStatusReply(status: keyof typeof STATUS_CODES, retryAfterSeconds: number | undefined): Reply {
    const [error, sentence] = STATUS_CODES[status];
    const retryAfter = retryAfterSeconds ?? (status === 429 ? 1 : undefined);
    const body: ErrorBody = { error, message: `${sentence}; nothing was done.` };
    return { status, headers: retryAfter === undefined ? {} : { "Retry-After": String(retryAfter) }, body };
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A reply as it goes on the wire: status, headers and body text, with whatever the fault changes applied. */
export interface WireReply {
    readonly status: number;
    readonly headers: Readonly<Record<string, string>>;
    readonly text: string;
}

/**
 * The reply as it is sent once the fault that matched its request (if any) had its way with it; `closing`
 * asks the client to close the connection, since the server is going away.
 */
export function toWire(reply: Reply, fault: Fault | undefined, closing: boolean): WireReply {
    const headers: Record<string, string> = {
        "Content-Type": "application/json; charset=utf-8",
        "Cache-Control": "no-store",
        ...reply.headers,
    };
    if (closing) headers.Connection = "close";
    let body = reply.body;
    if (fault && "omitLocation" in fault) delete headers.Location;
    if (fault && "taskState" in fault && reply.status === 200 && isObject(body))
        body = { ...body, state: fault.taskState };
    let text = JSON.stringify(body);
    // Cut short, a JSON object is never valid JSON: what a proxy that truncates an answer delivers.
    if (fault && "invalidJson" in fault) text = text.slice(0, Math.floor(text.length / 2));
    headers["Content-Length"] = String(Buffer.byteLength(text));
    return { status: reply.status, headers, text };
}
