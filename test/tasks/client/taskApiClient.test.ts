// Guards the one HTTP client of the task API (provider/tasks/core/taskApiClient.ts) against the real task
// API server: bearer authentication, JSON bodies, Location resolved to an absolute URL, retries of what is
// safe to repeat (GET always, POST only with an Idempotency-Key) after network errors and transient
// statuses, Retry-After honoured and not counted as a failure, maxAttempts, the deadline, the caller's
// abort signal, the per-request timeout, typed errors (TaskApiError, TaskApiUnreachableError,
// MalformedResponseError) and the token never showing in an error. On port 0 with an injected clock and a
// recording sleep that resolves at once: no test waits for real time.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import { seededRandom } from "../../../provider/shared/random";
import type { Fault } from "../../../provider/taskApiServer/control";
import type { TaskApiServer } from "../../../provider/taskApiServer/taskApiServer";
import { backoffBand, DEFAULT_POLL_SCHEDULE } from "../../../provider/tasks/client/pollSchedule";
import { TaskApiClient, type TaskApiClientOptions } from "../../../provider/tasks/client/taskApiClient";
import { CrossOriginError } from "../../../provider/tasks/errors/crossOriginError";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { TaskApiUnreachableError } from "../../../provider/tasks/errors/taskApiUnreachableError";
import {
    ASYNC_OPERATIONS_PATH,
    type ConflictBody,
    DATASTORES_PATH,
    type DatastoreList,
    type TaskAccepted,
} from "../../../provider/tasks/protocol/wire";
import { createBody, FakeTime, heldSleep, REQUEST_TIMEOUT_MS, rejection, Servers, START, TOKEN } from "./support";

const OPERATION_PATH = /^\/data-services\/v1beta1\/async-operations\/[0-9a-f-]{36}$/;

interface SentRequest {
    readonly url: string;
    readonly method: string;
    readonly headers: Headers;
    readonly body: string | undefined;
}

describe("TaskApiClient", () => {
    const servers = new Servers();
    let server: TaskApiServer;
    let time: FakeTime;
    let sent: SentRequest[];

    beforeEach(async () => {
        time = new FakeTime();
        sent = [];
        server = await servers.start();
    });
    afterEach(() => servers.closeAll());

    /** A client of `server` on the fake time, recording what it sends. */
    function clientOf(options: Partial<TaskApiClientOptions> = {}): TaskApiClient {
        const recordingFetch: typeof fetch = (input, init) => {
            sent.push({
                url: String(input),
                method: init?.method ?? "GET",
                headers: new Headers(init?.headers),
                body: typeof init?.body === "string" ? init.body : undefined,
            });
            return fetch(input, init);
        };
        return new TaskApiClient({
            baseUrl: server.url,
            token: TOKEN,
            clock: time.clock,
            sleep: time.sleep,
            timeout: time.timeout,
            random: seededRandom(5),
            requestTimeoutMs: REQUEST_TIMEOUT_MS,
            fetch: recordingFetch,
            ...options,
        });
    }

    function fault(fault: Fault, match: { method?: string; path?: string } = {}, times = 1): void {
        server.addFault({ match, times, fault });
    }

    /** Statuses the server logged for requests outside the test API. */
    function loggedStatuses(): (number | null)[] {
        return server.requests().map((entry) => entry.status);
    }

    function assertApiError(error: unknown, status: number, code: string | undefined): TaskApiError {
        assert.ok(error instanceof TaskApiError, `not a TaskApiError: ${inspect(error)}`);
        assert.equal(error.name, "TaskApiError");
        assert.equal(error.status, status);
        assert.equal(error.code, code);
        return error;
    }

    describe("a successful request", () => {
        it("sends the bearer token and accepts JSON, and resolves with the parsed body", async () => {
            const response = await clientOf().send<DatastoreList>({ method: "GET", path: DATASTORES_PATH });
            const { header, ...rest } = response;
            assert.deepEqual(rest, {
                status: 200,
                body: { items: [], count: 0, offset: 0, total: 0 },
                location: undefined,
            });
            assert.match(header("Content-Type") ?? "", /^application\/json/);
            assert.equal(sent.length, 1);
            const [request] = sent;
            assert.equal(request?.url, `${server.url}${DATASTORES_PATH}`);
            assert.equal(request?.headers.get("authorization"), `Bearer ${TOKEN}`);
            assert.equal(request?.headers.get("accept"), "application/json");
            assert.equal(request?.headers.get("content-type"), null);
            assert.equal(request?.headers.get("idempotency-key"), null);
            assert.equal(request?.body, undefined);
            assert.deepEqual(time.waits, []);
        });

        it("sends a body as JSON with its Idempotency-Key, and hands a 202's Location back as the server sent it", async () => {
            const response = await clientOf().send<TaskAccepted>({
                method: "POST",
                path: DATASTORES_PATH,
                body: createBody(),
                idempotencyKey: "create-ds19-1",
            });
            assert.equal(response.status, 202);
            assert.match(response.location ?? "", OPERATION_PATH);
            assert.equal(response.location, response.body?.taskUri);
            const [request] = sent;
            assert.equal(request?.headers.get("content-type"), "application/json");
            assert.equal(request?.headers.get("idempotency-key"), "create-ds19-1");
            assert.deepEqual(JSON.parse(request?.body ?? ""), createBody());
            assert.equal(server.requests()[0]?.idempotencyKey, "create-ds19-1");
            assert.equal(server.stats().datastoresCreated, 1);
        });

        it("follows an absolute URL it was given (a Location) as it is", async () => {
            const client = clientOf();
            const accepted = await client.send<TaskAccepted>({
                method: "POST",
                path: DATASTORES_PATH,
                body: createBody(),
            });
            const location = `${server.url}${accepted.location}`;
            const polled = await client.send<{ id: string; state: string }>({ method: "GET", path: location });
            assert.equal(polled.status, 200);
            assert.equal(location.endsWith(polled.body?.id ?? "-"), true);
            assert.equal(sent[1]?.url, location);
        });

        it("resolves paths against the base URL, keeps absolute URLs of its origin, refuses others", () => {
            const client = clientOf();
            assert.equal(client.resolve("/a/b?c=d"), `${server.url}/a/b?c=d`);
            assert.equal(client.resolve(`${server.url}/x`), `${server.url}/x`);
            assert.throws(() => client.resolve("http://elsewhere.example:8443/x"), CrossOriginError);
            const nested = new TaskApiClient({ baseUrl: "http://api.example/base/", token: TOKEN });
            assert.equal(nested.resolve("v1/x"), "http://api.example/base/v1/x");
            assert.equal(nested.resolve("/v1/x"), "http://api.example/v1/x");
        });

        it("answers location undefined when a 202 has no Location (the body still names the task)", async () => {
            fault({ omitLocation: true });
            const response = await clientOf().send<TaskAccepted>({
                method: "POST",
                path: DATASTORES_PATH,
                body: createBody(),
            });
            assert.equal(response.status, 202);
            assert.equal(response.location, undefined);
            assert.ok(response.body?.taskUri.startsWith(`${ASYNC_OPERATIONS_PATH}/`));
        });

        it("cancels its request timer once answered", async () => {
            await clientOf().send({ method: "GET", path: DATASTORES_PATH });
            assert.equal(time.timersStarted, 1);
            assert.equal(time.pendingTimerCount, 0);
        });
    });

    describe("authentication", () => {
        it("maps a 401 to TaskApiError with its status and code, without retrying", async () => {
            const client = new TaskApiClient({
                baseUrl: server.url,
                token: "not-the-token",
                clock: time.clock,
                sleep: time.sleep,
                timeout: time.timeout,
                requestTimeoutMs: REQUEST_TIMEOUT_MS,
            });
            const error = assertApiError(
                await rejection(client.send({ method: "GET", path: DATASTORES_PATH })),
                401,
                "unauthorized",
            );
            assert.equal(error.method, "GET");
            assert.equal(error.path, DATASTORES_PATH);
            assert.match(error.apiMessage, /bearer token is not valid/);
            assert.match(
                error.message,
                new RegExp(`^the task API answered GET ${DATASTORES_PATH} with 401 \\(unauthorized\\): `),
            );
            assert.deepEqual(loggedStatuses(), [401]);
            assert.deepEqual(time.waits, []);
        });
    });

    describe("throttling (429, 503 with Retry-After)", () => {
        it("waits at least the Retry-After of a 429, once, then succeeds", async () => {
            fault({ status: 429, retryAfterSeconds: 2 });
            const response = await clientOf().send({ method: "GET", path: DATASTORES_PATH });
            assert.equal(response.status, 200);
            assert.equal(time.waits.length, 1);
            const [wait = 0] = time.waits;
            assert.ok(wait >= 2000 && wait < 2000 + DEFAULT_POLL_SCHEDULE.initialMs, String(wait));
            assert.deepEqual(loggedStatuses(), [429, 200]);
        });

        it("honours the 1 s Retry-After the server sends with every 429 by default", async () => {
            fault({ status: 429 });
            await clientOf().send({ method: "GET", path: DATASTORES_PATH });
            assert.equal(time.waits.length, 1);
            assert.ok((time.waits[0] ?? 0) >= 1000, String(time.waits[0]));
        });

        it("honours the Retry-After of a 503", async () => {
            fault({ status: 503, retryAfterSeconds: 3 });
            await clientOf().send({ method: "GET", path: DATASTORES_PATH });
            assert.equal(time.waits.length, 1);
            assert.ok((time.waits[0] ?? 0) >= 3000, String(time.waits[0]));
        });

        it("does not count throttling against maxAttempts", async () => {
            fault({ status: 429, retryAfterSeconds: 1 }, {}, 4);
            const response = await clientOf({ maxAttempts: 2 }).send({ method: "GET", path: DATASTORES_PATH });
            assert.equal(response.status, 200);
            assert.deepEqual(loggedStatuses(), [429, 429, 429, 429, 200]);
        });

        it("retries a throttled POST even without an Idempotency-Key: a 429 says nothing was done", async () => {
            fault({ status: 429, retryAfterSeconds: 1 }, { method: "POST" });
            const plain = await clientOf().send({ method: "POST", path: DATASTORES_PATH, body: createBody() });
            assert.equal(plain.status, 202);
            assert.deepEqual(loggedStatuses(), [429, 202]);
            assert.ok((time.waits[0] ?? 0) >= 1000, "waited the Retry-After");
            assert.equal(server.datastores().length, 1);
        });

        it("retries a throttled POST with an Idempotency-Key", async () => {
            fault({ status: 429, retryAfterSeconds: 1 }, { method: "POST" });
            const response = await clientOf().send({
                method: "POST",
                path: DATASTORES_PATH,
                body: createBody(),
                idempotencyKey: "k-429",
            });
            assert.equal(response.status, 202);
            assert.deepEqual(loggedStatuses(), [429, 202]);
            assert.equal(server.stats().datastoresCreated, 1);
        });
    });

    describe("transient failures", () => {
        it("retries a 503 without Retry-After with backoff, counting it as a failure", async () => {
            fault({ status: 503 }, {}, 2);
            const response = await clientOf().send({ method: "GET", path: DATASTORES_PATH });
            assert.equal(response.status, 200);
            assert.deepEqual(loggedStatuses(), [503, 503, 200]);
            assert.equal(time.waits.length, 2);
            time.waits.forEach((wait, attempt) => {
                const { low, high } = backoffBand(attempt, DEFAULT_POLL_SCHEDULE);
                assert.ok(wait >= low && wait <= high, `wait ${attempt}: ${wait} not in [${low}, ${high}]`);
            });
        });

        for (const status of [500, 502, 504] as const) {
            it(`retries a GET answered ${status}`, async () => {
                fault({ status });
                const response = await clientOf().send({ method: "GET", path: DATASTORES_PATH });
                assert.equal(response.status, 200);
                assert.deepEqual(loggedStatuses(), [status, 200]);
                assert.equal(time.waits.length, 1);
            });
        }

        it("gives up on a GET answered 500 after maxAttempts, with TaskApiError", async () => {
            fault({ status: 500 }, {}, 10);
            const error = assertApiError(
                await rejection(clientOf({ maxAttempts: 3 }).send({ method: "GET", path: DATASTORES_PATH })),
                500,
                "internal_error",
            );
            assert.match(error.message, /with 500 \(internal_error\): the server failed \(injected fault\)/);
            assert.deepEqual(error.body, {
                error: "internal_error",
                message: "the server failed (injected fault); nothing was done.",
            });
            assert.deepEqual(loggedStatuses(), [500, 500, 500]);
            assert.equal(time.waits.length, 2);
        });

        it("makes 6 attempts by default", async () => {
            fault({ status: 500 }, {}, 10);
            assertApiError(
                await rejection(clientOf().send({ method: "GET", path: DATASTORES_PATH })),
                500,
                "internal_error",
            );
            assert.equal(server.requests().length, 6);
            assert.equal(time.waits.length, 5);
        });

        it("retries a DELETE answered 502", async () => {
            const client = clientOf();
            const created = await client.send<TaskAccepted>({
                method: "POST",
                path: DATASTORES_PATH,
                body: createBody(),
            });
            server.advanceClock(10_000);
            const id = server.datastores()[0]?.id ?? "";
            assert.ok(created.location);
            fault({ status: 502 }, { method: "DELETE" });
            const response = await client.send({ method: "DELETE", path: `${DATASTORES_PATH}/${id}` });
            assert.equal(response.status, 202);
            assert.deepEqual(loggedStatuses(), [202, 502, 202]);
        });

        it("does not retry a POST answered 500 without an Idempotency-Key", async () => {
            fault({ status: 500 }, { method: "POST" });
            assertApiError(
                await rejection(clientOf().send({ method: "POST", path: DATASTORES_PATH, body: createBody() })),
                500,
                "internal_error",
            );
            assert.deepEqual(loggedStatuses(), [500]);
            assert.deepEqual(time.waits, []);
        });

        it("retries a POST answered 500 with an Idempotency-Key", async () => {
            fault({ status: 500 }, { method: "POST" }, 2);
            const response = await clientOf().send({
                method: "POST",
                path: DATASTORES_PATH,
                body: createBody(),
                idempotencyKey: "k-500",
            });
            assert.equal(response.status, 202);
            assert.deepEqual(loggedStatuses(), [500, 500, 202]);
            assert.equal(server.stats().datastoresCreated, 1);
        });

        it("retries a PATCH only with an Idempotency-Key", async () => {
            const client = clientOf();
            await client.send({ method: "POST", path: DATASTORES_PATH, body: createBody() });
            server.advanceClock(10_000);
            const path = `${DATASTORES_PATH}/${server.datastores()[0]?.id}`;
            fault({ status: 503 }, { method: "PATCH" });
            assertApiError(
                await rejection(client.send({ method: "PATCH", path, body: { sizeInBytes: 32 * 1024 ** 3 } })),
                503,
                "service_unavailable",
            );
            fault({ status: 503 }, { method: "PATCH" });
            const response = await client.send({
                method: "PATCH",
                path,
                body: { sizeInBytes: 32 * 1024 ** 3 },
                idempotencyKey: "k-patch",
            });
            assert.equal(response.status, 202);
            assert.deepEqual(loggedStatuses(), [202, 503, 503, 202]);
        });
    });

    describe("network failures", () => {
        it("retries a GET whose connection was dropped", async () => {
            fault({ drop: true });
            const response = await clientOf().send<DatastoreList>({ method: "GET", path: DATASTORES_PATH });
            assert.equal(response.status, 200);
            assert.deepEqual(loggedStatuses(), [null, 200]);
            assert.equal(time.waits.length, 1);
        });

        it("gives up on a GET after maxAttempts dropped connections, with TaskApiUnreachableError", async () => {
            fault({ drop: true }, {}, 10);
            const error = await rejection(clientOf({ maxAttempts: 3 }).send({ method: "GET", path: DATASTORES_PATH }));
            assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
            assert.equal(error.name, "TaskApiUnreachableError");
            assert.equal(error.attempts, 3);
            assert.equal(error.method, "GET");
            assert.equal(error.url, `${server.url}${DATASTORES_PATH}`);
            assert.match(error.message, /after 3 attempts: /);
            assert.match(error.message, /pulumi-lifecycle:taskApiUrl \(or TASK_API_URL\)/);
            assert.deepEqual(loggedStatuses(), [null, null, null]);
            assert.equal(time.waits.length, 2);
        });

        it("does not retry a POST without an Idempotency-Key whose connection was dropped", async () => {
            fault({ drop: true }, { method: "POST" }, 5);
            const error = await rejection(
                clientOf().send({ method: "POST", path: DATASTORES_PATH, body: createBody() }),
            );
            assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
            assert.equal(error.attempts, 1);
            assert.equal(error.method, "POST");
            assert.match(error.message, /after 1 attempt: /);
            assert.equal(server.requests().length, 1);
            assert.deepEqual(time.waits, []);
            assert.equal(server.stats().datastoresCreated, 0);
        });

        it("retries a POST with an Idempotency-Key whose connection was dropped; one datastore is created", async () => {
            fault({ drop: true }, { method: "POST" }, 2);
            const response = await clientOf().send({
                method: "POST",
                path: DATASTORES_PATH,
                body: createBody(),
                idempotencyKey: "k-drop",
            });
            assert.equal(response.status, 202);
            assert.deepEqual(loggedStatuses(), [null, null, 202]);
            assert.equal(server.stats().datastoresCreated, 1);
            assert.equal(server.datastores().length, 1);
        });

        it("retries a POST with an Idempotency-Key whose answer was lost after the work; the server replays it", async () => {
            fault({ loseResponse: true }, { method: "POST" });
            const response = await clientOf().send<TaskAccepted>({
                method: "POST",
                path: DATASTORES_PATH,
                body: createBody(),
                idempotencyKey: "k-lost",
            });
            assert.equal(response.status, 202);
            assert.deepEqual(loggedStatuses(), [null, 202]);
            assert.equal(server.stats().datastoresCreated, 1);
            assert.equal(server.stats().tasksCreated, 1, "the replay answered the first POST's task");
        });

        it("reports a POST without a key whose answer was lost as unreachable, though the work was done", async () => {
            fault({ loseResponse: true }, { method: "POST" });
            const error = await rejection(
                clientOf().send({ method: "POST", path: DATASTORES_PATH, body: createBody() }),
            );
            assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
            assert.equal(error.attempts, 1);
            assert.equal(server.requests().length, 1);
            assert.equal(server.stats().datastoresCreated, 1);
        });

        it("reports a server that is not there as unreachable, naming the cause", async () => {
            const url = server.url;
            await servers.closeAll();
            const error = await rejection(
                new TaskApiClient({
                    baseUrl: url,
                    token: TOKEN,
                    clock: time.clock,
                    sleep: time.sleep,
                    timeout: time.timeout,
                    requestTimeoutMs: REQUEST_TIMEOUT_MS,
                    maxAttempts: 2,
                }).send({
                    method: "GET",
                    path: DATASTORES_PATH,
                }),
            );
            assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
            assert.equal(error.attempts, 2);
            assert.match(error.reason, /ECONNREFUSED/);
        });
    });

    describe("malformed answers", () => {
        it("throws MalformedResponseError for a success whose body is not JSON, without retrying", async () => {
            fault({ invalidJson: true });
            const error = await rejection(clientOf().send({ method: "GET", path: DATASTORES_PATH }));
            assert.ok(error instanceof MalformedResponseError, inspect(error));
            assert.equal(error.name, "MalformedResponseError");
            assert.equal(error.method, "GET");
            assert.equal(error.path, DATASTORES_PATH);
            assert.equal(error.problem, "status 200 with a body that is not JSON");
            assert.deepEqual(loggedStatuses(), [200]);
            assert.deepEqual(time.waits, []);
        });

        it("still maps an error status whose body is not JSON to TaskApiError, with the text as its message", async () => {
            fault({ invalidJson: true });
            const error = assertApiError(
                await rejection(clientOf().send({ method: "GET", path: `${DATASTORES_PATH}/nope` })),
                404,
                undefined,
            );
            assert.equal(error.body, undefined);
            assert.match(error.apiMessage, /^\{"error":"not_found"/);
        });
        it("falls back to the status text for an error answer without a body", async () => {
            const client = clientOf({
                fetch: async () => new Response(null, { status: 404, statusText: "Not Found" }),
            });
            const error = assertApiError(
                await rejection(client.send({ method: "GET", path: `${DATASTORES_PATH}/gone` })),
                404,
                undefined,
            );
            assert.equal(error.apiMessage, "Not Found");
            assert.match(error.message, /with 404: Not Found$/);
        });
    });

    describe("errors that say the request is wrong are not retried", () => {
        it("400 for a body the API refuses", async () => {
            const error = assertApiError(
                await rejection(
                    clientOf().send({
                        method: "POST",
                        path: DATASTORES_PATH,
                        body: createBody("ds 19"),
                        idempotencyKey: "k-400",
                    }),
                ),
                400,
                "bad_request",
            );
            assert.match(error.apiMessage, /name/);
            assert.deepEqual(loggedStatuses(), [400]);
            assert.deepEqual(time.waits, []);
        });

        it("400 for a GET with a query parameter the route does not take", async () => {
            assertApiError(
                await rejection(clientOf().send({ method: "GET", path: `${DATASTORES_PATH}?colour=red` })),
                400,
                "bad_request",
            );
            assert.deepEqual(loggedStatuses(), [400]);
        });

        it("404 for a datastore that does not exist", async () => {
            assertApiError(
                await rejection(clientOf().send({ method: "GET", path: `${DATASTORES_PATH}/missing` })),
                404,
                "not_found",
            );
            assert.deepEqual(loggedStatuses(), [404]);
        });

        it("409 for a datastore that already exists, keeping the body's existingId", async () => {
            const client = clientOf();
            await client.send({ method: "POST", path: DATASTORES_PATH, body: createBody(), idempotencyKey: "k-first" });
            const error = assertApiError(
                await rejection(
                    client.send({
                        method: "POST",
                        path: DATASTORES_PATH,
                        body: createBody(),
                        idempotencyKey: "k-second",
                    }),
                ),
                409,
                "conflict",
            );
            assert.equal((error.body as ConflictBody).existingId, server.datastores()[0]?.id);
            assert.deepEqual(loggedStatuses(), [202, 409]);
            assert.deepEqual(time.waits, []);
        });

        it("422 for an Idempotency-Key reused with another body", async () => {
            const client = clientOf();
            await client.send({
                method: "POST",
                path: DATASTORES_PATH,
                body: createBody("ds1"),
                idempotencyKey: "k-same",
            });
            assertApiError(
                await rejection(
                    client.send({
                        method: "POST",
                        path: DATASTORES_PATH,
                        body: createBody("ds2"),
                        idempotencyKey: "k-same",
                    }),
                ),
                422,
                "idempotency_key_reused",
            );
            assert.deepEqual(loggedStatuses(), [202, 422]);
            assert.deepEqual(time.waits, []);
        });
    });

    describe("the deadline", () => {
        it("stops retries: no wait goes past it and no request starts after it", async () => {
            fault({ status: 500 }, {}, 100);
            const deadline = START + 1000;
            const error = await rejection(
                clientOf({ maxAttempts: 100 }).send({ method: "GET", path: DATASTORES_PATH, deadline }),
            );
            assertApiError(error, 500, "internal_error");
            assert.equal(time.now, deadline);
            const slept = time.waits.reduce((sum, wait) => sum + wait, 0);
            // The clock is at 1.9e12 ms, where a double resolves about 0.0002 ms.
            assert.ok(Math.abs(slept - 1000) < 0.01, String(slept));
            assert.equal(server.requests().length, time.waits.length + 1);
            assert.ok(server.requests().length < 10, String(server.requests().length));
        });

        it("gives up at once when the Retry-After reaches past it", async () => {
            fault({ status: 429, retryAfterSeconds: 5 });
            const error = await rejection(
                clientOf().send({ method: "GET", path: DATASTORES_PATH, deadline: START + 4000 }),
            );
            assertApiError(error, 429, "rate_limited");
            assert.deepEqual(time.waits, []);
            assert.equal(server.requests().length, 1);
        });

        it("gives up at once on a network error once it has passed", async () => {
            fault({ drop: true }, {}, 5);
            const error = await rejection(clientOf().send({ method: "GET", path: DATASTORES_PATH, deadline: START }));
            assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
            assert.equal(error.attempts, 1);
            assert.deepEqual(time.waits, []);
        });

        it("still sends the first request when it has passed", async () => {
            const response = await clientOf().send({ method: "GET", path: DATASTORES_PATH, deadline: START - 1 });
            assert.equal(response.status, 200);
        });
    });

    describe("the abort signal", () => {
        it("stops before any request when already aborted, with the signal's reason", async () => {
            const reason = new Error("interrupted by SIGINT");
            const error = await rejection(
                clientOf().send({ method: "GET", path: DATASTORES_PATH, signal: AbortSignal.abort(reason) }),
            );
            assert.equal(error, reason);
            assert.equal(server.requests().length, 0);
            assert.equal(sent.length, 0);
        });

        it("stops during a retry wait, with the signal's reason, sending nothing more", async () => {
            fault({ status: 503 }, {}, 5);
            const controller = new AbortController();
            const reason = new Error("interrupted by SIGINT");
            time.onWait = () => controller.abort(reason);
            const error = await rejection(
                clientOf().send({ method: "GET", path: DATASTORES_PATH, signal: controller.signal }),
            );
            assert.equal(error, reason);
            assert.equal(time.waits.length, 1);
            assert.deepEqual(loggedStatuses(), [503]);
        });

        it("stops a request in flight, with the signal's reason and without retrying it", async () => {
            const controller = new AbortController();
            const reason = new Error("interrupted by SIGINT");
            await servers.closeAll();
            server = await servers.start({ sleep: heldSleep(() => controller.abort(reason)) });
            fault({ delayMs: 5000 });
            const error = await rejection(
                clientOf().send({ method: "GET", path: DATASTORES_PATH, signal: controller.signal }),
            );
            assert.equal(error, reason);
            assert.equal(time.timersStarted, 1);
            assert.equal(time.pendingTimerCount, 0);
            assert.deepEqual(time.waits, []);
        });
    });

    describe("the per-request timeout", () => {
        /** A server whose `delayMs` answers never come, and which fires the client's request timers when one is held. */
        async function serverThatTimesOut(): Promise<void> {
            await servers.closeAll();
            server = await servers.start({ sleep: heldSleep(() => time.fireTimers()) });
        }

        it("counts an answer that does not come in time as a network failure, and retries a GET", async () => {
            await serverThatTimesOut();
            fault({ delayMs: 60_000 }, { method: "GET" });
            const response = await clientOf().send<DatastoreList>({ method: "GET", path: DATASTORES_PATH });
            assert.equal(response.status, 200);
            assert.equal(time.timersStarted, 2);
            assert.equal(time.waits.length, 1);
            assert.equal(time.pendingTimerCount, 0);
        });

        it("gives up with TaskApiUnreachableError naming the timeout after maxAttempts", async () => {
            await serverThatTimesOut();
            fault({ delayMs: 60_000 }, { method: "GET" }, 5);
            const error = await rejection(clientOf({ maxAttempts: 2 }).send({ method: "GET", path: DATASTORES_PATH }));
            assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
            assert.equal(error.attempts, 2);
            assert.equal(error.reason, `no answer within ${REQUEST_TIMEOUT_MS} ms`);
            assert.equal(time.timersStarted, 2);
        });

        it("does not retry a POST without a key that timed out (the server may have done the work)", async () => {
            await serverThatTimesOut();
            fault({ delayMs: 60_000 }, { method: "POST" });
            const error = await rejection(
                clientOf().send({ method: "POST", path: DATASTORES_PATH, body: createBody() }),
            );
            assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
            assert.equal(error.attempts, 1);
            assert.equal(error.reason, `no answer within ${REQUEST_TIMEOUT_MS} ms`);
            assert.equal(time.timersStarted, 1);
            assert.equal(server.stats().datastoresCreated, 1);
        });

        it("starts one request timer of 30 s by default, cancelled once the answer is read", async () => {
            const started: number[] = [];
            let cancelled = 0;
            const client = new TaskApiClient({
                baseUrl: server.url,
                token: TOKEN,
                timeout: (ms) => {
                    started.push(ms);
                    return () => {
                        cancelled++;
                    };
                },
            });
            await client.send({ method: "GET", path: DATASTORES_PATH });
            assert.deepEqual(started, [30_000]);
            assert.equal(cancelled, 1);
        });
    });

    describe("the token", () => {
        const OTHER_TOKEN = "server-only-token";

        function assertNoToken(error: unknown): void {
            assert.ok(error instanceof Error, inspect(error));
            for (const [what, text] of Object.entries({
                message: error.message,
                stack: error.stack ?? "",
                ...Object.fromEntries(
                    Object.entries(error).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
                ),
            })) {
                assert.ok(!text.includes(TOKEN), `the token is in the error's ${what}: ${text}`);
            }
        }

        it("is never in a TaskApiError, even when the server echoes it (a 404 naming the path)", async () => {
            const error = assertApiError(
                await rejection(clientOf().send({ method: "GET", path: `/${TOKEN}` })),
                404,
                "not_found",
            );
            assertNoToken(error);
            assert.match(error.apiMessage, /there is no route "\/\[redacted\]"/);
            assert.equal(error.path, "/[redacted]");
        });

        it("is never in a TaskApiError built from an answer that is not JSON", async () => {
            // The fault cuts the answer in half; an id of the token four times keeps a whole copy in the half.
            fault({ invalidJson: true });
            const path = `${DATASTORES_PATH}/${TOKEN.repeat(4)}`;
            const error = assertApiError(await rejection(clientOf().send({ method: "GET", path })), 404, undefined);
            assertNoToken(error);
            assert.match(
                error.apiMessage,
                /^\{"error":"not_found","message":"there is no datastore with id \\"\[redacted\]/,
            );
        });

        it("is never in a TaskApiUnreachableError's URL or reason", async () => {
            fault({ drop: true }, {}, 5);
            const error = await rejection(
                clientOf({ maxAttempts: 2 }).send({ method: "GET", path: `${DATASTORES_PATH}/${TOKEN}` }),
            );
            assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
            assertNoToken(error);
            assert.equal(error.url, `${server.url}${DATASTORES_PATH}/[redacted]`);
        });

        it("is never in a MalformedResponseError's path", async () => {
            fault({ invalidJson: true });
            const filter = encodeURIComponent(`name eq '${TOKEN}'`);
            assert.ok(filter.includes(TOKEN));
            const error = await rejection(
                clientOf().send({ method: "GET", path: `${DATASTORES_PATH}?filter=${filter}` }),
            );
            assert.ok(error instanceof MalformedResponseError, inspect(error));
            assertNoToken(error);
        });

        it("is never in the 401 of a server that refuses it", async () => {
            await servers.closeAll();
            server = await servers.start({ token: OTHER_TOKEN });
            const error = assertApiError(
                await rejection(clientOf().send({ method: "GET", path: `/${TOKEN}/x` })),
                401,
                "unauthorized",
            );
            assertNoToken(error);
        });

        it("is nowhere in an error as it is logged (util.inspect), its body included", async () => {
            const errors = [await rejection(clientOf().send({ method: "GET", path: `/${TOKEN}` }))];
            fault({ status: 500 }, {}, 5);
            errors.push(
                await rejection(
                    clientOf({ maxAttempts: 1 }).send({ method: "GET", path: `${DATASTORES_PATH}/${TOKEN}` }),
                ),
            );
            for (const error of errors) {
                assert.ok(error instanceof TaskApiError, inspect(error));
                const logged = inspect(error, { depth: 10 });
                assert.ok(!logged.includes(TOKEN), `the token is in the logged error:\n${logged}`);
            }
        });
    });
});
