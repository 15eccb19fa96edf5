// The one place that talks HTTP to the task API: bearer authentication, a timeout per request, the
// caller's abort signal, and retries of what is safe to repeat (retryPolicy.ts) with the waits of
// pollSchedule.ts, never past the caller's deadline. Answers are parsed strictly and defensively
// (answerBody.ts): invalid JSON and error statuses become typed errors, whose messages never contain
// the token; the request's timer and the caller's abort cover reading the body too. Requests never
// leave the configured API's origin (no redirects are followed, and an absolute URL elsewhere is
// refused); a Location is handed back as the server sent it, for the caller that takes a task from it
// to check (DatastoreApi).

import { formatDuration } from "../../shared/duration";
import { codeOf } from "../../shared/files/errno";
import { type Clock, type Sleep, systemClock, type Timeout, timerSleep, timerTimeout } from "../../shared/time";
import { type ApiSettingNames, TASK_API_SETTINGS } from "../errors/apiSettings";
import { CrossOriginError } from "../errors/crossOriginError";
import { MalformedResponseError } from "../errors/malformedResponseError";
import { TaskApiError } from "../errors/taskApiError";
import { TaskApiUnreachableError } from "../errors/taskApiUnreachableError";
import { parseRetryAfter } from "../protocol/retryAfter";
import { IDEMPOTENCY_KEY_HEADER } from "../protocol/wire";
import { abortion, MAX_RESPONSE_BYTES, mapStrings, type Parsed, parseJson, readBody } from "./answerBody";
import type { RequestSigner } from "./awsSigner";
import { DEFAULT_POLL_SCHEDULE, nextWait, type PollSchedule } from "./pollSchedule";
import { isThrottled, mayHaveActed, mayRetry } from "./retryPolicy";

/** How to reach the API and how patient to be. */
export interface TaskApiClientOptions {
    /** Base URL, e.g. `http://127.0.0.1:8080`. */
    readonly baseUrl: string;
    /** Bearer token; only ever sent in the Authorization header. Empty: no Authorization header. */
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
    /** Signs each request instead of a bearer token (AWS SigV4); the token is then unused. */
    readonly sign?: RequestSigner;
    /**
     * Where the URL and the token are set, which an unreachable API and a 401 or 403 name (default: the
     * task API's `pulumi-lifecycle:taskApiUrl` and `pulumi-lifecycle:taskApiToken`).
     */
    readonly settings?: ApiSettingNames;
}

/** One request. */
export interface TaskApiRequest {
    readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
    /** Path and query, or an absolute URL (a Location the server gave). */
    readonly path: string;
    readonly body?: unknown;
    /** Makes POST and PATCH safe to retry, and lets the server recognise a repeated create. */
    readonly idempotencyKey?: string;
    /** Headers of the API's dialect (`X-Amz-Target`, `Content-Type`); never credentials, which the client adds. */
    readonly headers?: Readonly<Record<string, string>>;
    /**
     * Whether sending it again cannot do the work twice, when the method alone does not say (a PUT, a
     * read that is a POST, a write carrying a token in its body or query). Default: GET and DELETE, or
     * a request with an idempotencyKey.
     */
    readonly repeatable?: boolean;
    /** Hand back error answers (4xx) that are not retried, instead of throwing: a monitor whose HTTP code is its status. */
    readonly acceptErrors?: boolean;
    readonly signal?: AbortSignal | undefined;
    /** Clock time after which no retry is started, and past which no wait reaches. */
    readonly deadline?: number | undefined;
    /** What sets the deadline, for messages: `timeouts.read`. */
    readonly deadlineSetting?: string | undefined;
}

/** An answer with a success status. */
export interface TaskApiResponse<T> {
    readonly status: number;
    readonly body: T | undefined;
    /** The Location header as the server sent it (unresolved, unchecked: only a 202's names a task). */
    readonly location: string | undefined;
    /** Any header of the answer, case-insensitively (`Azure-AsyncOperation`, `Retry-After`). */
    readonly header: (name: string) => string | undefined;
}

/** An answer as read off the wire: `text` is undefined when its body could not be read, `unread` says why. */
interface Answer {
    readonly status: number;
    readonly statusText: string;
    readonly headers: Headers;
    readonly text: string | undefined;
    readonly unread?: string;
}

export { MAX_RESPONSE_BYTES };

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_ATTEMPTS = 6;
/** How much of a server's error text goes into a message. */
const ERROR_TEXT_CHARS = 200;
/** How much of an error body's `message` goes into a message. */
const ERROR_MESSAGE_CHARS = 1000;

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
     * A TaskApiError after a retry says whether an earlier attempt may have been carried out
     * (`earlierOutcomeUnknown`): the last answer speaks for itself only, not for the attempts before it.
     */
    async send<T>(request: TaskApiRequest): Promise<TaskApiResponse<T>> {
        const url = this.resolve(request.path);
        const maxAttempts = this.options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
        let failures = 0;
        // Whether an attempt so far may have been carried out: a later refusal does not undo it.
        let earlierOutcomeUnknown = false;
        for (let attempt = 0; ; attempt++) {
            request.signal?.throwIfAborted();
            let answer: Answer;
            try {
                answer = await this.fetchOnce(url, request);
            } catch (error) {
                if (request.signal?.aborted) throw request.signal.reason;
                failures++;
                const outcome = { networkError: true } as const;
                const retryable = mayRetry(request.method, request.repeatable ?? !!request.idempotencyKey, outcome);
                if (!retryable || failures >= maxAttempts || this.lateBy(request, undefined) !== undefined) {
                    throw new TaskApiUnreachableError(
                        request.method,
                        this.redact(url),
                        failures,
                        this.redact(reasonOf(error)),
                        this.options.settings,
                    );
                }
                earlierOutcomeUnknown ||= mayHaveActed(outcome);
                await this.wait(attempt, undefined, request);
                continue;
            }
            if (answer.status >= 200 && answer.status < 300) return this.parseSuccess<T>(request, answer);
            const retryAfterMs = parseRetryAfter(answer.headers.get("retry-after"), this.clock());
            const throttled = isThrottled(answer.status) && retryAfterMs !== undefined;
            if (!throttled) failures++;
            const outcome = { status: answer.status, retryAfter: retryAfterMs !== undefined };
            const retryable = mayRetry(request.method, request.repeatable ?? !!request.idempotencyKey, outcome);
            if (!retryable && request.acceptErrors && answer.status < 500) return this.errorAnswer<T>(answer);
            if (!retryable || failures >= maxAttempts) throw this.errorOf(request, answer, earlierOutcomeUnknown);
            // A Retry-After that reaches past the deadline: give up now rather than sleep towards it.
            const late = this.lateBy(request, retryAfterMs);
            if (late !== undefined) throw this.errorOf(request, answer, earlierOutcomeUnknown, late);
            earlierOutcomeUnknown ||= mayHaveActed(outcome);
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

    private async fetchOnce(url: string, request: TaskApiRequest): Promise<Answer> {
        // One controller per request, aborted only when the request must stop: by the caller's signal or
        // by its timer. (A composite signal and an abortable sleep per request cost 0.35-0.45 CPU-s more
        // per 200 creates in the benchmark, spent building abort errors for requests that had succeeded.)
        const timeoutMs = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
        const controller = new AbortController();
        const cancelTimer = this.timeout(timeoutMs, () => {
            controller.abort(new Error(`no answer within ${timeoutMs} ms`));
        });
        const forwardAbort = () => controller.abort(request.signal?.reason);
        request.signal?.addEventListener("abort", forwardAbort, { once: true });
        // Every await below is raced against it: fetch's own signal does not always reach the body.
        const stopped = abortion(controller.signal);
        const headers: Record<string, string> = { accept: "application/json" };
        // An API without authentication (a local service) is configured with no token: none is sent.
        if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
        if (request.body !== undefined) headers["content-type"] = "application/json";
        if (request.idempotencyKey) headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()] = request.idempotencyKey;
        for (const [name, value] of Object.entries(request.headers ?? {})) {
            // The dialect's headers never replace the credentials.
            if (name.toLowerCase() !== "authorization") headers[name.toLowerCase()] = value;
        }
        const body = request.body !== undefined ? JSON.stringify(request.body) : undefined;
        try {
            const sent = this.options.sign
                ? await this.options.sign({ method: request.method, url: new URL(url), headers, body })
                : headers;
            const pending = this.fetch(url, {
                method: request.method,
                headers: sent,
                ...(body !== undefined ? { body } : {}),
                signal: controller.signal,
                // A redirect could carry the token, the body and the key elsewhere; the API never redirects.
                redirect: "error",
            });
            let response: Response;
            try {
                response = await Promise.race([pending, stopped.promise]);
            } catch (error) {
                // Stopped first: an answer that still comes is not read.
                pending.then(
                    (late) => late.body?.cancel().catch(() => undefined),
                    () => undefined,
                );
                throw error;
            }
            // Read the body before the timer is cancelled: a server that stalls mid-body times out too.
            const { status, statusText } = response;
            try {
                const text = await readBody(response, stopped.promise);
                const unread = `its body is larger than ${MAX_RESPONSE_BYTES} bytes and was not read`;
                return {
                    status,
                    statusText,
                    headers: response.headers,
                    text,
                    ...(text === undefined ? { unread } : {}),
                };
            } catch (error) {
                if (response.ok) throw error;
                // An error status is an answer even when its body never comes: a 409 cut short by Ctrl-C or
                // the timer is still a 409, never "outcome unknown".
                const reason = reasonOf(controller.signal.aborted ? controller.signal.reason : error);
                return {
                    status,
                    statusText,
                    headers: response.headers,
                    text: undefined,
                    unread: `its body did not arrive: ${reason}`,
                };
            }
        } catch (error) {
            throw controller.signal.aborted ? controller.signal.reason : error;
        } finally {
            cancelTimer();
            stopped.dispose();
            request.signal?.removeEventListener("abort", forwardAbort);
        }
    }

    private parseSuccess<T>(request: TaskApiRequest, answer: Answer): TaskApiResponse<T> {
        const malformed = (problem: string) =>
            new MalformedResponseError(request.method, this.redact(request.path), problem, answer.status);
        if (answer.text === undefined) {
            throw malformed(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes, more than any answer of the API`);
        }
        const parsed = parseJson(answer.text);
        if ("refused" in parsed) throw malformed(`status ${answer.status}, but ${parsed.refused}`);
        if ("notJson" in parsed) throw malformed(`status ${answer.status} with a body that is not JSON`);
        return {
            status: answer.status,
            body: parsed.value as T | undefined,
            location: answer.headers.get("location") ?? undefined,
            header: (name) => answer.headers.get(name) ?? undefined,
        };
    }

    /** An error answer handed back as it is (acceptErrors): a body that is not JSON reads as none. */
    private errorAnswer<T>(answer: Answer): TaskApiResponse<T> {
        const parsed = answer.text === undefined ? undefined : parseJson(answer.text);
        return {
            status: answer.status,
            body: parsed !== undefined && "value" in parsed ? (parsed.value as T) : undefined,
            location: answer.headers.get("location") ?? undefined,
            header: (name) => answer.headers.get(name) ?? undefined,
        };
    }

    /**
     * A TaskApiError for an error answer, whatever its body: never anything else, never a throw.
     * `earlierOutcomeUnknown`: an earlier attempt of the request may have been carried out.
     */
    private errorOf(
        request: TaskApiRequest,
        answer: Answer,
        earlierOutcomeUnknown: boolean,
        advice?: string,
    ): TaskApiError {
        const text = answer.text;
        const parsed: Parsed =
            text === undefined ? { refused: answer.unread ?? "its body was not read" } : parseJson(text);
        const body = "value" in parsed ? parsed.value : undefined;
        const { code: rawCode, message: rawMessage } = errorFields(body);
        const code = rawCode?.slice(0, ERROR_TEXT_CHARS);
        // Redact before cutting: a cut could split the token and leave part of it in clear.
        let message: string;
        if (rawMessage !== undefined) message = this.redact(rawMessage).slice(0, ERROR_MESSAGE_CHARS);
        else if ("refused" in parsed) message = `${answer.statusText || "no message"} (${parsed.refused})`;
        else message = this.redact(text ?? "").slice(0, ERROR_TEXT_CHARS) || answer.statusText;
        return new TaskApiError(
            request.method,
            this.redact(request.path),
            answer.status,
            code === undefined ? undefined : this.redact(code),
            message,
            mapStrings(body, (value) => this.redact(value)),
            advice,
            earlierOutcomeUnknown,
            this.options.settings ?? (this.options.sign ? undefined : TASK_API_SETTINGS),
        );
    }

    /**
     * Undefined while a retry after `waitMs` (a Retry-After) still starts before the request's deadline;
     * otherwise why it would not, and what to do.
     */
    private lateBy(request: TaskApiRequest, waitMs: number | undefined): string | undefined {
        if (request.deadline === undefined) return undefined;
        const now = this.clock();
        if (now + (waitMs ?? 0) < request.deadline) return undefined;
        const setting = request.deadlineSetting ?? "the resource's timeouts";
        const what =
            now < request.deadline && waitMs !== undefined
                ? `The API asked to retry after ${formatDuration(waitMs)}, past the operation's deadline ` +
                  `(${formatDuration(request.deadline - now)} from now)`
                : "The operation's deadline has passed";
        return `${what}: raise ${setting}, or retry later`;
    }

    private async wait(attempt: number, retryAfterMs: number | undefined, request: TaskApiRequest): Promise<void> {
        let ms = nextWait({ attempt, schedule: this.schedule, random: this.random, retryAfterMs });
        if (request.deadline !== undefined) ms = Math.min(ms, Math.max(0, request.deadline - this.clock()));
        await this.sleep(ms, request.signal);
    }

    /** The base URL of the API: where every path is resolved, and the only origin requests go to. */
    get baseUrl(): string {
        return this.options.baseUrl;
    }

    /** Removes the token from text that may echo a request (a URL, a server message). */
    redact(text: string): string {
        return this.options.token.length > 0 ? text.split(this.options.token).join("[redacted]") : text;
    }
}

/**
 * The code and message of an error body, in the shapes APIs use: `{error: "code", message}` (ours),
 * `{error: {code, message}}` (Azure, Google's google.rpc.Status), `{__type, Message}` (AWS JSON).
 */
function errorFields(body: unknown): { code?: string; message?: string } {
    if (typeof body !== "object" || body === null) return {};
    const fields = body as Record<string, unknown>;
    const text = (value: unknown) => (typeof value === "string" ? value : undefined);
    const nested =
        typeof fields.error === "object" && fields.error !== null
            ? (fields.error as Record<string, unknown>)
            : undefined;
    const code = text(fields.error) ?? text(nested?.code) ?? text(nested?.status) ?? text(fields.__type);
    const message = text(fields.message) ?? text(nested?.message) ?? text(fields.Message);
    return { ...(code === undefined ? {} : { code }), ...(message === undefined ? {} : { message }) };
}

/**
 * Why a request got no answer, as fetch reports it: "fetch failed" says nothing, so the cause's code
 * (`ECONNREFUSED`) and message are added, also from inside an AggregateError (one per address tried).
 */
function reasonOf(error: unknown): string {
    if (!(error instanceof Error)) return String(error);
    let cause: unknown = (error as { cause?: unknown }).cause;
    const inner = (cause as { errors?: unknown } | undefined)?.errors;
    if (!codeOf(cause) && Array.isArray(inner) && inner.length > 0) cause = inner[0];
    const code = codeOf(cause);
    const detail =
        cause instanceof Error && cause.message && !cause.message.includes(error.message) ? cause.message : "";
    if (code && detail)
        return detail.includes(code) ? `${error.message}: ${detail}` : `${error.message}: ${detail} (${code})`;
    if (code) return `${error.message} (${code})`;
    return detail ? `${error.message}: ${detail}` : error.message;
}
