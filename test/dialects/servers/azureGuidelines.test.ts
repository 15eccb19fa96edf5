// Checks the local Azure REST guidelines service (azureGuidelines.ts) against the guidelines it was
// written from, over real HTTP with plain fetch (no client of ours): api-version on every request, PUT
// 201/200 synchronous or with Operation-Id and Operation-Location, the status monitor (NotStarted/Running/
// Succeeded/Failed/Canceled, Retry-After on every non-terminal answer, result only for an action),
// DELETE 202 then 204, the :rotate action with Repeatability-Request-ID / Repeatability-First-Sent,
// Operation-Id reuse, the create/replace processing rules, late results, credentials, and the kit's faults
// as this dialect renders them. Operations advance per poll and the repeatability window runs on an
// injected clock: no test waits for time to pass.

import { strict as assert } from "node:assert";
import {
    type AzureGuidelinesServer,
    type AzureGuidelinesServerOptions,
    GUIDELINES_API_VERSIONS,
    startAzureGuidelinesServer,
} from "./azureGuidelines";
import { fixedOperations, scriptedFaults, scriptedOperations } from "./kit";

const VERSION = "2024-01-01";
const START = Date.parse("2030-01-01T00:00:00.000Z");
const BODY = { size: 3, color: "blue", tags: { team: "a" } };

interface Reply {
    readonly status: number;
    readonly headers: Headers;
    readonly text: string;
    // biome-ignore lint/suspicious/noExplicitAny: tests read the JSON of many shapes
    readonly json: any;
}

interface CallOptions {
    readonly body?: unknown;
    readonly raw?: string;
    readonly auth?: string | null;
    readonly headers?: Record<string, string>;
}

describe("Azure REST guidelines dialect server", () => {
    let server: AzureGuidelinesServer;
    let now: number;

    async function start(options: AzureGuidelinesServerOptions = {}): Promise<AzureGuidelinesServer> {
        await server?.close();
        server = await startAzureGuidelinesServer({ clock: () => now, ...options });
        return server;
    }

    /** One request; `target` is a path on the server or an absolute URL it handed out. */
    async function call(method: string, target: string, options: CallOptions = {}): Promise<Reply> {
        const headers: Record<string, string> = { ...options.headers };
        const auth = options.auth === undefined ? "Bearer test-token" : options.auth;
        if (auth !== null) headers.Authorization = auth;
        if (options.body !== undefined || options.raw !== undefined) headers["Content-Type"] ??= "application/json";
        const response = await fetch(target.startsWith("http") ? target : `${server.url}${target}`, {
            method,
            headers,
            body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
        });
        const text = await response.text();
        let json: unknown;
        try {
            json = JSON.parse(text);
        } catch {
            json = undefined;
        }
        return { status: response.status, headers: response.headers, text, json };
    }

    const widget = (name: string, version: string | null = VERSION): string =>
        `/widgets/${encodeURIComponent(name)}${version === null ? "" : `?api-version=${version}`}`;
    const rotate = (name: string): string => `/widgets/${encodeURIComponent(name)}:rotate?api-version=${VERSION}`;

    /** The two repeatability headers, first sent `ago` ms before now. */
    const repeatable = (id: string, ago = 0): Record<string, string> => ({
        "Repeatability-Request-ID": id,
        "Repeatability-First-Sent": new Date(now - ago).toUTCString(),
    });

    function assertError(reply: Reply, status: number, code: string): void {
        assert.equal(reply.status, status, reply.text);
        assert.equal(reply.json?.error?.code, code, reply.text);
        assert.equal(reply.headers.get("x-ms-error-code"), code, "x-ms-error-code equals error.code");
        assert.equal(typeof reply.json.error.message, "string");
        assert.ok(reply.json.error.message.length > 0);
    }

    /** A widget created synchronously (the first create of the plan finishes in its answer). */
    async function existing(name = "w1", body: unknown = BODY): Promise<Reply> {
        server.setOperations(scriptedOperations({ kind: "create", pollsToFinish: 0 }));
        const reply = await call("PUT", widget(name), { body });
        assert.equal(reply.status, 201, reply.text);
        return reply;
    }

    /** Polls a monitor until it is terminal; the answers, in order. */
    async function pollToEnd(location: string): Promise<Reply[]> {
        const answers: Reply[] = [];
        for (let poll = 0; poll < 20; poll++) {
            const reply = await call("GET", location);
            assert.equal(reply.status, 200, reply.text);
            answers.push(reply);
            if (!["NotStarted", "Running"].includes(reply.json.status)) return answers;
        }
        assert.fail(`${location} never ended`);
    }

    beforeEach(async () => {
        now = START;
        await start();
    });
    afterEach(async () => {
        assert.equal(server.stats().handlerFailures, 0, "a handler threw");
        await server.close();
    });

    describe("api-version", () => {
        it("is required on every request, status monitors included: 400 MissingApiVersionParameter with the guidelines' message", async () => {
            const put = await call("PUT", widget("w1", null), { body: BODY });
            assertError(put, 400, "MissingApiVersionParameter");
            assert.equal(
                put.json.error.message,
                "The api-version query parameter (?api-version=) is required for all requests",
            );
            assertError(await call("GET", "/widgets"), 400, "MissingApiVersionParameter");
            assert.equal(server.counts().creates, 0);
            const location = (await call("PUT", widget("w1"), { body: BODY })).headers.get("operation-location") ?? "";
            const bare = new URL(location);
            bare.searchParams.delete("api-version");
            assertError(await call("GET", bare.href), 400, "MissingApiVersionParameter");
        });

        it("refuses a version it does not support (400 UnsupportedApiVersionValue naming the supported ones) and takes any supported one, on the monitor too", async () => {
            const reply = await call("PUT", widget("w1", "2020-01-01"), { body: BODY });
            assertError(reply, 400, "UnsupportedApiVersionValue");
            assert.equal(
                reply.json.error.message,
                `Unsupported api-version '2020-01-01'. The supported api-versions are '${GUIDELINES_API_VERSIONS.join(", ")}'.`,
            );
            const location = new URL(
                (await call("PUT", widget("w1"), { body: BODY })).headers.get("operation-location") ?? "",
            );
            location.searchParams.set("api-version", "2024-06-01-preview");
            assert.equal((await call("GET", location.href)).status, 200);
        });
    });

    describe("PUT", () => {
        it("synchronous: 201 with the widget and no monitor; the same name again is a replace (200), never a second widget", async () => {
            const created = await existing("w1");
            assert.deepEqual(created.json, { name: "w1", size: 3, color: "blue", tags: { team: "a" }, keyVersion: 1 });
            assert.equal(created.headers.get("operation-location"), null);
            assert.equal(created.headers.get("operation-id"), null);
            assert.ok(created.headers.get("x-ms-request-id"));
            server.setOperations(fixedOperations({ pollsToFinish: 0 }));
            const replaced = await call("PUT", widget("w1"), { body: { size: 4 } });
            assert.equal(replaced.status, 200);
            assert.deepEqual(
                replaced.json,
                { name: "w1", size: 4, tags: {}, keyVersion: 1 },
                "a PUT replaces the whole widget",
            );
            assert.deepEqual(
                { ...server.counts(), requests: 0 },
                {
                    creates: 1,
                    duplicates: 0,
                    live: 1,
                    requests: 0,
                    faultsInjected: 0,
                    requestsOutsideApi: 0,
                    unauthorized: 0,
                },
            );
        });

        it("with additional processing: 201 with the widget, Operation-Id and an absolute Operation-Location carrying the api-version; the monitor says Running with Retry-After, then Succeeded without it and without result", async () => {
            server.setOperations(fixedOperations({ pollsToFinish: 2 }));
            const created = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(created.status, 201);
            assert.equal(created.json.size, 3);
            const id = created.headers.get("operation-id") ?? "";
            assert.match(id, /^[0-9a-f-]{36}$/);
            const location = new URL(created.headers.get("operation-location") ?? "");
            assert.equal(location.origin, server.url);
            assert.equal(location.pathname, `/operations/${id}`);
            assert.equal(location.searchParams.get("api-version"), VERSION);
            assert.equal((await call("GET", widget("w1"))).status, 200, "the widget is readable while it is processed");

            const [running, done] = await pollToEnd(location.href);
            assert.deepEqual(running?.json, { id, status: "Running" });
            assert.equal(running?.headers.get("retry-after"), "5");
            assert.deepEqual(done?.json, { id, status: "Succeeded" });
            assert.equal(done?.headers.get("retry-after"), null);
        });

        it("uses the client's Operation-Id; the same request with it again gets the first answer; another request with it is 400", async () => {
            const first = await call("PUT", widget("w1"), { body: BODY, headers: { "Operation-Id": "op-1" } });
            assert.equal(first.status, 201);
            assert.equal(first.headers.get("operation-id"), "op-1");
            assert.equal(new URL(first.headers.get("operation-location") ?? "").pathname, "/operations/op-1");
            const again = await call("PUT", widget("w1"), { body: BODY, headers: { "Operation-Id": "op-1" } });
            assert.equal(again.status, 201, "the retry gets the first answer");
            assert.deepEqual(again.json, first.json);
            assert.equal(again.headers.get("operation-location"), first.headers.get("operation-location"));
            const other = await call("PUT", widget("w1"), { body: { size: 9 }, headers: { "Operation-Id": "op-1" } });
            assertError(other, 400, "OperationIdInUse");
            assertError(
                await call("PUT", widget("w2"), { body: BODY, headers: { "Operation-Id": "not valid!" } }),
                400,
                "InvalidOperationId",
            );
            assert.equal(server.operations().length, 1);
            assert.equal(server.counts().creates, 1);
        });

        it("follows the processing rules: unknown field, read-only field, missing or wrong mandatory field, not an object: 400; not JSON: 415", async () => {
            assertError(
                await call("PUT", widget("w1"), { body: { ...BODY, shape: "round" } }),
                400,
                "InvalidRequestContent",
            );
            assertError(
                await call("PUT", widget("w1"), { body: { ...BODY, name: "w1" } }),
                400,
                "InvalidRequestContent",
            );
            assertError(
                await call("PUT", widget("w1"), { body: { ...BODY, keyVersion: 1 } }),
                400,
                "InvalidRequestContent",
            );
            assertError(await call("PUT", widget("w1"), { body: { color: "red" } }), 400, "InvalidRequestContent");
            assertError(await call("PUT", widget("w1"), { body: { size: "3" } }), 400, "InvalidRequestContent");
            assertError(
                await call("PUT", widget("w1"), { body: { size: 3, tags: { a: 1 } } }),
                400,
                "InvalidRequestContent",
            );
            assertError(await call("PUT", widget("w1"), { body: [BODY] }), 400, "InvalidRequestContent");
            assertError(await call("PUT", widget("w1"), { raw: "{" }), 400, "InvalidRequestContent");
            assertError(
                await call("PUT", widget("w1"), { raw: "size=3", headers: { "Content-Type": "text/plain" } }),
                415,
                "UnsupportedMediaType",
            );
            assert.equal(
                (await call("PUT", widget("a:b"), { body: BODY })).status,
                404,
                "':' is not allowed in a name",
            );
            assert.deepEqual([server.counts().creates, server.operations().length], [0, 0]);
        });

        it("refuses another write while the create runs (409 AnotherOperationInProgress) and joins the same PUT again", async () => {
            const first = await call("PUT", widget("w1"), { body: BODY });
            assertError(await call("PUT", widget("w1"), { body: { size: 9 } }), 409, "AnotherOperationInProgress");
            assertError(await call("DELETE", widget("w1")), 409, "AnotherOperationInProgress");
            assertError(await call("POST", rotate("w1")), 409, "AnotherOperationInProgress");
            const retry = await call("PUT", widget("w1"), { body: { tags: { team: "a" }, color: "blue", size: 3 } });
            assert.equal(retry.status, 200, "the widget exists now: a PUT to it is a replace");
            assert.equal(retry.headers.get("operation-id"), first.headers.get("operation-id"));
            assert.deepEqual(
                [server.operations().length, server.counts().creates, server.counts().duplicates],
                [1, 1, 0],
            );
        });
    });

    describe("DELETE", () => {
        it("answers 202 with Operation-Location and the monitor { id, status: NotStarted } with Retry-After; the widget stays visible until the delete succeeds, then 404 and 204, and its name is free", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 2 }));
            const deleted = await call("DELETE", widget("w1"));
            assert.equal(deleted.status, 202);
            const location = deleted.headers.get("operation-location") ?? "";
            const id = new URL(location).pathname.split("/").pop();
            assert.deepEqual(deleted.json, { id, status: "NotStarted" });
            assert.equal(deleted.headers.get("retry-after"), "5");
            const again = await call("DELETE", widget("w1"));
            assert.equal(again.status, 202, "a DELETE while the delete runs gets the same monitor");
            assert.equal(again.headers.get("operation-location"), location);
            assert.equal((await call("GET", widget("w1"))).status, 200);
            const answers = await pollToEnd(location);
            assert.deepEqual(
                answers.map((reply) => reply.json.status),
                ["Running", "Succeeded"],
            );
            assertError(await call("GET", widget("w1")), 404, "NotFound");
            assert.equal((await call("DELETE", widget("w1"))).status, 204, "204 even for a widget that does not exist");
            server.setOperations(fixedOperations({ pollsToFinish: 0 }));
            assert.equal((await call("PUT", widget("w1"), { body: BODY })).status, 201);
            assert.deepEqual([server.counts().creates, server.counts().live], [2, 1]);
        });

        it("answers 204 when it finishes synchronously", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 0 }));
            assert.equal((await call("DELETE", widget("w1"))).status, 204);
            assert.equal(server.counts().live, 0);
        });
    });

    describe("the :rotate action", () => {
        it("answers 202 with the monitor and Operation-Location; the monitor's result is there only once it succeeded", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 2 }));
            const started = await call("POST", rotate("w1"), { body: { reason: "scheduled" } });
            assert.equal(started.status, 202, started.text);
            assert.equal(started.json.status, "NotStarted");
            assert.equal(started.headers.get("retry-after"), "5");
            const [running, done] = await pollToEnd(started.headers.get("operation-location") ?? "");
            assert.equal(running?.json.result, undefined);
            assert.deepEqual(done?.json, { id: started.json.id, status: "Succeeded", result: { keyVersion: 2 } });
            assert.equal((await call("GET", widget("w1"))).json.keyVersion, 2);
        });

        it("answers 200 with the result when it finishes synchronously, 404 for a widget that does not exist, 400 for an unknown field", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 0 }));
            const reply = await call("POST", rotate("w1"));
            assert.equal(reply.status, 200);
            assert.deepEqual(reply.json, { keyVersion: 2 });
            assertError(await call("POST", rotate("nope")), 404, "NotFound");
            assertError(await call("POST", rotate("w1"), { body: { force: true } }), 400, "InvalidRequestContent");
            assert.equal((await call("POST", `/widgets/w1:explode?api-version=${VERSION}`)).status, 404);
        });
    });

    describe("repeatability", () => {
        it("answers a repeat of the same request with the first answer and Repeatability-Result accepted: one rotation, not two", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 1 }));
            const headers = repeatable("3f2b8c1e-0000-4000-8000-000000000001");
            const first = await call("POST", rotate("w1"), { body: { reason: "r" }, headers });
            assert.equal(first.status, 202);
            assert.equal(first.headers.get("repeatability-result"), "accepted");
            now += 4 * 60_000; // still inside the 5 minutes tracked
            const repeat = await call("POST", rotate("w1"), { body: { reason: "r" }, headers });
            assert.equal(repeat.status, 202);
            assert.equal(repeat.headers.get("repeatability-result"), "accepted");
            assert.deepEqual(repeat.json, first.json);
            assert.equal(repeat.headers.get("operation-location"), first.headers.get("operation-location"));
            const [done] = await pollToEnd(first.headers.get("operation-location") ?? "");
            assert.deepEqual(done?.json.result, { keyVersion: 2 });
            assert.equal(server.operations().filter((op) => op.kind === "action").length, 1);
            assert.equal((await call("GET", widget("w1"))).json.keyVersion, 2);
        });

        it("rejects a reused id on another request or another First-Sent (400), a First-Sent outside the window (412), headers that are not valid or alone (400)", async () => {
            await existing("w1");
            const id = "3f2b8c1e-0000-4000-8000-000000000002";
            assert.equal((await call("POST", rotate("w1"), { headers: repeatable(id) })).status, 202);
            const otherBody = await call("POST", rotate("w1"), { body: { reason: "x" }, headers: repeatable(id) });
            assertError(otherBody, 400, "RepeatabilityRequestIdReused");
            assert.equal(otherBody.headers.get("repeatability-result"), "rejected");
            assertError(
                await call("POST", rotate("w1"), { headers: repeatable(id, 1000) }),
                400,
                "RepeatabilityRequestIdReused",
            );
            const old = await call("POST", rotate("w1"), { headers: repeatable("new-id-1", 6 * 60_000) });
            assertError(old, 412, "RepeatabilityWindowExceeded");
            assert.equal(old.headers.get("repeatability-result"), "rejected");
            const bad = { "Repeatability-Request-ID": "new-id-2", "Repeatability-First-Sent": "yesterday" };
            assertError(await call("POST", rotate("w1"), { headers: bad }), 400, "InvalidRepeatabilityHeaders");
            const alone = { "Repeatability-Request-ID": "new-id-3" };
            assertError(await call("POST", rotate("w1"), { headers: alone }), 400, "InvalidRepeatabilityHeaders");
            assert.equal(server.operations().filter((op) => op.kind === "action").length, 1);
        });

        it("takes First-Sent in the obsolete HTTP-date forms too (RFC 850, asctime)", async () => {
            await start({
                clock: () => Date.parse("1994-11-06T08:49:37Z"),
                operations: fixedOperations({ pollsToFinish: 0 }),
            });
            assert.equal((await call("PUT", widget("w1"), { body: BODY })).status, 201);
            for (const [id, firstSent] of [
                ["rfc850", "Sunday, 06-Nov-94 08:49:37 GMT"],
                ["asctime", "Sun Nov  6 08:49:37 1994"],
                ["imf", "Sun, 06 Nov 1994 08:49:37 GMT"],
            ] as const) {
                const headers = { "Repeatability-Request-ID": id, "Repeatability-First-Sent": firstSent };
                const reply = await call("POST", rotate("w1"), { headers });
                assert.equal(reply.status, 200, `${firstSent}: ${reply.text}`);
                assert.equal(reply.headers.get("repeatability-result"), "accepted");
            }
        });

        it("answers 501 to valid repeatability headers on PUT and DELETE, which do not support them, and ignores ones that are not valid", async () => {
            assertError(
                await call("PUT", widget("w1"), { body: BODY, headers: repeatable("put-1") }),
                501,
                "RepeatabilityNotSupported",
            );
            assertError(
                await call("DELETE", widget("w1"), { headers: repeatable("del-1") }),
                501,
                "RepeatabilityNotSupported",
            );
            const ignored = { "Repeatability-Request-ID": "put-2", "Repeatability-First-Sent": "soon" };
            assert.equal((await call("PUT", widget("w1"), { body: BODY, headers: ignored })).status, 201);
        });

        it("a lost answer leaves the rotation started; the repeat gets the first answer and starts nothing more", async () => {
            await existing("w1");
            server.setFaults(scriptedFaults([{ operation: "action", fault: { kind: "lose-answer" } }]));
            const headers = repeatable("3f2b8c1e-0000-4000-8000-000000000003");
            await assert.rejects(call("POST", rotate("w1"), { headers }));
            assert.equal(server.operations().filter((op) => op.kind === "action").length, 1, "the effect happened");
            const repeat = await call("POST", rotate("w1"), { headers });
            assert.equal(repeat.status, 202);
            assert.equal(repeat.headers.get("repeatability-result"), "accepted");
            assert.equal(repeat.json.id, server.operations().find((op) => op.kind === "action")?.id);
            assert.equal(server.operations().filter((op) => op.kind === "action").length, 1);
            now += 6 * 60_000;
            assertError(await call("POST", rotate("w1"), { headers }), 412, "RepeatabilityWindowExceeded");
        });

        it("a server error is answered instead: nothing started, and the repeat is a first request", async () => {
            await existing("w1");
            server.setFaults(scriptedFaults([{ operation: "action", fault: { kind: "server-error", status: 500 } }]));
            const headers = repeatable("3f2b8c1e-0000-4000-8000-000000000004");
            assertError(await call("POST", rotate("w1"), { headers }), 500, "InternalServerError");
            assert.equal(server.operations().filter((op) => op.kind === "action").length, 0);
            const repeat = await call("POST", rotate("w1"), { headers });
            assert.equal(repeat.status, 202);
            assert.equal(server.operations().filter((op) => op.kind === "action").length, 1);
        });
    });

    describe("failed and canceled operations", () => {
        it("a failed create: the monitor says Failed with error {code, message}; the widget stays by default", async () => {
            server.setOperations(fixedOperations({ pollsToFinish: 1, outcome: "failed" }));
            const created = await call("PUT", widget("w1"), { body: BODY });
            const [done] = await pollToEnd(created.headers.get("operation-location") ?? "");
            assert.equal(done?.json.status, "Failed");
            assert.equal(done?.json.error.code, "WidgetOperationFailed");
            assert.match(done?.json.error.message, /create of widget 'w1' failed/);
            assert.equal(done?.headers.get("retry-after"), null);
            assert.equal((await call("GET", widget("w1"))).status, 200);
            assert.deepEqual([server.counts().creates, server.counts().live], [1, 1]);
        });

        it("a canceled create with failedCreate 'removed': the monitor says Canceled (no error required) and the widget is gone", async () => {
            await start({
                failedCreate: "removed",
                operations: fixedOperations({ pollsToFinish: 1, outcome: "canceled" }),
            });
            const created = await call("PUT", widget("w1"), { body: BODY });
            const [done] = await pollToEnd(created.headers.get("operation-location") ?? "");
            assert.deepEqual(done?.json, { id: created.headers.get("operation-id"), status: "Canceled" });
            assert.equal((await call("GET", widget("w1"))).status, 404);
            assert.deepEqual([server.counts().creates, server.counts().live], [1, 0]);
        });

        it("a failed replace puts the widget back; a failed delete keeps it; a failed rotation changes nothing and has no result", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 1, outcome: "failed" }));
            const replaced = await call("PUT", widget("w1"), { body: { size: 9 } });
            assert.equal(replaced.json.size, 9);
            await pollToEnd(replaced.headers.get("operation-location") ?? "");
            assert.equal((await call("GET", widget("w1"))).json.size, 3);
            const deleted = await call("DELETE", widget("w1"));
            assert.equal((await pollToEnd(deleted.headers.get("operation-location") ?? ""))[0]?.json.status, "Failed");
            const rotated = await call("POST", rotate("w1"));
            const [done] = await pollToEnd(rotated.headers.get("operation-location") ?? "");
            assert.equal(done?.json.result, undefined);
            assert.deepEqual((await call("GET", widget("w1"))).json, { name: "w1", ...BODY, keyVersion: 1 });
        });

        it("a synchronous failure is a 400 WidgetOperationFailed that made nothing", async () => {
            server.setOperations(fixedOperations({ pollsToFinish: 0, outcome: "failed" }));
            assertError(await call("PUT", widget("w1"), { body: BODY }), 400, "WidgetOperationFailed");
            assert.deepEqual([server.counts().creates, server.counts().live], [0, 0]);
        });
    });

    describe("late results", () => {
        it("a create: GET answers 404 until one GET after the monitor said Succeeded", async () => {
            server.setOperations(fixedOperations({ pollsToFinish: 1, resultLate: true }));
            const created = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(created.status, 201);
            assert.equal((await call("GET", widget("w1"))).status, 404);
            assert.equal(
                (await pollToEnd(created.headers.get("operation-location") ?? ""))[0]?.json.status,
                "Succeeded",
            );
            assert.equal((await call("GET", widget("w1"))).status, 404);
            assert.equal((await call("GET", widget("w1"))).status, 200);
            assert.equal(server.counts().live, 1);
        });

        it("a rotation: GET shows the old keyVersion until one GET after it succeeded", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 1, resultLate: true }));
            const rotated = await call("POST", rotate("w1"));
            await pollToEnd(rotated.headers.get("operation-location") ?? "");
            assert.equal((await call("GET", widget("w1"))).json.keyVersion, 1);
            assert.equal((await call("GET", widget("w1"))).json.keyVersion, 2);
        });
    });

    describe("credentials, strays and throttling", () => {
        it("answers 401 Unauthorized with WWW-Authenticate without the bearer token or with another, and counts it", async () => {
            const missing = await call("PUT", widget("w1"), { body: BODY, auth: null });
            assertError(missing, 401, "Unauthorized");
            assert.equal(missing.headers.get("www-authenticate"), "Bearer");
            assertError(await call("GET", widget("w1"), { auth: "Bearer nope" }), 401, "Unauthorized");
            assert.deepEqual([server.counts().unauthorized, server.counts().creates], [2, 0]);
        });

        it("answers 404 in the guidelines' error format to paths the API does not have, and counts them", async () => {
            assertError(await call("GET", `/things?api-version=${VERSION}`), 404, "NotFound");
            assert.equal((await call("POST", widget("w1"), { body: BODY })).status, 404);
            assert.equal(server.counts().requestsOutsideApi, 2);
        });

        it("throttling is 429 TooManyRequests with Retry-After in seconds, as an HTTP date, or none", async () => {
            server.setFaults(
                scriptedFaults([
                    { operation: "get", fault: { kind: "throttle", hint: "seconds", seconds: 7 } },
                    { operation: "get", fault: { kind: "throttle", hint: "http-date", seconds: 30 } },
                    { operation: "get", fault: { kind: "throttle", hint: "body", seconds: 7 } },
                ]),
            );
            const seconds = await call("GET", widget("w1"));
            assertError(seconds, 429, "TooManyRequests");
            assert.equal(seconds.headers.get("retry-after"), "7");
            const date = await call("GET", widget("w1"));
            assertError(date, 429, "TooManyRequests");
            assert.equal(Date.parse(date.headers.get("retry-after") ?? ""), START + 30_000);
            const none = await call("GET", widget("w1"));
            assertError(none, 429, "TooManyRequests");
            assert.equal(none.headers.get("retry-after"), null);
            assert.equal(server.counts().faultsInjected, 3);
        });
    });

    describe("listing and out-of-band changes", () => {
        it("lists the widgets as { value }; mutate and remove change what the API shows, as another tool would", async () => {
            await existing("w1");
            await existing("w2");
            const list = await call("GET", `/widgets?api-version=${VERSION}`);
            assert.deepEqual(list.json.value.map((item: { name: string }) => item.name).sort(), ["w1", "w2"]);
            server.mutate("w1", { size: 8 });
            assert.equal((await call("GET", widget("w1"))).json.size, 8);
            assert.throws(() => server.mutate("w1", { name: "x" }), /cannot rename/);
            server.remove("/widgets/w2");
            assert.equal((await call("GET", widget("w2"))).status, 404);
            assert.deepEqual(server.resources(), [
                { name: "w1", size: 8, color: "blue", tags: { team: "a" }, keyVersion: 1 },
            ]);
            assert.deepEqual([server.counts().creates, server.counts().live], [2, 1]);
        });
    });
});
