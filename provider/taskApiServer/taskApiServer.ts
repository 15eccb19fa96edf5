// A GreenLake-style datastore API over node:http, for testing and demonstrating clients of async task
// APIs: creating, resizing and deleting a datastore answer 202 with the Location of a task to poll.
//
// A request goes through: body read (1 MB at most) -> bearer token -> test control API, or: size limit ->
// rate limit -> route -> injected fault -> handler -> data file flushed -> latency and delays -> answer.
// Whatever a handler changed is on disk before the answer leaves, so a client never hears of work a crash
// could lose. Nothing a client sends can crash the server: every failure becomes a JSON error.
//
// Tasks advance on an injectable clock (moved forward by `advanceClock`), or by polls, so tests need no
// sleeping. Beside it: the options and the server's interface (serverOptions.ts), requests and replies as
// plain values (routes.ts), the answers of the datastore routes (datastoreRoutes.ts) and of the test control
// API (controlApi.ts), the body reader (readBody.ts), the data file (taskApiStore.ts) and the model behind
// it (datastoreModel.ts).

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { seededRandom } from "../shared/random";
import { messageOf } from "../shared/text";
import { type Clock, type Sleep, systemClock, timerSleep } from "../shared/time";
import { type AsyncOperation, type DatastoreRecord, type ErrorBody, MAX_BODY_BYTES } from "../tasks/protocol/wire";
import { ApiError } from "./apiError";
import type { FaultRule, FaultRuleRequest, RequestLogEntry, TaskApiStats } from "./control";
import { answerControlRequest } from "./controlApi";
import { DatastoreModel } from "./datastoreModel";
import { answerDatastoreRequest, type DatastoreRoutes } from "./datastoreRoutes";
import { FaultRules, fullBucket, parseFaultRuleRequest, type RateLimit, type TokenBucket, takeToken } from "./faults";
import { readBody } from "./readBody";
import {
    faultStatusReply,
    isControlPath,
    json,
    noRoute,
    type Outcome,
    parseTarget,
    type Reply,
    type Request,
    resolveRoute,
    toWire,
} from "./routes";
import { checkOptions, DEFAULT_TASK_DURATION_MS, type TaskApiServer, type TaskApiServerOptions } from "./serverOptions";
import { TaskApiStore } from "./taskApiStore";

export { DEFAULT_TASK_DURATION_MS, type TaskApiServer, type TaskApiServerOptions } from "./serverOptions";

/** The request log keeps this many entries, so a long-running server does not grow without bound. */
const MAX_LOGGED_REQUESTS = 10_000;
/** How long `close()` lets requests in flight finish before cutting their connections. */
const CLOSE_GRACE_MS = 2000;

/** Starts a server and resolves once it listens. Rejects when the port is taken or the data file unreadable. */
export async function startTaskApiServer(options: TaskApiServerOptions = {}): Promise<TaskApiServer> {
    checkOptions(options);
    const store = await TaskApiStore.open(options.dataFile);
    const server = new TaskApiHttpServer(options, store);
    await server.listen(options.port ?? 0, options.host ?? "127.0.0.1");
    return server;
}

class TaskApiHttpServer implements TaskApiServer {
    readonly token: string;
    readonly authorization: string;
    url = "";
    port = 0;

    private readonly http: Server;
    private readonly model: DatastoreModel;
    private readonly datastoreRoutes: DatastoreRoutes;
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
        this.datastoreRoutes = { model: this.model, now: () => this.now(), listLagMs: options.listLagMs ?? 0 };
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
            const reply = await answerControlRequest(request, this, () => this.model.advance()).catch(
                (error: unknown) => this.errorReply(error),
            );
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
            reply = answerDatastoreRequest(this.datastoreRoutes, route, request, shape);
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
        const wire = toWire(reply, fault, this.closing.signal.aborted);
        res.writeHead(wire.status, wire.headers);
        res.end(wire.text);
        return wire.status;
    }
}

function digest(text: string): Buffer {
    return createHash("sha256").update(text).digest();
}
