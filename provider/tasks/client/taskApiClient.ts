// The one place that talks HTTP to the task API: bearer authentication, a timeout per request, the
// caller's abort signal, and retries of what is safe to repeat (retryPolicy.ts) with the waits of
// pollSchedule.ts. Answers are parsed strictly: invalid JSON and error statuses become typed errors,
// whose messages never contain the token. Requests never leave the configured API's origin (no
// redirects are followed, and a Location elsewhere is refused), and no answer is read past
// MAX_RESPONSE_BYTES.

import { codeOf } from "../../shared/files/errno";
import { type Clock, type Sleep, systemClock, type Timeout, timerSleep, timerTimeout } from "../../shared/time";
import { CrossOriginError } from "../errors/crossOriginError";
import { MalformedResponseError } from "../errors/malformedResponseError";
import { TaskApiError } from "../errors/taskApiError";
import { TaskApiUnreachableError } from "../errors/taskApiUnreachableError";
import { IDEMPOTENCY_KEY_HEADER } from "../protocol/wire";
import { DEFAULT_POLL_SCHEDULE, nextWait, type PollSchedule, parseRetryAfter } from "./pollSchedule";
import { isThrottled, mayRetry } from "./retryPolicy";

/** How to reach the API and how patient to be. */
export interface TaskApiClientOptions {
    /** Base URL, e.g. `http://127.0.0.1:8080`. */
    readonly baseUrl: string;
    /** Bearer token; only ever sent in the Authorization header. */
    readonly token: string;
    readonly clock?: Clock;
    /** Waits between retries. */
    readonly sleep?: Sleep;
    /** Each request's timer (`requestTimeoutMs`). */
    readonly timeout?: Timeout;
    readonly random?: () => number;
    /** Waits between retries of one request (Retry-After wins when the server sends one). */
    readonly schedule?: PollSchedule;
    /** Longest wait for one answer before the request counts as failed (default 30 s). */
    readonly requestTimeoutMs?: number;
    /** Attempts for transient failures (network, 5xx, 408); throttling (429, 503 with Retry-After) does not count. */
    readonly maxAttempts?: number;
    readonly fetch?: typeof fetch;
}

/** One request. */
export interface TaskApiRequest {
    readonly method: "GET" | "POST" | "PATCH" | "DELETE";
    /** Path and query, or an absolute URL (a Location the server gave). */
    readonly path: string;
    readonly body?: unknown;
    /** Makes POST and PATCH safe to retry, and lets the server recognise a repeated create. */
    readonly idempotencyKey?: string;
    readonly signal?: AbortSignal | undefined;
    /** Clock time after which no retry is started. */
    readonly deadline?: number | undefined;
}

/** An answer with a success status. */
export interface TaskApiResponse<T> {
    readonly status: number;
    readonly body: T | undefined;
    /** The Location header, resolved against the base URL. */
    readonly location: string | undefined;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_ATTEMPTS = 6;
/** The largest answer read (the API's answers are a few KB; a list of thousands of datastores fits). */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** How much of a server's error text goes into a message. */
const ERROR_TEXT_CHARS = 200;

/** A client for one task API. */
export class TaskApiClient {
    private readonly clock: Clock;
    private readonly sleep: Sleep;
    private readonly timeout: Timeout;
    private readonly random: () => number;
    private readonly schedule: PollSchedule;
    private readonly fetch: typeof fetch;

    constructor(private readonly options: TaskApiClientOptions) {
        this.clock = options.clock ?? systemClock;
        this.sleep = options.sleep ?? timerSleep;
        this.timeout = options.timeout ?? timerTimeout;
        this.random = options.random ?? Math.random;
        this.schedule = options.schedule ?? DEFAULT_POLL_SCHEDULE;
        this.fetch = options.fetch ?? fetch;
    }

    /**
     * Sends a request, retrying transient failures when that is safe, and resolves with a success
     * answer. Throws TaskApiError for an error status, MalformedResponseError for an answer that is not
     * JSON, TaskApiUnreachableError when the network keeps failing, and the signal's reason when aborted.
     */
    async send<T>(request: TaskApiRequest): Promise<TaskApiResponse<T>> {
        const url = this.resolve(request.path);
        const maxAttempts = this.options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
        let failures = 0;
        for (let attempt = 0; ; attempt++) {
            request.signal?.throwIfAborted();
            let response: Response;
            try {
                response = await this.fetchOnce(url, request);
            } catch (error) {
                if (request.signal?.aborted) throw request.signal.reason;
                if (error instanceof MalformedResponseError) throw error;
                failures++;
                const outcome = { networkError: true } as const;
                const retryable = mayRetry(request.method, !!request.idempotencyKey, outcome);
                if (!retryable || failures >= maxAttempts || !this.hasTime(request, undefined)) {
                    throw new TaskApiUnreachableError(
                        request.method,
                        this.redact(url),
                        failures,
                        this.redact(reasonOf(error)),
                    );
                }
                await this.wait(attempt, undefined, request);
                continue;
            }
            if (response.ok) return await this.parseSuccess<T>(request, response);
            const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), this.clock());
            const throttled = isThrottled(response.status) && retryAfterMs !== undefined;
            if (!throttled) failures++;
            const outcome = { status: response.status, retryAfter: retryAfterMs !== undefined };
            const retryable = mayRetry(request.method, !!request.idempotencyKey, outcome);
            if (!retryable || failures >= maxAttempts || !this.hasTime(request, retryAfterMs)) {
                throw await this.errorOf(request, response);
            }
            await response.body?.cancel();
            await this.wait(attempt, retryAfterMs, request);
        }
    }

    /** Turns a path or absolute URL into an absolute URL on this API; refuses one on another origin. */
    resolve(path: string): string {
        const url = new URL(path, this.options.baseUrl);
        const origin = new URL(this.options.baseUrl).origin;
        if (url.origin !== origin) throw new CrossOriginError(this.redact(url.toString()), origin);
        return url.toString();
    }

    private async fetchOnce(url: string, request: TaskApiRequest): Promise<Response> {
        // One controller per request, aborted only when the request must stop: by the caller's signal or
        // by its timer. (A composite signal and an abortable sleep per request cost 0.35-0.45 CPU-s more
        // per 200 creates in the benchmark, spent building abort errors for requests that had succeeded.)
        const timeoutMs = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
        const controller = new AbortController();
        let timedOut: Error | undefined;
        const cancelTimer = this.timeout(timeoutMs, () => {
            timedOut = new Error(`no answer within ${timeoutMs} ms`);
            controller.abort(timedOut);
        });
        const forwardAbort = () => controller.abort(request.signal?.reason);
        request.signal?.addEventListener("abort", forwardAbort, { once: true });
        const signal = controller.signal;
        const headers: Record<string, string> = {
            authorization: `Bearer ${this.options.token}`,
            accept: "application/json",
        };
        if (request.body !== undefined) headers["content-type"] = "application/json";
        if (request.idempotencyKey) headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()] = request.idempotencyKey;
        try {
            const response = await this.fetch(url, {
                method: request.method,
                headers,
                ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
                signal,
                // A redirect could carry the token, the body and the key elsewhere; the API never redirects.
                redirect: "error",
            });
            // Read the body before the timer is cancelled: a server that stalls mid-body times out too.
            const text = await readCapped(
                response,
                () =>
                    new MalformedResponseError(
                        request.method,
                        this.redact(request.path),
                        `the answer is larger than ${MAX_RESPONSE_BYTES} bytes, more than any answer of the API`,
                    ),
            );
            return new Response(text.length > 0 ? text : null, {
                status: response.status,
                statusText: response.statusText,
                headers: response.headers,
            });
        } catch (error) {
            throw timedOut && signal.reason === timedOut ? timedOut : error;
        } finally {
            cancelTimer();
            request.signal?.removeEventListener("abort", forwardAbort);
        }
    }

    private async parseSuccess<T>(request: TaskApiRequest, response: Response): Promise<TaskApiResponse<T>> {
        const text = await response.text();
        let body: T | undefined;
        if (text.length > 0) {
            try {
                body = JSON.parse(text) as T;
            } catch {
                throw new MalformedResponseError(
                    request.method,
                    this.redact(request.path),
                    `status ${response.status} with a body that is not JSON`,
                );
            }
        }
        const location = response.headers.get("location");
        return { status: response.status, body, location: location ? this.resolve(location) : undefined };
    }

    private async errorOf(request: TaskApiRequest, response: Response): Promise<Error> {
        const text = await response.text();
        let body: unknown;
        try {
            body = text.length > 0 ? JSON.parse(text) : undefined;
        } catch {
            body = undefined;
        }
        const parsed = body as { error?: unknown; message?: unknown } | undefined;
        const code = typeof parsed?.error === "string" ? parsed.error : undefined;
        // Redact before cutting: a cut could split the token and leave part of it in clear.
        const message =
            typeof parsed?.message === "string"
                ? this.redact(parsed.message)
                : this.redact(text).slice(0, ERROR_TEXT_CHARS) || response.statusText;
        return new TaskApiError(
            request.method,
            this.redact(request.path),
            response.status,
            code,
            message,
            this.redactAll(body),
        );
    }

    /** A parsed body with the token removed from every string in it (errors are logged whole). */
    private redactAll(value: unknown): unknown {
        if (typeof value === "string") return this.redact(value);
        if (Array.isArray(value)) return value.map((item) => this.redactAll(item));
        if (typeof value === "object" && value !== null) {
            return Object.fromEntries(
                Object.entries(value).map(([key, item]) => [this.redact(key), this.redactAll(item)]),
            );
        }
        return value;
    }

    private hasTime(request: TaskApiRequest, waitMs: number | undefined): boolean {
        return request.deadline === undefined || this.clock() + (waitMs ?? 0) < request.deadline;
    }

    private async wait(attempt: number, retryAfterMs: number | undefined, request: TaskApiRequest): Promise<void> {
        let ms = nextWait({ attempt, schedule: this.schedule, random: this.random, retryAfterMs });
        if (request.deadline !== undefined) ms = Math.min(ms, Math.max(0, request.deadline - this.clock()));
        await this.sleep(ms, request.signal);
    }

    /** Removes the token from text that may echo a request (a URL, a server message). */
    private redact(text: string): string {
        return this.options.token.length > 0 ? text.split(this.options.token).join("[redacted]") : text;
    }
}

/** The body as text, failing with `tooLarge()` as soon as it passes MAX_RESPONSE_BYTES (declared or read). */
async function readCapped(response: Response, tooLarge: () => Error): Promise<string> {
    const declared = Number(response.headers.get("content-length") ?? 0);
    if (declared > MAX_RESPONSE_BYTES) {
        await response.body?.cancel();
        throw tooLarge();
    }
    const reader = response.body?.getReader();
    if (!reader) return "";
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > MAX_RESPONSE_BYTES) {
            await reader.cancel();
            throw tooLarge();
        }
        chunks.push(value);
    }
    return Buffer.concat(chunks).toString("utf8");
}

function reasonOf(error: unknown): string {
    if (!(error instanceof Error)) return String(error);
    const code = codeOf((error as { cause?: unknown }).cause);
    return code ? `${error.message} (${code})` : error.message;
}
