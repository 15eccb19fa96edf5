// Checks the Google AIP server against its public contract (operations.proto, google.rpc.Status/Code,
// AIP-133/134/135/151/155/193) over real HTTP with plain fetch: no client of ours is involved. Operations
// advance per poll, so nothing here waits for time to pass.

import { strict as assert } from "node:assert";
import { type GoogleAipServer, type GoogleAipServerOptions, startGoogleAipServer } from "./googleAip";
import { fixedOperations, scriptedFaults, scriptedOperations } from "./kit";

const PARENT = "projects/p1/locations/us-central1";
const WIDGETS = `/v1/${PARENT}/widgets`;
const CLOCK = Date.parse("2030-01-01T00:00:00.000Z");
const REQUEST_A = "6f1c2b1e-0d7a-4e55-9a3b-1c2d3e4f5a6b";
const REQUEST_B = "0b9c8d7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e";

interface Reply {
    status: number;
    headers: Headers;
    // biome-ignore lint/suspicious/noExplicitAny: the tests read JSON of many shapes
    json: any;
}

async function call(
    server: GoogleAipServer,
    method: string,
    path: string,
    options: { body?: unknown; token?: string | null } = {},
): Promise<Reply> {
    const headers: Record<string, string> = {};
    const token = options.token === undefined ? "test-token" : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${server.url}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: text === "" ? undefined : JSON.parse(text) };
}

const create = (server: GoogleAipServer, id: string, body: unknown, requestId?: string) =>
    call(server, "POST", `${WIDGETS}?widgetId=${id}${requestId === undefined ? "" : `&requestId=${requestId}`}`, {
        body,
    });
const poll = (server: GoogleAipServer, operation: string) => call(server, "GET", `/v1/${operation}`);

/** Polls until the operation says done (each poll advances it one step; bounded by the plan). */
async function pollDone(server: GoogleAipServer, operation: string): Promise<Reply> {
    for (let i = 0; i < 20; i++) {
        const reply = await poll(server, operation);
        assert.equal(reply.status, 200);
        if (reply.json.done === true) return reply;
    }
    throw new Error(`${operation} never finished`);
}

function assertRpcError(reply: Reply, http: number, status: string): void {
    assert.equal(reply.status, http, JSON.stringify(reply.json));
    assert.equal(reply.json.error.code, http);
    assert.equal(reply.json.error.status, status);
    assert.equal(typeof reply.json.error.message, "string");
    const info = reply.json.error.details.find((detail: { "@type": string }) =>
        detail["@type"].endsWith("google.rpc.ErrorInfo"),
    );
    assert.equal(info?.reason, status);
}

describe("Google AIP dialect server (AIP-133/134/135/151/155, google.longrunning)", () => {
    let server: GoogleAipServer;
    const start = async (options: GoogleAipServerOptions = {}) => {
        server = await startGoogleAipServer({ now: () => CLOCK, ...options });
        return server;
    };
    afterEach(async () => {
        await server?.close();
    });

    describe("create (AIP-133 + AIP-151)", () => {
        it("answers 200 with an Operation named under operations/, not the widget, with no done while running", async () => {
            await start();
            const reply = await create(server, "alpha", { displayName: "Alpha", size: 3 });
            assert.equal(reply.status, 200);
            assert.match(
                reply.json.name,
                /^projects\/p1\/locations\/us-central1\/operations\/operation-[0-9a-f-]{36}$/,
            );
            assert.notEqual(reply.json.name, `${PARENT}/widgets/alpha`);
            assert.equal("done" in reply.json, false, "proto3 JSON omits done=false");
            assert.equal("response" in reply.json, false);
            assert.equal("error" in reply.json, false);
            assert.deepEqual(reply.json.metadata, {
                "@type": "type.googleapis.com/test.widgets.v1.OperationMetadata",
                createTime: "2030-01-01T00:00:00.000Z",
                target: `${PARENT}/widgets/alpha`,
                verb: "create",
                apiVersion: "v1",
            });
        });

        it("shows the widget being created in Get and List with state CREATING, then ACTIVE in the operation's response", async () => {
            await start();
            const operation = (await create(server, "alpha", { displayName: "Alpha", size: 3 })).json.name;
            const during = await call(server, "GET", `${WIDGETS}/alpha`);
            assert.equal(during.status, 200);
            assert.equal(during.json.state, "CREATING");
            assert.equal((await call(server, "GET", WIDGETS)).json.widgets.length, 1);
            assert.equal(server.counts().creates, 0, "not created until the operation succeeds");

            const first = await poll(server, operation);
            assert.equal("done" in first.json, false, "one poll of two: still running");
            const done = await poll(server, operation);
            assert.equal(done.json.done, true);
            assert.equal("error" in done.json, false);
            assert.deepEqual(done.json.response, {
                "@type": "type.googleapis.com/test.widgets.v1.Widget",
                name: `${PARENT}/widgets/alpha`,
                displayName: "Alpha",
                size: 3,
                state: "ACTIVE",
                createTime: "2030-01-01T00:00:00.000Z",
                updateTime: "2030-01-01T00:00:00.000Z",
            });
            assert.equal(done.json.metadata.endTime, "2030-01-01T00:00:00.000Z");
            assert.equal((await call(server, "GET", `${WIDGETS}/alpha`)).json.state, "ACTIVE");
            assert.deepEqual({ creates: server.counts().creates, live: server.counts().live }, { creates: 1, live: 1 });
        });

        it("emits done: false when emitDefaults is set", async () => {
            await start({ emitDefaults: true });
            const reply = await create(server, "alpha", {});
            assert.equal(reply.json.done, false);
            assert.equal(reply.json.metadata.requestedCancellation, false);
        });

        it("may answer with an operation already done (a plan of 0 polls)", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 0 }) });
            const reply = await create(server, "alpha", { size: 1 });
            assert.equal(reply.json.done, true);
            assert.equal(reply.json.response.state, "ACTIVE");
            assert.equal(server.counts().creates, 1);
        });

        it("refuses a taken widgetId with 409 ALREADY_EXISTS as a google.rpc.Status", async () => {
            await start();
            await create(server, "alpha", { size: 1 });
            const again = await create(server, "alpha", { size: 2 });
            assertRpcError(again, 409, "ALREADY_EXISTS");
            assert.match(again.json.error.message, /widgets\/alpha already exists/);
            assert.equal(server.counts().live, 1);
        });

        it("refuses an invalid widgetId and a body that is not a widget with 400 INVALID_ARGUMENT", async () => {
            await start();
            assertRpcError(await create(server, "Bad_Id", {}), 400, "INVALID_ARGUMENT");
            assertRpcError(await create(server, "alpha", [1, 2]), 400, "INVALID_ARGUMENT");
            assert.equal(server.counts().live, 0);
        });

        it("generates the id when widgetId is omitted: the name is known only from the operation", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 1 }) });
            const operation = (await call(server, "POST", WIDGETS, { body: { displayName: "Twin" } })).json.name;
            const done = await pollDone(server, operation);
            assert.match(done.json.response.name, /^projects\/p1\/locations\/us-central1\/widgets\/w[0-9a-f]{20}$/);
            assert.equal(server.counts().duplicates, 0);
            const second = (await call(server, "POST", WIDGETS, { body: { displayName: "Twin" } })).json.name;
            await pollDone(server, second);
            assert.equal(
                server.counts().duplicates,
                1,
                "a second live widget with the same displayName is a duplicate",
            );
        });
    });

    describe("requestId (AIP-155)", () => {
        it("answers a repeated requestId with the same Operation, running or done, and creates once", async () => {
            await start();
            const first = await create(server, "alpha", { size: 1 }, REQUEST_A);
            const again = await create(server, "alpha", { size: 1 }, REQUEST_A);
            assert.equal(again.status, 200);
            assert.equal(again.json.name, first.json.name);
            await pollDone(server, first.json.name);
            const late = await create(server, "alpha", { size: 99 }, REQUEST_A);
            assert.equal(late.json.name, first.json.name);
            assert.equal(late.json.done, true, "the replay shows the operation as it is now");
            assert.equal(late.json.response.size, 1, "the first request's effect, whatever the repeat's body");
            assert.deepEqual({ creates: server.counts().creates, live: server.counts().live }, { creates: 1, live: 1 });
        });

        it("refuses a requestId reused for another widget, and one that is not a UUID, with 400", async () => {
            await start();
            await create(server, "alpha", {}, REQUEST_A);
            assertRpcError(await create(server, "beta", {}, REQUEST_A), 400, "INVALID_ARGUMENT");
            assertRpcError(await create(server, "beta", {}, "not-a-uuid"), 400, "INVALID_ARGUMENT");
            assert.equal(server.counts().live, 1);
        });

        it("does not remember a requestId whose request failed: the repeat is judged again", async () => {
            await start();
            await create(server, "alpha", {});
            assertRpcError(await create(server, "alpha", {}, REQUEST_B), 409, "ALREADY_EXISTS");
            server.remove("alpha");
            const retried = await create(server, "alpha", {}, REQUEST_B);
            assert.equal(retried.status, 200);
        });
    });

    describe("operation outcomes (operations.proto)", () => {
        it("ends a failed operation with done + error (google.rpc.Status) and no response, leaving nothing", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 1, outcome: "failed" }) });
            const operation = (await create(server, "alpha", {})).json.name;
            const done = await pollDone(server, operation);
            assert.equal(done.json.error.code, 13);
            assert.equal(typeof done.json.error.message, "string");
            assert.equal("response" in done.json, false);
            assertRpcError(await call(server, "GET", `${WIDGETS}/alpha`), 404, "NOT_FOUND");
            assert.deepEqual({ creates: server.counts().creates, live: server.counts().live }, { creates: 0, live: 0 });
        });

        it("cancels with CancelOperation: {} then done + error.code 1 (CANCELLED), the widget never made", async () => {
            await start();
            const operation = (await create(server, "alpha", {})).json.name;
            const cancel = await call(server, "POST", `/v1/${operation}:cancel`, { body: {} });
            assert.equal(cancel.status, 200);
            assert.deepEqual(cancel.json, {});
            const after = await poll(server, operation);
            assert.equal(after.json.done, true);
            assert.equal(after.json.error.code, 1);
            assert.equal(after.json.metadata.requestedCancellation, true);
            assert.equal(server.counts().live, 0);
            const again = await call(server, "POST", `/v1/${operation}:cancel`, { body: {} });
            assert.equal(again.status, 200, "cancelling a done operation changes nothing");
            assert.equal((await poll(server, operation)).json.error.code, 1);
        });

        it("ends an operation the plan cancels with error.code 1 too", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 1, outcome: "canceled" }) });
            const operation = (await create(server, "alpha", {})).json.name;
            assert.equal((await pollDone(server, operation)).json.error.code, 1);
        });

        it("answers an unknown operation with 404 NOT_FOUND, lists and deletes operations", async () => {
            await start();
            assertRpcError(await poll(server, `${PARENT}/operations/operation-nope`), 404, "NOT_FOUND");
            const operation = (await create(server, "alpha", {})).json.name;
            const listed = await call(server, "GET", `/v1/${PARENT}/operations`);
            assert.deepEqual(
                listed.json.operations.map((entry: { name: string }) => entry.name),
                [operation],
            );
            assert.equal((await call(server, "DELETE", `/v1/${operation}`)).status, 200);
            assertRpcError(await poll(server, operation), 404, "NOT_FOUND");
        });

        it("hides a created widget until one GET after its operation is done (resultLate)", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 1, resultLate: true }) });
            const operation = (await create(server, "alpha", {})).json.name;
            assertRpcError(await call(server, "GET", `${WIDGETS}/alpha`), 404, "NOT_FOUND");
            assert.equal((await pollDone(server, operation)).json.response.state, "ACTIVE");
            assertRpcError(await call(server, "GET", `${WIDGETS}/alpha`), 404, "NOT_FOUND");
            assert.equal((await call(server, "GET", `${WIDGETS}/alpha`)).status, 200);
        });
    });

    describe("update and delete (AIP-134, AIP-135)", () => {
        const active = async (body: Record<string, unknown>) => {
            await start({ operations: fixedOperations({ pollsToFinish: 1 }) });
            await pollDone(server, (await create(server, "alpha", body)).json.name);
        };

        it("updates only the updateMask's fields, as a long-running operation resolving to the widget", async () => {
            await active({ displayName: "Alpha", size: 1, labels: { env: "dev", team: "a" } });
            const reply = await call(server, "PATCH", `${WIDGETS}/alpha?updateMask=size,labels.env`, {
                body: { displayName: "ignored", size: 2, labels: { env: "prod" } },
            });
            assert.equal(reply.status, 200);
            assert.equal(reply.json.metadata.verb, "update");
            assert.equal((await call(server, "GET", `${WIDGETS}/alpha`)).json.state, "UPDATING");
            const done = await pollDone(server, reply.json.name);
            assert.equal(done.json.response.size, 2);
            assert.equal(done.json.response.displayName, "Alpha");
            assert.deepEqual(done.json.response.labels, { env: "prod", team: "a" });
        });

        it("writes every populated field when updateMask is omitted, and replaces all with *", async () => {
            await active({ displayName: "Alpha", size: 1 });
            const implied = await call(server, "PATCH", `${WIDGETS}/alpha`, { body: { size: 5 } });
            const kept = (await pollDone(server, implied.json.name)).json.response;
            assert.deepEqual([kept.displayName, kept.size], ["Alpha", 5]);
            const replace = await call(server, "PATCH", `${WIDGETS}/alpha?updateMask=*`, { body: { size: 7 } });
            const response = (await pollDone(server, replace.json.name)).json.response;
            assert.equal(response.size, 7);
            assert.equal("displayName" in response, false);
        });

        it("refuses a second operation while one runs with 409 ABORTED, and a missing widget with 404", async () => {
            await active({ size: 1 });
            server.setOperations(fixedOperations({ pollsToFinish: 5 }));
            await call(server, "PATCH", `${WIDGETS}/alpha`, { body: { size: 2 } });
            assertRpcError(await call(server, "PATCH", `${WIDGETS}/alpha`, { body: { size: 3 } }), 409, "ABORTED");
            assertRpcError(await call(server, "DELETE", `${WIDGETS}/alpha`), 409, "ABORTED");
            assertRpcError(await call(server, "PATCH", `${WIDGETS}/nope`, { body: { size: 3 } }), 404, "NOT_FOUND");
        });

        it("lets a refused caller's wait count as time: each ABORTED is a step of the operation running on the widget", async () => {
            await active({ size: 1 });
            server.setOperations(fixedOperations({ pollsToFinish: 3 }));
            await call(server, "PATCH", `${WIDGETS}/alpha`, { body: { size: 2 } });
            for (let refused = 0; refused < 3; refused++)
                assertRpcError(await call(server, "DELETE", `${WIDGETS}/alpha`), 409, "ABORTED");
            assert.equal((await call(server, "GET", `${WIDGETS}/alpha`)).json.state, "ACTIVE", "the update ended");
            assert.equal((await call(server, "DELETE", `${WIDGETS}/alpha`)).status, 200);
        });

        it("deletes as an operation resolving to google.protobuf.Empty; a gone widget is 404 unless allowMissing", async () => {
            await active({ size: 1 });
            const reply = await call(server, "DELETE", `${WIDGETS}/alpha`);
            assert.equal(reply.status, 200);
            assert.equal((await call(server, "GET", `${WIDGETS}/alpha`)).json.state, "DELETING");
            const done = await pollDone(server, reply.json.name);
            assert.deepEqual(done.json.response, { "@type": "type.googleapis.com/google.protobuf.Empty" });
            assertRpcError(await call(server, "GET", `${WIDGETS}/alpha`), 404, "NOT_FOUND");
            assertRpcError(await call(server, "DELETE", `${WIDGETS}/alpha`), 404, "NOT_FOUND");
            const missing = await call(server, "DELETE", `${WIDGETS}/alpha?allowMissing=true`);
            assert.equal(missing.json.done, true);
            assert.equal(missing.json.response["@type"], "type.googleapis.com/google.protobuf.Empty");
            assert.equal(server.counts().live, 0);
        });

        it("keeps the widget when a delete fails, and leaves it unchanged when an update is cancelled", async () => {
            await active({ size: 1 });
            server.setOperations(scriptedOperations({ kind: "delete", pollsToFinish: 1, outcome: "failed" }));
            const failed = await pollDone(server, (await call(server, "DELETE", `${WIDGETS}/alpha`)).json.name);
            assert.equal(failed.json.error.code, 13);
            assert.equal((await call(server, "GET", `${WIDGETS}/alpha`)).json.state, "ACTIVE");
            const update = await call(server, "PATCH", `${WIDGETS}/alpha`, { body: { size: 9 } });
            await call(server, "POST", `/v1/${update.json.name}:cancel`, { body: {} });
            const widget = (await call(server, "GET", `${WIDGETS}/alpha`)).json;
            assert.deepEqual([widget.size, widget.state], [1, "ACTIVE"]);
        });

        it("lists an empty collection as {} (proto3 JSON) and pages with nextPageToken", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 0 }) });
            assert.deepEqual((await call(server, "GET", WIDGETS)).json, {});
            for (const id of ["a1", "a2", "a3"]) await create(server, id, {});
            const page = await call(server, "GET", `${WIDGETS}?pageSize=2`);
            assert.equal(page.json.widgets.length, 2);
            const rest = await call(server, "GET", `${WIDGETS}?pageSize=2&pageToken=${page.json.nextPageToken}`);
            assert.deepEqual(
                rest.json.widgets.map((widget: { name: string }) => widget.name),
                [`${PARENT}/widgets/a3`],
            );
            assert.equal("nextPageToken" in rest.json, false);
        });

        it("shows out-of-band changes and removals (mutate, remove)", async () => {
            await active({ size: 1 });
            server.mutate("alpha", { size: 42 });
            assert.equal((await call(server, "GET", `${WIDGETS}/alpha`)).json.size, 42);
            server.remove(`${PARENT}/widgets/alpha`);
            assertRpcError(await call(server, "GET", `${WIDGETS}/alpha`), 404, "NOT_FOUND");
            assert.equal(server.counts().live, 0);
        });
    });

    describe("errors, authentication and the kit's faults", () => {
        it("throttles with 429 RESOURCE_EXHAUSTED and no Retry-After; nothing is created; the retry succeeds", async () => {
            await start({
                faults: scriptedFaults([
                    { operation: "create", fault: { kind: "throttle", hint: "seconds", seconds: 3 } },
                    { operation: "create", fault: { kind: "throttle", hint: "body", seconds: 3 } },
                ]),
            });
            const plain = await create(server, "alpha", {});
            assertRpcError(plain, 429, "RESOURCE_EXHAUSTED");
            assert.equal(plain.headers.get("retry-after"), null);
            assert.equal(plain.json.error.details.length, 1, "hint 'seconds' has no Google form: no RetryInfo");
            const hinted = await create(server, "alpha", {});
            assertRpcError(hinted, 429, "RESOURCE_EXHAUSTED");
            assert.equal(hinted.headers.get("retry-after"), null);
            assert.deepEqual(hinted.json.error.details[1], {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                retryDelay: "3s",
            });
            assert.equal(server.counts().live, 0);
            assert.equal((await create(server, "alpha", {})).status, 200);
            assert.equal(server.counts().faultsInjected, 2);
        });

        it("refuses a missing or wrong bearer token with 401 UNAUTHENTICATED, counted, doing nothing", async () => {
            await start();
            const none = await call(server, "POST", `${WIDGETS}?widgetId=alpha`, { body: {}, token: null });
            assertRpcError(none, 401, "UNAUTHENTICATED");
            assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer /);
            assertRpcError(await call(server, "GET", WIDGETS, { token: "wrong" }), 401, "UNAUTHENTICATED");
            assert.deepEqual(
                { unauthorized: server.counts().unauthorized, live: server.counts().live },
                { unauthorized: 2, live: 0 },
            );
        });

        it("answers paths outside the API with 404 NOT_FOUND and counts them", async () => {
            await start();
            assertRpcError(await call(server, "GET", "/v1/widgets/alpha"), 404, "NOT_FOUND");
            assertRpcError(await call(server, "PUT", `${WIDGETS}/alpha`, { body: {} }), 404, "NOT_FOUND");
            assert.equal(server.counts().requestsOutsideApi, 2);
        });

        it("loses a create's answer after making it: the requestId retry gets the same operation, no twin", async () => {
            await start({ faults: scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" } }]) });
            await assert.rejects(create(server, "alpha", { size: 1 }, REQUEST_A));
            assert.equal(server.counts().live, 1, "the effect happened");
            const operations = server.operations();
            const retried = await create(server, "alpha", { size: 1 }, REQUEST_A);
            assert.equal(retried.json.name, operations[0]?.name);
            await pollDone(server, retried.json.name);
            assert.deepEqual(
                {
                    creates: server.counts().creates,
                    live: server.counts().live,
                    duplicates: server.counts().duplicates,
                },
                { creates: 1, live: 1, duplicates: 0 },
            );
        });

        it("gives the requestId retry of a lost create without widgetId the same operation: one widget", async () => {
            await start({ faults: scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" } }]) });
            const path = `${WIDGETS}?requestId=${REQUEST_B}`;
            await assert.rejects(call(server, "POST", path, { body: { displayName: "Anon" } }));
            const retried = await call(server, "POST", path, { body: { displayName: "Anon" } });
            assert.equal(retried.status, 200);
            assert.equal(retried.json.name, server.operations()[0]?.name);
            assert.equal(server.counts().live, 1);
            const other = await call(server, "POST", `${WIDGETS}?widgetId=named&requestId=${REQUEST_B}`, { body: {} });
            assertRpcError(other, 400, "INVALID_ARGUMENT");
        });

        it("answers an injected 5xx instead of handling: nothing is created", async () => {
            await start({
                faults: scriptedFaults([{ operation: "create", fault: { kind: "server-error", status: 503 } }]),
            });
            assertRpcError(await create(server, "alpha", {}), 503, "UNAVAILABLE");
            assert.equal(server.counts().live, 0);
        });

        it("cuts a poll's answer after advancing the operation, and delays a slow one", async () => {
            await start({
                operations: fixedOperations({ pollsToFinish: 2 }),
                faults: scriptedFaults([
                    { operation: "poll", fault: { kind: "cut-answer" } },
                    { operation: "poll", fault: { kind: "slow", ms: 5 } },
                ]),
            });
            const operation = (await create(server, "alpha", {})).json.name;
            await assert.rejects(poll(server, operation));
            const second = await poll(server, operation);
            assert.equal(second.json.done, true, "the cut poll was handled: this is the second");
        });
    });
});
