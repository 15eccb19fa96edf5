// The chaos proxy: a node:http server the provider under test talks to, in front of the bundled task API
// server (the backend, which holds the truth). Per request it forwards faithfully or injects the fault
// its hooks decide (faults.ts), and it logs every request it received and every request it forwarded.
// A second server, the foreign origin, stands for "elsewhere": redirects and cross-origin Locations
// point at it, and it records whatever reaches it.

import {
    Agent,
    createServer,
    request as httpRequest,
    type IncomingMessage,
    type Server,
    type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
    ASYNC_OPERATIONS_PATH,
    type AsyncOperation,
    DATASTORE_TYPE,
    DATASTORES_PATH,
    type DatastoreRecord,
    datastoreUri,
    operationUri,
} from "../../provider/tasks/protocol/wire";
import {
    type FaultKind,
    MALFORMED_IDS,
    malformedResourceUris,
    nestedJson,
    POLL_HINTS,
    pick,
    type RouteKind,
    retryAfterForms,
} from "./faults";
import type { VirtualTime } from "./virtualTime";

/** The header the test's fetch adds so the proxy can tell the virtual clock which request it holds. */
export const REQUEST_ID_HEADER = "x-chaos-request";
/** The header the test's fetch adds to say which operation sent the request. */
export const OPERATION_HEADER = "x-chaos-operation";

/** The largest answer the client reads is 8 MiB; this one is larger. */
const OVERSIZED_BYTES = 9 * 1024 * 1024;
const NESTING = 100_000;

/** One request the proxy received. */
export interface ProxyRequest {
    readonly seq: number;
    readonly method: string;
    /** Path and query, exactly as received. */
    readonly url: string;
    readonly route: RouteKind;
    readonly authorization: string | undefined;
    /** The virtual clock's id of the client request (its request timer). */
    readonly requestId: number | undefined;
    /** The operation that sent it (the owner's id), when the client said. */
    readonly operationId: number | undefined;
    readonly at: number;
    fault?: FaultKind;
    /** What the fault did, for the trace. */
    detail?: string;
    /** What the client got: a status, "reset", or "held" (no complete answer, the connection left open). */
    outcome?: number | "reset" | "held";
    /** Which request of its route within its operation this is (1, 2, ...), set by the owner. */
    nth?: number;
    /** Whether the backend is to fail the task this request starts, set by the owner. */
    taskFails?: boolean;
    /** Whether the request reached the backend. */
    forwarded?: boolean;
}

/** One request the proxy forwarded to the backend. */
export interface BackendRequest {
    readonly method: string;
    readonly url: string;
    readonly status: number;
}

/** What the proxy asks its owner. */
export interface ProxyHooks {
    /** A request arrived (before any fault): checks, interruptions. */
    arrived(request: ProxyRequest): void;
    /** The fault for this request and the PRNG its details are drawn from; undefined for none. */
    decide(request: ProxyRequest): { fault: FaultKind; random: () => number } | undefined;
    /** The request is done with (answered, reset or held). */
    answered(request: ProxyRequest): void;
    /** The request is about to reach the backend, and has (`done`, whatever came of it). */
    forwarding(request: ProxyRequest, done: boolean): void;
}

export interface ChaosProxyOptions {
    readonly backendUrl: string;
    readonly foreignOrigin: string;
    readonly time: VirtualTime;
    readonly hooks: ProxyHooks;
    /** Someone else's datastores as the backend has them now (for lists and answers that leak them). */
    readonly foreignRecords: () => readonly DatastoreRecord[];
    /** Every datastore as the backend has it now. */
    readonly truth: () => readonly DatastoreRecord[];
    /** The user:password a userinfo Location carries. */
    readonly userinfo: string;
}

interface Answer {
    status: number;
    headers: Record<string, string>;
    body: Buffer;
}

/** Starts the proxy on 127.0.0.1, port 0. */
export async function startChaosProxy(options: ChaosProxyOptions): Promise<ChaosProxy> {
    const proxy = new ChaosProxy(options);
    await proxy.listen();
    return proxy;
}

/** The proxy; `chaos` off makes it forward every request faithfully. */
export class ChaosProxy {
    url = "";
    chaos = true;
    readonly requests: ProxyRequest[] = [];
    readonly backendLog: BackendRequest[] = [];
    private readonly server: Server;
    private readonly sockets = new Set<Socket>();
    private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });
    /** Tasks the proxy made up (fakeDelete), answered by the proxy for as long as it runs. */
    private readonly fakeTasks = new Map<string, AsyncOperation>();
    private readonly neverEnding = new Set<string>();
    private readonly lastReported = new Map<string, string>();
    /** The last request forwarded of those that may start tasks (see `forward`). */
    private writes: Promise<void> = Promise.resolve();
    private seq = 0;

    constructor(private readonly options: ChaosProxyOptions) {
        this.server = createServer((req, res) => {
            void this.handle(req, res).catch(() => res.destroy());
        });
        this.server.on("connection", (socket: Socket) => {
            this.sockets.add(socket);
            socket.on("error", () => undefined);
            socket.on("close", () => {
                this.sockets.delete(socket);
                this.options.time.touch();
            });
        });
    }

    listen(): Promise<void> {
        return new Promise((resolve) => {
            this.server.listen(0, "127.0.0.1", () => {
                this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
                resolve();
            });
        });
    }

    /** Closes every client connection (held answers included); returns how many there were. */
    closeConnections(): number {
        const count = this.sockets.size;
        for (const socket of this.sockets) socket.destroy();
        return count;
    }

    async close(): Promise<void> {
        this.closeConnections();
        this.agent.destroy();
        await new Promise<void>((resolve) => this.server.close(() => resolve()));
    }

    private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
        res.on("error", () => undefined);
        const body = await readAll(req);
        const time = this.options.time;
        time.touch();
        const requestIdHeader = req.headers[REQUEST_ID_HEADER];
        const operationHeader = req.headers[OPERATION_HEADER];
        const url = req.url ?? "/";
        const request: ProxyRequest = {
            seq: ++this.seq,
            method: req.method ?? "GET",
            url,
            route: routeOf(req.method ?? "GET", url),
            authorization: req.headers.authorization,
            requestId: typeof requestIdHeader === "string" ? Number(requestIdHeader) : undefined,
            operationId: typeof operationHeader === "string" ? Number(operationHeader) : undefined,
            at: time.now,
        };
        this.requests.push(request);
        this.options.hooks.arrived(request);
        try {
            const fake = request.route === "operation" ? this.fakeTasks.get(lastSegment(url)) : undefined;
            if (fake) {
                request.detail = "a task the proxy made up";
                this.reply(request, res, json(200, fake));
                return;
            }
            const decision = this.chaos ? this.options.hooks.decide(request) : undefined;
            if (decision) request.fault = decision.fault;
            await this.serve(request, req, res, body, decision);
        } finally {
            time.touch();
            this.options.hooks.answered(request);
        }
    }

    private async serve(
        request: ProxyRequest,
        req: IncomingMessage,
        res: ServerResponse,
        body: Buffer,
        decision: { fault: FaultKind; random: () => number } | undefined,
    ): Promise<void> {
        const forward = (url = request.url) => this.forward(request, req, url, body);
        if (!decision) {
            this.reply(request, res, this.rewriteTask(request, await forward()));
            return;
        }
        const { fault, random } = decision;
        const mutating = request.route === "create" || request.route === "resize" || request.route === "delete";
        switch (fault) {
            case "reset":
                return this.reset(request, res);
            case "lostAnswer":
                await forward();
                return this.reset(request, res);
            case "truncated": {
                const answer = await forward();
                request.outcome = "reset";
                res.writeHead(answer.status, { ...answer.headers, "content-length": String(answer.body.length) });
                res.write(answer.body.subarray(0, Math.floor(answer.body.length / 2)));
                setImmediate(() => res.destroy());
                return;
            }
            case "dribble":
                return this.dribble(request, res, await forward(), random);
            case "hang": {
                if (random() < 0.5) await forward();
                request.detail = request.forwarded ? "forwarded, never answered" : "never answered";
                request.outcome = "held";
                this.options.time.hold(request.requestId, true);
                return;
            }
            case "oversized": {
                const status = mutating ? (await forward()).status : 200;
                return this.oversized(request, res, status, random() < 0.5);
            }
            case "nestedJson":
                return this.nested(request, res, forward, random, mutating);
            case "invalidJson": {
                const answer = await forward();
                this.reply(request, res, {
                    ...answer,
                    body: answer.body.subarray(0, Math.floor(answer.body.length / 2)),
                });
                request.detail = "the answer cut in half";
                return;
            }
            case "throttled": {
                const status = random() < 0.6 ? 429 : 503;
                const retryAfter = pick(retryAfterForms(this.options.time.now), random);
                request.detail = `Retry-After ${JSON.stringify(retryAfter)}`;
                const answer = json(status, {
                    error: status === 429 ? "rate_limited" : "service_unavailable",
                    message: "slow down",
                });
                if (retryAfter !== undefined) answer.headers["retry-after"] = retryAfter;
                return this.reply(request, res, answer);
            }
            case "serverError": {
                const status = pick([500, 502, 504], random);
                return this.reply(
                    request,
                    res,
                    json(status, { error: "internal_error", message: "the server failed" }),
                );
            }
            case "gatewayError": {
                await forward();
                const status = pick([502, 504], random);
                return this.reply(request, res, json(status, { error: "bad_gateway", message: "upstream went away" }));
            }
            case "redirect": {
                const status = pick([301, 302, 307, 308], random);
                const target = pick(
                    [
                        `${this.options.foreignOrigin}${request.url}`,
                        `${this.url}/v2${request.url}`,
                        `/moved${request.url}`,
                    ],
                    random,
                );
                request.detail = `${status} to ${target}`;
                const answer = json(status, { error: "moved", message: "moved" });
                answer.headers.location = target;
                return this.reply(request, res, answer);
            }
            case "definite4xx": {
                // A read is refused as a bad request; a write may also be refused as a conflict.
                const status = mutating && random() < 0.5 ? 409 : 400;
                const answer = json(status, {
                    error: status === 400 ? "bad_request" : "conflict",
                    message: status === 400 ? "the request was refused" : "the cluster is busy; nothing was done",
                });
                return this.reply(request, res, answer);
            }
            case "conflictId": {
                const foreign = this.options.foreignRecords().map((record) => record.id);
                const existingId = pick([...MALFORMED_IDS, ...foreign], random);
                request.detail = `existingId ${JSON.stringify(existingId.slice(0, 60))}`;
                return this.reply(
                    request,
                    res,
                    json(409, { error: "conflict", message: "a datastore with this name exists", existingId }),
                );
            }
            case "locationForeign":
            case "locationUserinfo":
            case "missingLocation": {
                const answer = await forward();
                const location = answer.headers.location;
                if (answer.status === 202 && location) {
                    if (fault === "missingLocation") delete answer.headers.location;
                    else answer.headers.location = this.elsewhere(location, fault === "locationForeign");
                    request.detail = `Location ${answer.headers.location ?? "(none)"}`;
                }
                return this.reply(request, res, this.rewriteTask(request, answer));
            }
            case "locationOn200": {
                const answer = this.rewriteTask(request, await forward());
                if (answer.status === 200) {
                    answer.headers.location = this.elsewhere(request.url, random() < 0.5);
                    request.detail = `Location ${answer.headers.location}`;
                }
                return this.reply(request, res, answer);
            }
            case "listUnfiltered":
                request.detail = "filter dropped";
                return this.reply(request, res, await forward(request.url.split("?")[0]));
            case "listLoose": {
                const filter = new URLSearchParams(request.url.split("?")[1] ?? "").get("filter") ?? "";
                const name = /name eq '([^']*)'/.exec(filter)?.[1];
                const loose = name === undefined ? undefined : `name eq '${name}'`;
                request.detail = `filter loosened to ${JSON.stringify(loose ?? "(none)")}`;
                const path = DATASTORES_PATH + (loose ? `?filter=${encodeURIComponent(loose)}` : "");
                return this.reply(request, res, await forward(path));
            }
            case "listForeign":
                return this.reply(
                    request,
                    res,
                    this.editJson(request, await forward(), (list) => {
                        const items = [...(list.items as unknown[]), ...this.options.foreignRecords()];
                        return { ...list, items, count: items.length };
                    }),
                );
            case "listBadIds":
                return this.reply(
                    request,
                    res,
                    this.editJson(request, await forward(), (list) => ({
                        ...list,
                        items: (list.items as Record<string, unknown>[]).map((item) => ({
                            ...item,
                            id: pick(MALFORMED_IDS, random),
                        })),
                    })),
                );
            case "getForeign": {
                const foreign = this.options.foreignRecords();
                if (foreign.length === 0) break;
                const record = pick(foreign, random);
                request.detail = `answered ${record.id} (${record.name})`;
                return this.reply(request, res, json(200, record));
            }
            case "getBadId":
                return this.reply(
                    request,
                    res,
                    this.editJson(request, await forward(), (record) => ({
                        ...record,
                        id: pick(MALFORMED_IDS, random),
                    })),
                );
            case "taskBadResource":
            case "taskForeignResource":
                return this.reply(
                    request,
                    res,
                    this.editJson(request, this.rewriteTask(request, await forward()), (task) => {
                        const resources = (task.associatedResources as { resourceUri: string }[] | undefined) ?? [];
                        const realId = lastSegment(resources[0]?.resourceUri ?? "");
                        const foreign = this.options.foreignRecords();
                        const uri =
                            fault === "taskForeignResource" && foreign.length > 0
                                ? datastoreUri(pick(foreign, random).id)
                                : pick(malformedResourceUris(realId, this.options.foreignOrigin), random);
                        request.detail = `associatedResources ${JSON.stringify(uri.slice(0, 80))}`;
                        return { ...task, associatedResources: [{ type: DATASTORE_TYPE, resourceUri: uri }] };
                    }),
                );
            case "taskFlip":
                return this.reply(
                    request,
                    res,
                    this.editJson(request, this.rewriteTask(request, await forward()), (task) => {
                        const id = String(task.id);
                        const flipped =
                            this.lastReported.get(id) === "SUCCEEDED"
                                ? { state: "RUNNING", progressPercent: 50, error: null, endedAt: undefined }
                                : task.state !== "FAILED"
                                  ? {
                                        state: "FAILED",
                                        progressPercent: 100,
                                        error: {
                                            errorCode: "INTERNAL_ERROR",
                                            message: "the task runner lost its worker",
                                        },
                                        endedAt: new Date(this.options.time.now).toISOString(),
                                    }
                                  : undefined;
                        if (!flipped) return task;
                        request.detail = `${String(task.state)} answered ${flipped.state}`;
                        this.lastReported.set(id, flipped.state);
                        return { ...task, ...flipped };
                    }),
                );
            case "taskNeverEnds": {
                this.neverEnding.add(lastSegment(request.url.split("?")[0] ?? ""));
                request.detail = "this task now runs for ever";
                return this.reply(request, res, this.rewriteTask(request, await forward()));
            }
            case "taskPollHint":
                return this.reply(
                    request,
                    res,
                    this.editJson(request, this.rewriteTask(request, await forward()), (task) => {
                        const hint = pick(POLL_HINTS, random);
                        request.detail = `suggestedPollingIntervalSeconds ${JSON.stringify(hint)}`;
                        return { ...task, suggestedPollingIntervalSeconds: hint };
                    }),
                );
            case "fakeDelete": {
                const id = decodeSafely(lastSegment(request.url.split("?")[0] ?? ""));
                const record = this.options.truth().find((datastore) => datastore.id === id.toLowerCase());
                if (!record) break;
                const taskId = uuidFrom(random);
                const at = new Date(this.options.time.now).toISOString();
                this.fakeTasks.set(taskId, {
                    id: taskId,
                    type: "task",
                    name: `Delete datastore ${record.name}`,
                    state: "SUCCEEDED",
                    progressPercent: 100,
                    associatedResources: [{ type: DATASTORE_TYPE, resourceUri: datastoreUri(record.id) }],
                    error: null,
                    logMessages: [{ message: `Datastore ${record.name} deleted`, timestampAt: at }],
                    createdAt: at,
                    updatedAt: at,
                    endedAt: at,
                });
                request.detail = `answered task ${taskId}; the datastore stays`;
                const answer = json(202, { taskUri: operationUri(taskId) });
                answer.headers.location = operationUri(taskId);
                return this.reply(request, res, answer);
            }
        }
        // A fault that found nothing to act on: forward faithfully.
        request.detail = "nothing to act on; forwarded";
        this.reply(request, res, this.rewriteTask(request, await forward()));
    }

    /** A Location elsewhere: on the foreign origin, or on this origin with credentials in it. */
    private elsewhere(location: string, foreign: boolean): string {
        const path = location.startsWith("http") ? new URL(location).pathname : location;
        if (foreign) return `${this.options.foreignOrigin}${path}`;
        const origin = new URL(this.url);
        return `${origin.protocol}//${this.options.userinfo}@${origin.host}${path}`;
    }

    /** An operation's answer as the chaos has it: a task made to run for ever stays RUNNING. */
    private rewriteTask(request: ProxyRequest, answer: Answer): Answer {
        if (request.route !== "operation" || answer.status !== 200) return answer;
        const id = lastSegment(request.url.split("?")[0] ?? "");
        const edited =
            this.chaos && this.neverEnding.has(id)
                ? this.editJson(request, answer, (task) => ({
                      ...task,
                      state: "RUNNING",
                      progressPercent: 60,
                      error: null,
                      endedAt: undefined,
                  }))
                : answer;
        const state = parseJson(edited.body) as { state?: unknown } | undefined;
        if (typeof state?.state === "string") this.lastReported.set(id, state.state);
        return edited;
    }

    private editJson(
        request: ProxyRequest,
        answer: Answer,
        edit: (body: Record<string, unknown>) => Record<string, unknown>,
    ): Answer {
        if (answer.status !== 200) return answer;
        const body = parseJson(answer.body);
        if (typeof body !== "object" || body === null || Array.isArray(body)) return answer;
        const edited = edit(body as Record<string, unknown>);
        request.detail ??= "edited";
        return { ...answer, body: Buffer.from(JSON.stringify(edited)) };
    }

    private async nested(
        request: ProxyRequest,
        res: ServerResponse,
        forward: () => Promise<Answer>,
        random: () => number,
        mutating: boolean,
    ): Promise<void> {
        const shape = random() < 0.5 ? "array" : "object";
        const deep = nestedJson(NESTING, shape);
        let status: number;
        if (mutating) {
            status = pick([400, 409, 500], random);
            // A 500 may come after the work; a 400 or 409 is a refusal, nothing done.
            if (status === 500) await forward();
        } else {
            status = random() < 0.7 ? 200 : 500;
        }
        const body = status === 200 ? deep : `{"error":"bad_request","message":"refused","detail":${deep}}`;
        request.detail = `${status} with ${shape}s nested ${NESTING} levels`;
        this.reply(request, res, { status, headers: { "content-type": "application/json" }, body: Buffer.from(body) });
    }

    private oversized(request: ProxyRequest, res: ServerResponse, status: number, declared: boolean): void {
        request.detail = `${status} with ${OVERSIZED_BYTES} bytes, ${declared ? "declared" : "chunked"}`;
        request.outcome = status;
        const body = oversizedBody();
        res.writeHead(status, {
            "content-type": "application/json",
            ...(declared ? { "content-length": String(body.length) } : {}),
        });
        const chunk = 256 * 1024;
        for (let offset = 0; offset < body.length; offset += chunk) res.write(body.subarray(offset, offset + chunk));
        res.end();
    }

    private dribble(request: ProxyRequest, res: ServerResponse, answer: Answer, random: () => number): void {
        const time = this.options.time;
        request.outcome = "held";
        res.writeHead(answer.status, { ...answer.headers, "content-length": String(answer.body.length) });
        let sent = Math.min(answer.body.length - 1, 1 + Math.floor(random() * 3));
        if (sent > 0) res.write(answer.body.subarray(0, sent));
        request.detail = `${answer.status}, then one byte a second, never finished`;
        time.hold(request.requestId, true);
        let cancel: (() => void) | undefined;
        const next = () => {
            if (res.destroyed || sent >= answer.body.length - 1) return;
            res.write(answer.body.subarray(sent, sent + 1));
            sent++;
            cancel = time.schedule(1000, next);
        };
        cancel = time.schedule(1000, next);
        res.on("close", () => cancel?.());
    }

    private reset(request: ProxyRequest, res: ServerResponse): void {
        request.outcome = "reset";
        res.destroy();
    }

    private reply(request: ProxyRequest, res: ServerResponse, answer: Answer): void {
        request.outcome = answer.status;
        res.writeHead(answer.status, { ...answer.headers, "content-length": String(answer.body.length) });
        res.end(answer.body);
    }

    /**
     * Forwards a request to the backend. Requests that may start tasks go one at a time, so that a task
     * failure armed at the backend for one of them (the owner's `forwarding`) is taken by no other.
     */
    private forward(request: ProxyRequest, req: IncomingMessage, url: string, body: Buffer): Promise<Answer> {
        if (request.method === "GET") return this.send(request, req, url, body);
        const sent = this.writes.then(() => this.send(request, req, url, body));
        this.writes = sent.then(
            () => undefined,
            () => undefined,
        );
        return sent;
    }

    private send(request: ProxyRequest, req: IncomingMessage, url: string, body: Buffer): Promise<Answer> {
        request.forwarded = true;
        const backend = new URL(this.options.backendUrl);
        const headers: Record<string, string> = {};
        for (const name of ["authorization", "content-type", "accept", "idempotency-key"]) {
            const value = req.headers[name];
            if (typeof value === "string") headers[name] = value;
        }
        if (body.length > 0) headers["content-length"] = String(body.length);
        this.options.hooks.forwarding(request, false);
        const answer = new Promise<Answer>((resolve, reject) => {
            const outgoing = httpRequest(
                {
                    host: backend.hostname,
                    port: backend.port,
                    path: url,
                    method: request.method,
                    headers,
                    agent: this.agent,
                },
                (incoming) => {
                    const chunks: Buffer[] = [];
                    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
                    incoming.on("error", reject);
                    incoming.on("end", () => {
                        const status = incoming.statusCode ?? 502;
                        this.backendLog.push({ method: request.method, url, status });
                        resolve({ status, headers: keptHeaders(incoming.headers), body: Buffer.concat(chunks) });
                    });
                },
            );
            outgoing.on("error", reject);
            outgoing.end(body);
        });
        const done = () => this.options.hooks.forwarding(request, true);
        answer.then(done, done);
        return answer;
    }
}

/** A server standing for "elsewhere": it answers 404 to everything and records what reached it. */
export interface ForeignOrigin {
    readonly url: string;
    readonly received: { method: string; url: string; authorization: string | undefined }[];
    close(): Promise<void>;
}

export async function startForeignOrigin(): Promise<ForeignOrigin> {
    const received: ForeignOrigin["received"] = [];
    const server = createServer((req, res) => {
        received.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization });
        req.resume();
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"error":"not_found","message":"nothing here"}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
        url,
        received,
        close: () =>
            new Promise<void>((resolve) => {
                server.closeAllConnections();
                server.close(() => resolve());
            }),
    };
}

/** The API route a request asks for. */
export function routeOf(method: string, url: string): RouteKind {
    const path = url.split("?")[0] ?? "";
    if (path === DATASTORES_PATH) return method === "GET" ? "list" : method === "POST" ? "create" : "other";
    const rest = (prefix: string) => (path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : undefined);
    const datastore = rest(DATASTORES_PATH);
    if (datastore !== undefined && datastore.length > 0 && !datastore.includes("/")) {
        if (method === "GET") return "get";
        if (method === "PATCH") return "resize";
        if (method === "DELETE") return "delete";
        return "other";
    }
    const operation = rest(ASYNC_OPERATIONS_PATH);
    if (operation !== undefined && operation.length > 0 && !operation.includes("/") && method === "GET") {
        return "operation";
    }
    return "other";
}

function json(status: number, body: unknown): Answer {
    return {
        status,
        headers: { "content-type": "application/json; charset=utf-8" },
        body: Buffer.from(JSON.stringify(body)),
    };
}

function keptHeaders(headers: IncomingMessage["headers"]): Record<string, string> {
    const kept: Record<string, string> = {};
    for (const name of ["content-type", "location", "retry-after", "cache-control", "www-authenticate", "allow"]) {
        const value = headers[name];
        if (typeof value === "string") kept[name] = value;
    }
    return kept;
}

function parseJson(body: Buffer): unknown {
    try {
        return JSON.parse(body.toString("utf8"));
    } catch {
        return undefined;
    }
}

function lastSegment(path: string): string {
    return path.slice(path.lastIndexOf("/") + 1);
}

function decodeSafely(segment: string): string {
    try {
        return decodeURIComponent(segment);
    } catch {
        return segment;
    }
}

function readAll(req: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => resolve(Buffer.concat(chunks)));
        req.on("error", () => resolve(Buffer.concat(chunks)));
    });
}

/** A UUID drawn from `random`, so a replayed seed makes up the same task ids. */
function uuidFrom(random: () => number): string {
    const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

let oversized: Buffer | undefined;

function oversizedBody(): Buffer {
    oversized ??= Buffer.from(`{"items":[],"count":0,"padding":"${"x".repeat(OVERSIZED_BYTES)}"}`);
    return oversized;
}
