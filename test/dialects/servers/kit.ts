// The harness every dialect server of issue 19 is built on, so faults, counting and time are the same
// everywhere. A request goes through: body read (1 MiB at most, else 413) -> route (the dialect's
// `classify`) -> credentials (the dialect's `authenticate`) -> JSON parsing -> the fault plan -> the
// dialect's handler -> the answer, which a fault may lose, cut or delay.
//
// Operations on these servers advance per poll, never per wall clock (OperationScript), so no test waits
// for time to pass. The only real waiting is the `slow` fault, whose milliseconds tests keep small.
//
// Test infrastructure only: nothing here ships in the package.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { seededRandom } from "../../../provider/shared/random";

/** A fault the kit applies to one request before/after the dialect's handler. */
export type Fault =
    | { kind: "throttle"; hint: "seconds" | "http-date" | "none" | "body"; seconds: number } // the dialect renders it (renderThrottle)
    | { kind: "server-error"; status: 500 | 502 | 503 | 504 } // answered INSTEAD of handling (nothing done)
    | { kind: "lose-answer" } // handled (the effect happens), then the socket is destroyed unanswered
    | { kind: "cut-answer" } // handled, status+headers sent, body cut mid-way
    | { kind: "slow"; ms: number }; // handled, answer delayed (real ms; tests keep it small)

/** Every kind of fault, in a fixed order (randomFaults draws among them). */
export const FAULT_KINDS: readonly Fault["kind"][] = ["throttle", "server-error", "lose-answer", "cut-answer", "slow"];

/** Decides the fault of each request (or none). `operation` is the dialect's name for the call ("create", "poll", "get", "delete", "update", "list"). */
export interface FaultPlan {
    next(request: { method: string; path: string; operation: string }): Fault | undefined;
}

/** A plan that never injects anything. */
export function noFaults(): FaultPlan {
    return { next: () => undefined };
}

/**
 * Each entry is used `times` (default 1) on the first requests it matches (by operation and/or method;
 * an entry naming neither matches every request). Entries are tried in order, so an earlier entry that
 * still has uses wins; once every entry is used up, no more faults.
 */
export function scriptedFaults(
    script: ReadonlyArray<{ operation?: string; method?: string; fault: Fault; times?: number }>,
): FaultPlan {
    const entries = script.map((entry) => ({ ...entry, left: entry.times ?? 1 }));
    return {
        next(request) {
            const entry = entries.find(
                (candidate) =>
                    candidate.left > 0 &&
                    (candidate.operation === undefined || candidate.operation === request.operation) &&
                    (candidate.method === undefined || candidate.method.toUpperCase() === request.method),
            );
            if (entry === undefined) return undefined;
            entry.left--;
            return entry.fault;
        },
    };
}

/**
 * A fault on about `rate` of the requests (those of `operations` only, when given), of a kind drawn
 * among `kinds` (default all), from a PRNG seeded by `seed`: the same requests in the same order get the
 * same faults. Throttle hints, statuses and delays are drawn too; throttles ask for 0 to 2 s, slow
 * answers wait 1 to 20 ms.
 */
export function randomFaults(options: {
    seed: number;
    rate: number;
    kinds?: Fault["kind"][];
    operations?: string[];
}): FaultPlan {
    const random = seededRandom(options.seed);
    const kinds = options.kinds && options.kinds.length > 0 ? options.kinds : FAULT_KINDS;
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    return {
        next(request) {
            if (options.operations !== undefined && !options.operations.includes(request.operation)) return undefined;
            if (random() >= options.rate) return undefined;
            const kind = pick(kinds);
            switch (kind) {
                case "throttle":
                    return {
                        kind,
                        hint: pick(["seconds", "http-date", "none", "body"] as const),
                        seconds: Math.floor(random() * 3),
                    };
                case "server-error":
                    return { kind, status: pick([500, 502, 503, 504] as const) };
                case "slow":
                    return { kind, ms: 1 + Math.floor(random() * 20) };
                default:
                    return { kind };
            }
        },
    };
}

/** How a long-running operation on the server ends, and when: operations advance per poll, never per wall clock. */
export interface OperationScript {
    pollsToFinish: number;
    outcome: "succeeded" | "failed" | "canceled";
    resultLate?: boolean /* the resource becomes readable one GET after the operation says succeeded */;
}
/** What a server's operation does. */
export type OperationKind = "create" | "update" | "delete" | "action";
export interface OperationPlan {
    next(kind: OperationKind): OperationScript;
}

/** The script of an operation nobody scripted. */
export const DEFAULT_OPERATION: Readonly<OperationScript> = { pollsToFinish: 2, outcome: "succeeded" };

/** Every operation ends the same way: `script` over the default { pollsToFinish: 2, outcome: "succeeded" }. */
export function fixedOperations(script: Partial<OperationScript>): OperationPlan {
    return { next: () => ({ ...DEFAULT_OPERATION, ...script }) };
}

/**
 * The scripts in order, each used once by the first operation of its `kind` (any kind when none is
 * given); operations no script is left for get the default.
 */
export function scriptedOperations(...scripts: Array<Partial<OperationScript> & { kind?: string }>): OperationPlan {
    const left = [...scripts];
    return {
        next(kind) {
            const index = left.findIndex((script) => script.kind === undefined || script.kind === kind);
            if (index < 0) return { ...DEFAULT_OPERATION };
            const [script] = left.splice(index, 1);
            const { kind: _kind, ...rest } = script ?? {};
            return { ...DEFAULT_OPERATION, ...rest };
        },
    };
}

/** A plan whose first operation of one kind runs until the test releases it. */
export interface HeldOperations extends OperationPlan {
    /** The held operation ends (as it was scripted to) at its next poll; later operations get the default. */
    release(): void;
}

/**
 * The first operation of `kind` runs, poll after poll, until `release()`: a test interrupts a client
 * while the operation is certainly running, with no wall-clock pacing (servers compare their scripts'
 * `pollsToFinish` at every poll, so the script object is changed in place).
 */
export function heldOperations(kind: OperationKind, outcome: OperationScript["outcome"] = "succeeded"): HeldOperations {
    const held: OperationScript = { pollsToFinish: Number.POSITIVE_INFINITY, outcome };
    let given = false;
    return {
        next(asked) {
            if (given || asked !== kind) return { ...DEFAULT_OPERATION };
            given = true;
            return held;
        },
        release() {
            held.pollsToFinish = 0;
        },
    };
}

/** What every server counts, so tests assert zero zombies and zero duplicates ON THE SERVER. */
export interface ServerCounts {
    creates: number; // resources ever created
    duplicates: number; // creates that made a second live resource with an existing natural key (only where the API allows that at all)
    live: number; // resources existing now
    requests: number;
    faultsInjected: number;
    requestsOutsideApi: number; // requests to paths the API does not have (a client that strayed)
    unauthorized: number; // requests whose credentials were missing or wrong
}

/** A running dialect server. */
export interface DialectServer {
    readonly url: string; // http://127.0.0.1:<port>
    readonly counts: () => ServerCounts;
    readonly resources: () => ReadonlyArray<Record<string, unknown>>; // the live resources, as the API would GET them
    setFaults(plan: FaultPlan): void;
    setOperations(plan: OperationPlan): void;
    /** Out-of-band changes, as another tool would make them: for refresh-after-drift and -after-deletion. */
    mutate(id: string, change: Record<string, unknown>): void;
    remove(id: string): void;
    close(): Promise<void>;
}

/** One request as the dialect's handler sees it. */
export interface KitRequest {
    method: string;
    /** The path as sent (still percent-encoded), without the query. */
    path: string;
    query: URLSearchParams;
    headers: IncomingMessage["headers"];
    /** The parsed JSON body; undefined when the body was empty (or not JSON by its Content-Type). */
    body: unknown;
    rawBody: string;
    url: URL;
}

/**
 * An answer. A `body` that is a string or bytes is sent as is (Content-Type text/plain unless the
 * headers say otherwise); any other defined body is sent as JSON (Content-Type application/json unless
 * the headers say otherwise); undefined sends no body.
 */
export interface KitResponse {
    status: number;
    headers?: Record<string, string>;
    body?: unknown;
}

/** What the harness counted (`handlerFailures`: handlers that threw, answered 500; a bug in a server). */
export interface KitStats {
    requests: number;
    faultsInjected: number;
    requestsOutsideApi: number;
    unauthorized: number;
    handlerFailures: number;
}

/** A running harness. */
export interface KitServer {
    url: string;
    close(): Promise<void>;
    setFaults(p: FaultPlan): void;
    stats(): KitStats;
}

/** The largest request body a server reads: a larger one is answered 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The options of `startServer`. */
export interface KitOptions {
    handler: (request: KitRequest) => Promise<KitResponse> | KitResponse;
    classify: (method: string, path: string) => string | undefined; // the operation name, or undefined: a path the API does not have (404 + counted)
    renderThrottle: (fault: Extract<Fault, { kind: "throttle" }>, operation: string) => KitResponse;
    authenticate: (request: KitRequest) => boolean; // false -> the dialect's 401/403, counted
    unauthorized: () => KitResponse;
    port?: number;
    /** The first fault plan; default none. */
    faults?: FaultPlan;
    /**
     * How the harness's own errors look (400 body not JSON, 404 outside the API, 413 body too large,
     * injected 5xx, 500 handler failure); default an RFC 9457 problem document.
     */
    renderError?: (status: number, detail: string) => KitResponse;
}

const STATUS_TITLES: Record<number, string> = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    413: "Content Too Large",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
};

/** An RFC 9457 problem document. */
export function problem(status: number, detail: string, extra: Record<string, unknown> = {}): KitResponse {
    return {
        status,
        headers: { "content-type": "application/problem+json" },
        body: { type: "about:blank", title: STATUS_TITLES[status] ?? `HTTP ${status}`, status, detail, ...extra },
    };
}

/**
 * A Retry-After value: delay-seconds, or the HTTP date that many seconds after `now` (RFC 9110 section
 * 10.2.3; a date has whole seconds, so it is rounded up to never ask for less than `seconds`).
 */
export function formatRetryAfter(seconds: number, form: "seconds" | "http-date", now: number = Date.now()): string {
    const whole = Math.max(0, Math.ceil(seconds));
    if (form === "seconds") return String(whole);
    return new Date(Math.ceil(now / 1000) * 1000 + whole * 1000).toUTCString();
}

/** The HTTP harness: body cap (1 MiB -> 413), JSON parsing, auth check, fault application, counting. */
export async function startServer(options: KitOptions): Promise<KitServer> {
    let faults = options.faults ?? noFaults();
    const stats: KitStats = {
        requests: 0,
        faultsInjected: 0,
        requestsOutsideApi: 0,
        unauthorized: 0,
        handlerFailures: 0,
    };
    const renderError = options.renderError ?? ((status: number, detail: string) => problem(status, detail));

    const serve = async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
        stats.requests++;
        const method = (incoming.method ?? "GET").toUpperCase();
        const url = new URL(incoming.url ?? "/", "http://127.0.0.1");
        const rawBody = await readBody(incoming);
        if (rawBody === undefined) {
            send(response, renderError(413, `The request body is larger than ${MAX_BODY_BYTES} bytes.`), true);
            return;
        }
        const operation = options.classify(method, url.pathname);
        const parsed = parseBody(incoming, rawBody);
        const request: KitRequest = {
            method,
            path: url.pathname,
            query: url.searchParams,
            headers: incoming.headers,
            body: parsed.body,
            rawBody,
            url,
        };
        // Credentials are checked before the route is revealed, as real gateways do; a stray request
        // without them counts as both.
        if (operation === undefined) stats.requestsOutsideApi++;
        if (!options.authenticate(request)) {
            stats.unauthorized++;
            send(response, options.unauthorized());
            return;
        }
        if (operation === undefined) {
            send(response, renderError(404, `${method} ${url.pathname} is not part of this API.`));
            return;
        }
        if (parsed.error !== undefined) {
            send(response, renderError(400, `The request body is not valid JSON: ${parsed.error}`));
            return;
        }
        const fault = faults.next({ method, path: url.pathname, operation });
        if (fault !== undefined) stats.faultsInjected++;
        if (fault?.kind === "throttle") {
            send(response, options.renderThrottle(fault, operation));
            return;
        }
        if (fault?.kind === "server-error") {
            send(response, renderError(fault.status, "Injected server error: the request was not handled."));
            return;
        }
        let answer: KitResponse;
        try {
            answer = await options.handler(request);
        } catch (error) {
            stats.handlerFailures++;
            answer = renderError(500, `The handler failed: ${error instanceof Error ? error.message : String(error)}`);
        }
        if (fault?.kind === "lose-answer") {
            incoming.socket.destroy();
            return;
        }
        if (fault?.kind === "cut-answer") {
            cut(response, answer);
            return;
        }
        if (fault?.kind === "slow") await delay(fault.ms);
        send(response, answer);
    };

    const sockets = new Set<Socket>();
    const server = createServer((incoming, response) => {
        serve(incoming, response).catch((error: unknown) => {
            stats.handlerFailures++;
            if (!response.headersSent) send(response, renderError(500, String(error)));
            else response.destroy();
        });
    });
    server.on("connection", (socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(options.port ?? 0, "127.0.0.1", () => {
            server.off("error", reject);
            resolve();
        });
    });
    const port = (server.address() as AddressInfo).port;
    let closing: Promise<void> | undefined; // closing twice is fine: the second call waits for the first
    return {
        url: `http://127.0.0.1:${port}`,
        setFaults(plan) {
            faults = plan;
        },
        stats: () => ({ ...stats }),
        close() {
            closing ??= new Promise<void>((resolve, reject) => {
                server.close((error) => (error ? reject(error) : resolve()));
                for (const socket of sockets) socket.destroy();
            });
            return closing;
        },
    };
}

/**
 * The body as text, or undefined when it is larger than MAX_BODY_BYTES: reading stops keeping it there,
 * and the rest is drained unread so the 413 can still be delivered on the connection.
 */
function readBody(incoming: IncomingMessage): Promise<string | undefined> {
    const declared = Number(incoming.headers["content-length"]);
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
        incoming.resume();
        return Promise.resolve(undefined);
    }
    return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const onData = (chunk: Buffer) => {
            size += chunk.length;
            if (size <= MAX_BODY_BYTES) {
                chunks.push(chunk);
                return;
            }
            incoming.off("data", onData);
            incoming.resume();
            resolve(undefined);
        };
        incoming.on("data", onData);
        incoming.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        incoming.once("error", reject);
    });
}

/** JSON when the body is not empty and its Content-Type is JSON of some kind, or absent. */
function parseBody(incoming: IncomingMessage, rawBody: string): { body: unknown; error?: string } {
    const type = incoming.headers["content-type"];
    if (rawBody.length === 0 || (type !== undefined && !/json/i.test(type))) return { body: undefined };
    try {
        return { body: JSON.parse(rawBody) };
    } catch (error) {
        return { body: undefined, error: error instanceof Error ? error.message : String(error) };
    }
}

function encode(answer: KitResponse): { headers: Record<string, string>; payload: Buffer } {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers ?? {})) headers[name.toLowerCase()] = value;
    if (answer.body === undefined) return { headers, payload: Buffer.alloc(0) };
    if (typeof answer.body === "string" || answer.body instanceof Uint8Array) {
        headers["content-type"] ??= "text/plain; charset=utf-8";
        return { headers, payload: Buffer.from(answer.body as string | Uint8Array) };
    }
    headers["content-type"] ??= "application/json";
    return { headers, payload: Buffer.from(JSON.stringify(answer.body), "utf8") };
}

function bodyless(status: number): boolean {
    return status === 204 || status === 304 || (status >= 100 && status < 200);
}

function send(response: ServerResponse, answer: KitResponse, closeConnection = false): void {
    const { headers, payload } = encode(answer);
    if (closeConnection) headers.connection = "close";
    if (!bodyless(answer.status)) headers["content-length"] = String(payload.length);
    response.writeHead(answer.status, headers);
    response.end(bodyless(answer.status) ? undefined : payload);
}

/**
 * Status and headers, announcing the whole body, then half of it and a reset. An answer with an empty
 * body is announced chunked and reset before its end, so the client still sees a body cut short; one
 * that cannot have a body (204, 304) arrives whole before the reset: there is nothing to cut.
 */
function cut(response: ServerResponse, answer: KitResponse): void {
    const { headers, payload } = encode(answer);
    const reset = () => response.socket?.destroy();
    if (bodyless(answer.status)) {
        response.writeHead(answer.status, headers);
        response.end(reset);
        return;
    }
    if (payload.length === 0) {
        headers["transfer-encoding"] = "chunked";
        response.writeHead(answer.status, headers);
        response.flushHeaders();
        setImmediate(reset);
        return;
    }
    headers["content-length"] = String(payload.length);
    response.writeHead(answer.status, headers);
    response.write(payload.subarray(0, Math.floor(payload.length / 2)), reset);
}
