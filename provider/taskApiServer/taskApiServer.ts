// A GreenLake-style datastore API over node:http, for testing and demonstrating clients of async task
// APIs: creating, resizing and deleting a datastore answer 202 with the Location of a task to poll.
//
// A request goes through: body read (1 MB at most) -> bearer token -> test control API, or: size limit ->
// rate limit -> route -> injected fault -> handler -> data file flushed -> latency and delays -> answer.
// Whatever a handler changed is on disk before the answer leaves, so a client never hears of work a crash
// could lose. Nothing a client sends can crash the server: every failure becomes a JSON error.
//
// Tasks advance on an injectable clock (moved forward by `advanceClock`), or by polls, so tests need no
// sleeping; the data file and the models behind it are in taskApiStore.ts and datastoreModel.ts.

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { seededRandom } from "../shared/random";
import { messageOf } from "../shared/text";
import { type Clock, type Sleep, systemClock, timerSleep } from "../shared/time";
import {
    ASYNC_OPERATIONS_PATH,
    type AsyncOperation,
    DATASTORES_PATH,
    type DatastoreList,
    type DatastoreRecord,
    type ErrorBody,
    MAX_BODY_BYTES,
    type TaskAccepted,
} from "../tasks/protocol/wire";
import { ApiError, badRequest } from "./apiError";
import {
    type ClockState,
    type Fault,
    type FaultRule,
    type FaultRuleList,
    type FaultRuleRequest,
    type RequestLogEntry,
    type RequestLogList,
    type TaskApiStats,
    type TaskShape,
    TEST_API_PATH,
} from "./control";
import { type Accepted, DatastoreModel, type Idempotency } from "./datastoreModel";
import {
    FaultRules,
    fullBucket,
    parseFaultRuleRequest,
    type RateLimit,
    type RouteKind,
    type TokenBucket,
    takeToken,
} from "./faults";
import { parseFilter } from "./filterParser";
import { FilterSyntaxError } from "./filterSyntaxError";
import { parseCreateDatastore, parseIdempotencyKey, parseResizeDatastore } from "./requests";
import { TaskApiStore } from "./taskApiStore";
import { objectWithFields, requiredInteger } from "./validation";

/** How a task API server behaves. Every field is optional. */
export interface TaskApiServerOptions {
    /** TCP port; 0 (the default) picks a free one. */
    readonly port?: number;
    /** Address to listen on; default 127.0.0.1. */
    readonly host?: string;
    /** The bearer token every request must carry; default a random one (see `TaskApiServer.token`). */
    readonly token?: string;
    /** The JSON file holding the data; without one, the data lives in memory and ends with the server. */
    readonly dataFile?: string;
    /** The time tasks advance by; default the wall clock. `advanceClock` moves it forward. */
    readonly clock?: Clock;
    /** How latency and `delayMs` faults wait; default real timers. */
    readonly sleep?: Sleep;
    /** How long a task takes on `clock`; default 2000 ms. */
    readonly taskDurationMs?: number;
    /** When set, tasks end on their n-th poll instead of after `taskDurationMs`. */
    readonly taskCompleteAfterPolls?: number;
    /** Sent in every operation as `suggestedPollingIntervalSeconds`; absent by default. */
    readonly suggestedPollingIntervalSeconds?: number;
    /** Probability in [0, 1] that a task fails (errorCode SIMULATED_FAILURE); default 0. */
    readonly failureRate?: number;
    /** Seeds the random numbers deciding failures, so a run can be repeated; default unseeded. */
    readonly seed?: number;
    /** Milliseconds added before every answer (not to the test control API); default 0. */
    readonly latencyMs?: number;
    /** At most `perSecond` requests a second, in bursts of `burst` (default `perSecond`); over it, 429. */
    readonly rateLimit?: { readonly perSecond: number; readonly burst?: number };
    /**
     * Adds `idempotencyKey` (the key of the POST that created it) to every datastore; default false, as
     * the real API, which tells which datastore a create made only through its task's associatedResources.
     */
    readonly echoIdempotencyKey?: boolean;
    /**
     * Lists show a datastore only this many milliseconds (of `clock`) after it was created, as the
     * eventually consistent lists of real APIs do; GET by id always sees it. Default 0.
     */
    readonly listLagMs?: number;
    /** Answer the test control API under `/_test/`; default false. */
    readonly testApi?: boolean;
    /** Called after each logged request, e.g. to print it. */
    readonly onRequest?: (entry: RequestLogEntry) => void;
    /** Called with errors the server answered 500, which are bugs or a data file that cannot be written. */
    readonly onError?: (error: unknown) => void;
}

/** A running task API server. */
export interface TaskApiServer {
    /** `http://host:port`, without a trailing slash. */
    readonly url: string;
    readonly port: number;
    readonly token: string;
    /** `Bearer <token>`: the value of the Authorization header. */
    readonly authorization: string;
    /** The data file's real path; undefined when the data is kept in memory. */
    readonly dataFile: string | undefined;
    /** The server's clock: the injected clock plus every `advanceClock`. */
    now(): number;
    /** Moves the server's clock forward (tasks advance by it). */
    advanceClock(ms: number): void;
    /** Adds a fault rule, as `POST /_test/faults` does (works without the test API); throws ApiError if invalid. */
    addFault(rule: FaultRuleRequest): FaultRule;
    /** Removes every fault rule; returns how many there were. */
    clearFaults(): number;
    /** The fault rules still in force, oldest first. */
    faults(): readonly FaultRule[];
    /** Every request answered (or dropped) so far, in order of arrival; `/_test/` requests are not logged. */
    requests(): readonly RequestLogEntry[];
    /** Empties the request log. */
    clearRequests(): void;
    /** Counters for assertions. */
    stats(): TaskApiStats;
    /** Every datastore as GET would answer it now, oldest first. */
    datastores(): readonly DatastoreRecord[];
    /** An operation as GET would answer it now, without counting a poll; undefined when unknown. */
    operation(id: string): AsyncOperation | undefined;
    /** Resolves once every change so far is in the data file. */
    flush(): Promise<void>;
    /** Stops listening, closes every connection and resolves once the data file is flushed. */
    close(): Promise<void>;
}

/** The default duration of a task. */
export const DEFAULT_TASK_DURATION_MS = 2000;
/** The request log keeps this many entries, so a long-running server does not grow without bound. */
const MAX_LOGGED_REQUESTS = 10_000;
/** Bodies beyond this are not even drained: the connection is closed. */
const MAX_DRAINED_BYTES = 64 * MAX_BODY_BYTES;
/** How long `close()` lets requests in flight finish before cutting their connections. */
const CLOSE_GRACE_MS = 2000;

const DATASTORE_PATH = new RegExp(`^${DATASTORES_PATH}/([^/]+)$`);
const OPERATION_PATH = new RegExp(`^${ASYNC_OPERATIONS_PATH}/([^/]+)$`);

/** Starts a server and resolves once it listens. Rejects when the port is taken or the data file unreadable. */
export async function startTaskApiServer(options: TaskApiServerOptions = {}): Promise<TaskApiServer> {
    checkOptions(options);
    const store = await TaskApiStore.open(options.dataFile);
    const server = new TaskApiHttpServer(options, store);
    await server.listen(options.port ?? 0, options.host ?? "127.0.0.1");
    return server;
}

function checkOptions(options: TaskApiServerOptions): void {
    const check = (ok: boolean, message: string) => {
        if (!ok) throw new RangeError(`startTaskApiServer: ${message}`);
    };
    const { port, taskDurationMs, taskCompleteAfterPolls, failureRate, latencyMs, rateLimit, token } = options;
    check(port === undefined || (Number.isInteger(port) && port >= 0 && port <= 65535), "port must be 0-65535");
    check(token === undefined || /^[\x21-\x7e]+$/.test(token), "token must be printable ASCII without spaces");
    check(
        taskDurationMs === undefined || (Number.isFinite(taskDurationMs) && taskDurationMs >= 0),
        "taskDurationMs must be >= 0",
    );
    check(
        taskCompleteAfterPolls === undefined ||
            (Number.isInteger(taskCompleteAfterPolls) && taskCompleteAfterPolls >= 1),
        "taskCompleteAfterPolls must be a whole number >= 1",
    );
    check(failureRate === undefined || (failureRate >= 0 && failureRate <= 1), "failureRate must be in [0, 1]");
    check(latencyMs === undefined || (Number.isFinite(latencyMs) && latencyMs >= 0), "latencyMs must be >= 0");
    check(
        rateLimit === undefined || (rateLimit.perSecond > 0 && (rateLimit.burst === undefined || rateLimit.burst >= 1)),
        "rateLimit.perSecond must be > 0 and rateLimit.burst >= 1",
    );
}

/** A response about to be sent. */
interface Reply {
    readonly status: number;
    readonly headers: Readonly<Record<string, string>>;
    readonly body: unknown;
}

/** What became of a request: a reply, unless a fault dropped it. */
interface Outcome {
    readonly reply: Reply | undefined;
    readonly fault?: Fault;
    /** Test control API requests are neither logged nor delayed. */
    readonly control?: boolean;
}

/** A request once its body is read. */
interface Request {
    readonly method: string;
    readonly path: string;
    readonly query: URLSearchParams;
    readonly headers: IncomingMessage["headers"];
    readonly body: Buffer;
    readonly bodyTooLarge: boolean;
}

class TaskApiHttpServer implements TaskApiServer {
    readonly token: string;
    readonly authorization: string;
    url = "";
    port = 0;

    private readonly http: Server;
    private readonly model: DatastoreModel;
    private readonly faultRules: FaultRules;
    private readonly log: RequestLogEntry[] = [];
    private readonly inFlight = new Set<Promise<void>>();
    private readonly sockets = new Set<Socket>();
    /** Cancels latency and delays when the server closes. */
    private readonly closing = new AbortController();
    private readonly clock: Clock;
    private readonly sleep: Sleep;
    private readonly tokenDigest: Buffer;
    private readonly rateLimit: RateLimit | undefined;
    private bucket: TokenBucket | undefined;
    private clockOffsetMs = 0;
    private nextSeq = 1;
    private closed: Promise<void> | undefined;

    constructor(
        private readonly options: TaskApiServerOptions,
        private readonly store: TaskApiStore,
    ) {
        this.token = options.token ?? randomBytes(24).toString("base64url");
        this.authorization = `Bearer ${this.token}`;
        this.tokenDigest = digest(this.token);
        this.clock = options.clock ?? systemClock;
        this.sleep = options.sleep ?? timerSleep;
        if (options.rateLimit) {
            const burst = options.rateLimit.burst ?? Math.max(1, options.rateLimit.perSecond);
            this.rateLimit = { perSecond: options.rateLimit.perSecond, burst };
        }
        const random = options.seed !== undefined ? seededRandom(options.seed) : Math.random;
        this.faultRules = new FaultRules(random);
        this.model = new DatastoreModel(store.data, {
            now: () => this.now(),
            random,
            onChange: () => store.changed(),
            echoIdempotencyKey: options.echoIdempotencyKey ?? false,
            defaults: {
                plan:
                    options.taskCompleteAfterPolls !== undefined
                        ? { completeAfterPolls: options.taskCompleteAfterPolls }
                        : { durationMs: options.taskDurationMs ?? DEFAULT_TASK_DURATION_MS },
                failureRate: options.failureRate ?? 0,
                ...(options.suggestedPollingIntervalSeconds !== undefined
                    ? { suggestedPollingIntervalSeconds: options.suggestedPollingIntervalSeconds }
                    : {}),
            },
        });
        this.http = createServer((req, res) => {
            const handled = this.handle(req, res).catch((error: unknown) => {
                // Only a failure to write the answer lands here; the connection is all there is to clean up.
                this.options.onError?.(error);
                res.destroy();
            });
            this.inFlight.add(handled);
            void handled.finally(() => this.inFlight.delete(handled));
        });
        this.http.on("connection", (socket: Socket) => {
            this.sockets.add(socket);
            socket.on("error", () => undefined);
            socket.on("close", () => this.sockets.delete(socket));
        });
        this.http.on("clientError", (_error, socket: Socket) => {
            // Malformed HTTP never reaches a handler; answer it as any other bad request when we still can.
            if (!socket.writable) {
                socket.destroy();
                return;
            }
            const body = JSON.stringify({ error: "bad_request", message: "the request is not valid HTTP/1.1." });
            socket.end(
                "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n" +
                    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
            );
        });
    }

    get dataFile(): string | undefined {
        return this.store.file;
    }

    listen(port: number, host: string): Promise<void> {
        return new Promise((resolve, reject) => {
            this.http.once("error", reject);
            this.http.listen(port, host, () => {
                this.http.off("error", reject);
                const address = this.http.address() as AddressInfo;
                this.port = address.port;
                const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
                this.url = `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${this.port}`;
                resolve();
            });
        });
    }

    now(): number {
        return this.clock() + this.clockOffsetMs;
    }

    advanceClock(ms: number): void {
        if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advanceClock: ms must be >= 0, not ${ms}`);
        this.clockOffsetMs += ms;
    }

    addFault(rule: FaultRuleRequest): FaultRule {
        return this.faultRules.add(parseFaultRuleRequest(rule));
    }

    clearFaults(): number {
        return this.faultRules.clear();
    }

    faults(): readonly FaultRule[] {
        return this.faultRules.list();
    }

    requests(): readonly RequestLogEntry[] {
        return [...this.log].sort((a, b) => a.seq - b.seq);
    }

    clearRequests(): void {
        this.log.length = 0;
    }

    stats(): TaskApiStats {
        return {
            datastoresCreated: this.store.data.counters.datastoresCreated,
            tasksCreated: this.store.data.counters.tasksCreated,
            datastores: this.model.count,
            dataFileWrites: this.store.writes,
            requests: this.log.length,
        };
    }

    datastores(): readonly DatastoreRecord[] {
        this.model.advance();
        return this.model.list(undefined);
    }

    operation(id: string): AsyncOperation | undefined {
        this.model.advance();
        return this.model.peek(id);
    }

    flush(): Promise<void> {
        return this.store.flush();
    }

    close(): Promise<void> {
        this.closed ??= this.shutDown();
        return this.closed;
    }

    private async shutDown(): Promise<void> {
        this.closing.abort(new Error("the task API server is closing"));
        const stopped = new Promise<void>((resolve) => this.http.close(() => resolve()));
        this.http.closeIdleConnections();
        await Promise.race([
            Promise.allSettled([...this.inFlight]),
            new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref()),
        ]);
        for (const socket of this.sockets) socket.destroy();
        await Promise.allSettled([...this.inFlight]);
        await stopped;
        this.model.advance();
        await this.store.flush();
    }

    // ---- one request ----

    private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
        res.on("error", () => undefined);
        const seq = this.nextSeq++;
        const arrivedAt = this.now();
        const read = await readBody(req);
        if (!read) return; // the client went away, or sent far too much: nobody to answer
        const method = req.method ?? "GET";
        const target = parseTarget(req.url ?? "/");
        const request: Request = { method, ...target, headers: req.headers, ...read };
        const control = isControlPath(request.path);
        const outcome = await this.process(request).catch(
            (error: unknown): Outcome => ({ reply: this.errorReply(error), control }),
        );
        const status = await this.deliver(res, outcome);
        if (control) return;
        const idempotencyKey = req.headers["idempotency-key"];
        const entry: RequestLogEntry = {
            seq,
            method,
            path: request.path,
            ...(target.rawQuery ? { query: target.rawQuery } : {}),
            status,
            ...(typeof idempotencyKey === "string" ? { idempotencyKey } : {}),
            ...(outcome.fault ? { fault: outcome.fault } : {}),
            at: new Date(arrivedAt).toISOString(),
        };
        this.log.push(entry);
        if (this.log.length > MAX_LOGGED_REQUESTS) this.log.splice(0, this.log.length - MAX_LOGGED_REQUESTS);
        this.options.onRequest?.(entry);
    }

    private async process(request: Request): Promise<Outcome> {
        this.authenticate(request.headers.authorization);
        if (request.bodyTooLarge) {
            throw new ApiError(413, "payload_too_large", `the body is larger than ${MAX_BODY_BYTES} bytes (1 MB).`);
        }
        if (isControlPath(request.path)) {
            if (!this.options.testApi) throw noRoute(request.path);
            const reply = await this.control(request).catch((error: unknown) => this.errorReply(error));
            return { reply, control: true };
        }
        this.limitRate();
        const route = resolveRoute(request.method, request.path);
        this.model.advance();
        const fault = this.faultRules.take({ method: request.method, path: request.path, route: route.kind });
        if (fault && "status" in fault)
            return { reply: faultStatusReply(fault.status, fault.retryAfterSeconds), fault };
        if (fault && "drop" in fault) return { reply: undefined, fault };
        const shape = fault && "task" in fault ? fault.task : undefined;
        let reply: Reply;
        try {
            reply = this.route(route, request, shape);
        } catch (error) {
            reply = this.errorReply(error);
        }
        await this.store.flush();
        return { reply, ...(fault ? { fault } : {}) };
    }

    private authenticate(header: string | undefined): void {
        const fail = (message: string) =>
            new ApiError(401, "unauthorized", message, { headers: { "WWW-Authenticate": 'Bearer realm="task-api"' } });
        if (!header) throw fail("this API needs the header Authorization: Bearer <token>.");
        const match = /^Bearer +(\S+) *$/i.exec(header);
        if (!match) throw fail("the Authorization header must be Bearer <token>.");
        // Compared as digests: constant time, whatever the lengths.
        if (!timingSafeEqual(digest(match[1] ?? ""), this.tokenDigest)) throw fail("the bearer token is not valid.");
    }

    private limitRate(): void {
        if (!this.rateLimit) return;
        const now = this.now();
        const decision = takeToken(this.bucket ?? fullBucket(this.rateLimit, now), this.rateLimit, now);
        this.bucket = decision.bucket;
        if (!decision.allowed) {
            throw new ApiError(
                429,
                "rate_limited",
                `more than ${this.rateLimit.perSecond} requests a second; retry after ${decision.retryAfterSeconds} s.`,
                { headers: { "Retry-After": String(decision.retryAfterSeconds) } },
            );
        }
    }

    private route(route: Route, request: Request, shape: TaskShape | undefined): Reply {
        switch (route.kind) {
            case "listDatastores": {
                allowQuery(request.query, ["filter"]);
                const filters = request.query.getAll("filter");
                if (filters.length > 1) throw badRequest("filter is given more than once; join clauses with and.");
                const filter = filters[0] === undefined ? undefined : parseFilterParameter(filters[0]);
                const lagMs = this.options.listLagMs ?? 0;
                const items = this.model
                    .list(filter)
                    .filter((datastore) => lagMs === 0 || Date.parse(datastore.createdAt) <= this.now() - lagMs);
                return json(200, {
                    items,
                    count: items.length,
                    offset: 0,
                    total: items.length,
                } satisfies DatastoreList);
            }
            case "getDatastore": {
                allowQuery(request.query, []);
                const datastore = this.model.get(route.id);
                if (!datastore)
                    throw new ApiError(404, "not_found", `there is no datastore with id ${JSON.stringify(route.id)}.`);
                return json(200, datastore);
            }
            case "getOperation":
                allowQuery(request.query, []);
                return json(200, this.model.poll(route.id));
            case "createDatastore": {
                allowQuery(request.query, []);
                const body = jsonBody(request);
                const create = parseCreateDatastore(body);
                return accepted(this.model.create(create, idempotencyOf(request, body), shape));
            }
            case "resizeDatastore": {
                allowQuery(request.query, []);
                const body = jsonBody(request);
                const resize = parseResizeDatastore(body);
                return accepted(this.model.resize(route.id, resize, idempotencyOf(request, body), shape));
            }
            case "deleteDatastore":
                allowQuery(request.query, []);
                return accepted(this.model.delete(route.id, idempotencyOf(request, undefined), shape));
        }
    }

    /** The test control API: faults, the request log, the clock, counters. */
    private async control(request: Request): Promise<Reply> {
        const sub = request.path.slice(TEST_API_PATH.length);
        const methods: Record<string, readonly string[]> = {
            "/faults": ["GET", "POST", "DELETE"],
            "/requests": ["GET", "DELETE"],
            "/clock": ["POST"],
            "/stats": ["GET"],
        };
        const allowed = methods[sub];
        if (!allowed) throw noRoute(request.path);
        if (!allowed.includes(request.method)) throw methodNotAllowed(request.method, request.path, allowed);
        allowQuery(request.query, []);
        switch (`${request.method} ${sub}`) {
            case "POST /faults":
                return json(201, this.addFault(jsonBody(request) as FaultRuleRequest));
            case "GET /faults":
                return json(200, { items: this.faults() } satisfies FaultRuleList);
            case "DELETE /faults":
                return json(200, { cleared: this.clearFaults() });
            case "GET /requests": {
                const items = this.requests();
                return json(200, { items, count: items.length } satisfies RequestLogList);
            }
            case "DELETE /requests": {
                const cleared = this.log.length;
                this.clearRequests();
                return json(200, { cleared });
            }
            case "POST /clock": {
                const body = objectWithFields(jsonBody(request), "the body", ["advanceMs"]);
                this.advanceClock(requiredInteger(body, "advanceMs", "the body", { min: 0, unit: "ms" }));
                this.model.advance();
                await this.store.flush();
                return json(200, { now: new Date(this.now()).toISOString() } satisfies ClockState);
            }
            default:
                return json(200, this.stats());
        }
    }

    private errorReply(error: unknown): Reply {
        if (error instanceof ApiError) {
            const body: ErrorBody = { error: error.code, message: error.message };
            return {
                status: error.status,
                headers: { ...error.extra.headers },
                body: { ...body, ...error.extra.body },
            };
        }
        this.options.onError?.(error);
        const message = messageOf(error);
        return json(500, { error: "internal_error", message: `the server failed: ${message}` } satisfies ErrorBody);
    }

    /** Sends the reply as the fault says; resolves with the status sent, or null when none was. */
    private async deliver(res: ServerResponse, outcome: Outcome): Promise<number | null> {
        const { reply, fault } = outcome;
        if (!reply || (fault && "loseResponse" in fault)) {
            res.destroy();
            return null;
        }
        try {
            const latency = outcome.control ? 0 : (this.options.latencyMs ?? 0);
            if (latency > 0) await this.sleep(latency, this.closing.signal);
            if (fault && "delayMs" in fault && fault.delayMs > 0) await this.sleep(fault.delayMs, this.closing.signal);
        } catch {
            // The server is closing: a late answer will never be sent.
            res.destroy();
            return null;
        }
        const headers: Record<string, string> = {
            "Content-Type": "application/json; charset=utf-8",
            "Cache-Control": "no-store",
            ...reply.headers,
        };
        if (this.closing.signal.aborted) headers.Connection = "close";
        let body = reply.body;
        if (fault && "omitLocation" in fault) delete headers.Location;
        if (fault && "taskState" in fault && reply.status === 200 && isObject(body))
            body = { ...body, state: fault.taskState };
        let text = JSON.stringify(body);
        // Cut short, a JSON object is never valid JSON: what a proxy that truncates an answer delivers.
        if (fault && "invalidJson" in fault) text = text.slice(0, Math.floor(text.length / 2));
        headers["Content-Length"] = String(Buffer.byteLength(text));
        res.writeHead(reply.status, headers);
        res.end(text);
        return reply.status;
    }
}

/** A route, with the id from its path. */
interface Route {
    readonly kind: RouteKind;
    readonly id: string;
}

function resolveRoute(method: string, path: string): Route {
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

function isControlPath(path: string): boolean {
    return path === TEST_API_PATH || path.startsWith(`${TEST_API_PATH}/`);
}

function noRoute(path: string): ApiError {
    return new ApiError(404, "not_found", `there is no route ${JSON.stringify(path)}.`);
}

function methodNotAllowed(method: string, path: string, allowed: readonly string[]): ApiError {
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

function parseTarget(url: string): { path: string; query: URLSearchParams; rawQuery: string } {
    const question = url.indexOf("?");
    const path = question < 0 ? url : url.slice(0, question);
    const rawQuery = question < 0 ? "" : url.slice(question + 1);
    return { path, query: new URLSearchParams(rawQuery), rawQuery };
}

function allowQuery(query: URLSearchParams, allowed: readonly string[]): void {
    for (const name of query.keys()) {
        if (!allowed.includes(name)) {
            const takes = allowed.length === 0 ? "takes no query parameters" : `takes only ${allowed.join(", ")}`;
            throw badRequest(`unknown query parameter ${JSON.stringify(name)}; this route ${takes}.`);
        }
    }
}

function parseFilterParameter(text: string): ReturnType<typeof parseFilter> {
    try {
        return parseFilter(text);
    } catch (error) {
        if (error instanceof FilterSyntaxError) throw badRequest(`${error.message}.`);
        throw error;
    }
}

/** The request's JSON body: 400 when missing or not JSON, 415 when not declared as JSON. */
function jsonBody(request: Request): unknown {
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

function idempotencyOf(request: Request, body: unknown): Idempotency | undefined {
    const key = parseIdempotencyKey(request.headers["idempotency-key"]);
    return key === undefined ? undefined : { key, method: request.method, path: request.path, body };
}

function accepted(result: Accepted): Reply {
    return {
        status: 202,
        headers: { Location: result.location },
        body: { taskUri: result.location } satisfies TaskAccepted,
    };
}

function json(status: number, body: unknown): Reply {
    return { status, headers: {}, body };
}

const STATUS_CODES = {
    429: ["rate_limited", "too many requests (injected fault)"],
    500: ["internal_error", "the server failed (injected fault)"],
    502: ["bad_gateway", "the gateway got no valid answer (injected fault)"],
    503: ["service_unavailable", "the service is unavailable (injected fault)"],
    504: ["gateway_timeout", "the gateway timed out (injected fault)"],
} as const;

function faultStatusReply(status: keyof typeof STATUS_CODES, retryAfterSeconds: number | undefined): Reply {
    const [error, sentence] = STATUS_CODES[status];
    const retryAfter = retryAfterSeconds ?? (status === 429 ? 1 : undefined);
    const body: ErrorBody = { error, message: `${sentence}; nothing was done.` };
    return { status, headers: retryAfter === undefined ? {} : { "Retry-After": String(retryAfter) }, body };
}

/** Reads the body, keeping at most MAX_BODY_BYTES; undefined when the connection ended first or sent far too much. */
function readBody(req: IncomingMessage): Promise<{ body: Buffer; bodyTooLarge: boolean } | undefined> {
    return new Promise((resolve) => {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size <= MAX_BODY_BYTES) chunks.push(chunk);
            else if (size > MAX_DRAINED_BYTES) {
                req.destroy();
                resolve(undefined);
            }
        });
        req.on("end", () => resolve({ body: Buffer.concat(chunks), bodyTooLarge: size > MAX_BODY_BYTES }));
        req.on("error", () => resolve(undefined));
        req.on("close", () => {
            if (!req.complete) resolve(undefined);
        });
    });
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

function digest(text: string): Buffer {
    return createHash("sha256").update(text).digest();
}
