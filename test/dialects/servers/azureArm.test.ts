// Checks the local ARM resource provider (azureArm.ts) against the RPC contract it was written from, over
// real HTTP with plain fetch (no client of ours): synchronous and long-running PUT, the
// Azure-AsyncOperation status resource, PATCH and DELETE with Location monitors whose HTTP code is the
// status, Retry-After present or absent, failed and canceled operations, late results, api-version,
// credentials, and the kit's faults as this dialect renders them. Operations advance per poll: no test
// waits for time to pass.

import { strict as assert } from "node:assert";
import {
    ARM_API_VERSION,
    ARM_TYPE,
    type AzureArmServer,
    type AzureArmServerOptions,
    startAzureArmServer,
} from "./azureArm";
import { fixedOperations, scriptedFaults, scriptedOperations } from "./kit";

const SUBSCRIPTION = "00000000-0000-4000-8000-000000000019";
const GROUP = "rg-widgets";
const COLLECTION = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${GROUP}/providers/Test.Widgets/widgets`;
const BODY = { location: "West US", tags: { team: "a" }, properties: { size: 3, color: "blue" } };

interface Reply {
    readonly status: number;
    readonly headers: Headers;
    readonly text: string;
    // biome-ignore lint/suspicious/noExplicitAny: tests read the JSON of many shapes
    readonly json: any;
}

describe("Azure ARM dialect server", () => {
    let server: AzureArmServer;

    async function start(options: AzureArmServerOptions = {}): Promise<AzureArmServer> {
        await server?.close();
        server = await startAzureArmServer(options);
        return server;
    }

    /** One request; `target` is a path on the server or an absolute URL it handed out. */
    async function call(
        method: string,
        target: string,
        options: { body?: unknown; raw?: string; auth?: string | null; headers?: Record<string, string> } = {},
    ): Promise<Reply> {
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

    const widget = (name: string, version: string | null = ARM_API_VERSION): string =>
        `${COLLECTION}/${encodeURIComponent(name)}${version === null ? "" : `?api-version=${version}`}`;

    function assertError(reply: Reply, status: number, code: string): void {
        assert.equal(reply.status, status, reply.text);
        assert.equal(reply.json?.error?.code, code, reply.text);
        assert.equal(typeof reply.json.error.message, "string");
        assert.ok(reply.json.error.message.length > 0);
    }

    /** A widget created synchronously (the first create of the plan finishes in its answer). */
    async function existing(name = "w1", body: unknown = BODY): Promise<Reply> {
        server.setOperations(scriptedOperations({ kind: "create", pollsToFinish: 0 }));
        const reply = await call("PUT", widget(name), { body });
        assert.equal(reply.status, 201, reply.text);
        assert.equal(reply.json.properties.provisioningState, "Succeeded");
        return reply;
    }

    beforeEach(() => start());
    afterEach(async () => {
        assert.equal(server.stats().handlerFailures, 0, "a handler threw");
        await server.close();
    });

    describe("PUT", () => {
        it("finishes synchronously with the server option: 201 Succeeded without a monitor, and the same PUT again is an update (200), never a second widget", async () => {
            await start({ synchronousPut: true });
            const created = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(created.status, 201, created.text);
            assert.equal(created.headers.get("azure-asyncoperation"), null);
            assert.deepEqual(created.json, {
                id: `${COLLECTION}/w1`,
                name: "w1",
                type: ARM_TYPE,
                location: "West US",
                tags: { team: "a" },
                properties: { size: 3, color: "blue", provisioningState: "Succeeded" },
            });
            assert.ok(created.headers.get("x-ms-request-id"));
            const again = await call("PUT", widget("w1"), { body: { ...BODY, properties: { size: 4 } } });
            assert.equal(again.status, 200, again.text);
            assert.deepEqual(again.json.properties, { size: 4, provisioningState: "Succeeded" });
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

        it("finishes synchronously when the operation plan says pollsToFinish 0, and the next PUT is long-running again", async () => {
            await existing("w1");
            const next = await call("PUT", widget("w2"), { body: BODY });
            assert.equal(next.status, 201);
            assert.equal(next.json.properties.provisioningState, "Accepted");
            assert.ok(next.headers.get("azure-asyncoperation"));
        });

        it("answers a synchronous PUT that failed with 201 and provisioningState Failed: the widget exists", async () => {
            await start({ synchronousPut: true, operations: fixedOperations({ outcome: "failed" }) });
            const reply = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(reply.status, 201);
            assert.equal(reply.json.properties.provisioningState, "Failed");
            assert.equal(server.counts().live, 1);
        });

        it("long-running: 201 Accepted with an absolute Azure-AsyncOperation on the server's origin and api-version; the status resource answers 200 InProgress then Succeeded; the resource follows with provisioningState", async () => {
            server.setOperations(fixedOperations({ pollsToFinish: 3 }));
            const created = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(created.status, 201, created.text);
            assert.equal(created.json.properties.provisioningState, "Accepted");
            const monitor = new URL(created.headers.get("azure-asyncoperation") ?? "");
            assert.equal(monitor.origin, server.url);
            assert.equal(monitor.searchParams.get("api-version"), ARM_API_VERSION);
            assert.match(
                monitor.pathname,
                new RegExp(
                    `^/subscriptions/${SUBSCRIPTION}/providers/Test\\.Widgets/locations/westus/operationStatuses/[0-9a-f-]{36}$`,
                ),
            );

            const first = await call("GET", monitor.href);
            assert.equal(first.status, 200);
            assert.equal(first.json.status, "InProgress");
            assert.equal(first.json.percentComplete, 33);
            assert.equal(first.json.name, monitor.pathname.split("/").pop());
            assert.equal(first.json.id, monitor.pathname);
            assert.equal(first.json.error, undefined);
            assert.equal(first.json.endTime, undefined);

            const during = await call("GET", widget("w1")); // a GET of the resource is a poll too
            assert.equal(during.json.properties.provisioningState, "Creating");
            assert.equal(during.json.properties.size, 3, "the properties show what is being provisioned");

            const done = await call("GET", monitor.href);
            assert.equal(done.status, 200);
            assert.equal(done.json.status, "Succeeded");
            assert.equal(done.json.percentComplete, 100);
            assert.ok(Date.parse(done.json.endTime) >= Date.parse(done.json.startTime));
            assert.equal(done.json.error, undefined);
            const after = await call("GET", widget("w1"));
            assert.equal(after.json.properties.provisioningState, "Succeeded");
            assert.equal((await call("GET", monitor.href)).json.status, "Succeeded", "the status stays readable");
        });

        it("without Azure-AsyncOperation (server option), a client follows provisioningState on the resource itself", async () => {
            await start({ putAsyncOperationHeader: false });
            const created = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(created.status, 201);
            assert.equal(created.headers.get("azure-asyncoperation"), null);
            assert.equal(created.headers.get("location"), null);
            assert.equal(created.json.properties.provisioningState, "Accepted");
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Creating");
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Succeeded");
        });

        it("refuses a different PUT while the create runs (409 AnotherOperationInProgress) and joins the same PUT again, as a retry", async () => {
            const first = await call("PUT", widget("w1"), { body: BODY });
            const monitor = first.headers.get("azure-asyncoperation");
            assertError(
                await call("PUT", widget("w1"), { body: { ...BODY, tags: {} } }),
                409,
                "AnotherOperationInProgress",
            );
            assertError(await call("PATCH", widget("w1"), { body: { tags: {} } }), 409, "AnotherOperationInProgress");
            assertError(await call("DELETE", widget("w1")), 409, "AnotherOperationInProgress");
            const retry = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(retry.status, 200, "the widget exists now: a PUT to it is an update");
            assert.equal(retry.headers.get("azure-asyncoperation"), monitor);
            assert.equal(server.operations().length, 1);
            assert.deepEqual([server.counts().creates, server.counts().duplicates, server.counts().live], [1, 0, 1]);
        });

        it("matches names case-insensitively and keeps the casing of the latest PUT", async () => {
            await start({ synchronousPut: true });
            await call("PUT", widget("Widget1"), { body: BODY });
            const read = await call("GET", widget("widget1"));
            assert.equal(read.status, 200);
            assert.equal(read.json.name, "Widget1");
            const again = await call("PUT", widget("WIDGET1"), { body: BODY });
            assert.equal(again.status, 200);
            assert.equal((await call("GET", widget("widget1"))).json.name, "WIDGET1");
            assert.equal(server.counts().creates, 1);
        });

        it("takes back the body of a GET (id, name, type, the current provisioningState) and refuses another provisioningState", async () => {
            const created = await existing("w1");
            const back = await call("PUT", widget("w1"), { body: created.json });
            assert.equal(back.status, 200, back.text);
            const mismatch = { ...BODY, properties: { ...BODY.properties, provisioningState: "Failed" } };
            assertError(await call("PUT", widget("w1"), { body: mismatch }), 400, "InvalidRequestContent");
            assertError(await call("PUT", widget("w2"), { body: mismatch }), 400, "InvalidRequestContent");
        });

        it("refuses a create without location, a location change, a name with ':' and a body that is not a JSON object", async () => {
            assertError(await call("PUT", widget("w1"), { body: { properties: {} } }), 400, "LocationRequired");
            await existing("w1");
            assertError(
                await call("PUT", widget("w1"), { body: { ...BODY, location: "East US" } }),
                400,
                "LocationCannotBeChanged",
            );
            assertError(await call("PUT", widget("a:b"), { body: BODY }), 400, "InvalidResourceName");
            assertError(await call("PUT", widget("w2"), { body: [1] }), 400, "InvalidRequestContent");
            assertError(await call("PUT", widget("w2"), { raw: "{" }), 400, "InvalidRequestContent");
            assertError(
                await call("PUT", widget("w2"), { raw: "size=3", headers: { "Content-Type": "text/plain" } }),
                415,
                "UnsupportedMediaType",
            );
            assert.equal(server.counts().creates, 1);
        });
    });

    describe("PATCH", () => {
        it("answers 202 with Location and Azure-AsyncOperation and no body; the Location answers 202 while running, then 200 with the widget: tags replaced, properties merge-patched", async () => {
            await existing("w1", { ...BODY, properties: { size: 3, color: "blue", shape: "round" } });
            server.setOperations(fixedOperations({ pollsToFinish: 3 }));
            const patched = await call("PATCH", widget("w1"), {
                body: { tags: { team: "b" }, properties: { color: null, size: 5 } },
            });
            assert.equal(patched.status, 202, patched.text);
            assert.equal(patched.text, "");
            const location = patched.headers.get("location") ?? "";
            const status = patched.headers.get("azure-asyncoperation") ?? "";
            assert.equal(new URL(location).origin, server.url);
            assert.match(new URL(location).pathname, /\/operationResults\/[0-9a-f-]{36}$/);
            assert.match(new URL(status).pathname, /\/operationStatuses\/[0-9a-f-]{36}$/);
            assert.equal(new URL(location).searchParams.get("api-version"), ARM_API_VERSION);

            const running = await call("GET", location);
            assert.equal(running.status, 202);
            assert.equal(running.text, "", "a Location monitor has no body while running");
            assert.equal(running.headers.get("location"), location);
            const during = await call("GET", widget("w1"));
            assert.equal(during.json.properties.provisioningState, "Updating");
            const done = await call("GET", location);
            assert.equal(done.status, 200, done.text);
            assert.deepEqual(done.json.tags, { team: "b" });
            assert.deepEqual(done.json.properties, { size: 5, shape: "round", provisioningState: "Succeeded" });
            assert.equal((await call("GET", status)).json.status, "Succeeded");
        });

        it("answers 404 for a widget that does not exist", async () => {
            assertError(await call("PATCH", widget("nope"), { body: { tags: {} } }), 404, "ResourceNotFound");
        });

        it("reverts the properties when the update fails: the Location answers 4xx with the error, the resource shows Failed", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 1, outcome: "failed" }));
            const patched = await call("PATCH", widget("w1"), { body: { properties: { size: 99 } } });
            const final = await call("GET", patched.headers.get("location") ?? "");
            assertError(final, 400, "WidgetOperationFailed");
            const read = await call("GET", widget("w1"));
            assert.deepEqual(read.json.properties, { size: 3, color: "blue", provisioningState: "Failed" });
        });
    });

    describe("DELETE", () => {
        it("answers 202 with a Location only and no body; the Location answers 202 while running, then 204 and the widget is gone; DELETE again answers 204", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 3 }));
            const deleted = await call("DELETE", widget("w1"));
            assert.equal(deleted.status, 202);
            assert.equal(deleted.text, "");
            assert.equal(deleted.headers.get("azure-asyncoperation"), null);
            const location = deleted.headers.get("location") ?? "";
            assert.equal(new URL(location).origin, server.url);

            const again = await call("DELETE", widget("w1"));
            assert.equal(again.status, 202, "a DELETE while the delete runs gets the same monitor");
            assert.equal(again.headers.get("location"), location);
            assert.equal((await call("GET", location)).status, 202);
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Deleting");
            const done = await call("GET", location);
            assert.equal(done.status, 204);
            assert.equal(done.text, "");
            assertError(await call("GET", widget("w1")), 404, "ResourceNotFound");
            assert.equal((await call("GET", location)).status, 204, "the final answer stays");
            assert.equal((await call("DELETE", widget("w1"))).status, 204);
            assert.deepEqual([server.counts().creates, server.counts().live], [1, 0]);
            assert.equal(server.operations().length, 2, "one create, one delete");
        });

        it("answers 200 on the finished Location with deleteFinalStatus 200, 200 for a synchronous delete, and 404 for an operation it never had", async () => {
            await start({ deleteFinalStatus: 200 });
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 1 }));
            const location = (await call("DELETE", widget("w1"))).headers.get("location") ?? "";
            assert.equal((await call("GET", location)).status, 200);
            await existing("w2");
            server.setOperations(fixedOperations({ pollsToFinish: 0 }));
            assert.equal(
                (await call("DELETE", widget("w2"))).status,
                200,
                "a widget that existed and was deleted synchronously",
            );
            const unknown = location.replace(
                /operationResults\/[0-9a-f-]+/,
                "operationResults/00000000-0000-4000-8000-000000000000",
            );
            assertError(await call("GET", unknown), 404, "OperationNotFound");
        });

        it("keeps the widget when the delete is canceled: the Location answers 409 with the error, the status resource says Canceled with error.code", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 1, outcome: "canceled" }));
            const location = (await call("DELETE", widget("w1"))).headers.get("location") ?? "";
            assertError(await call("GET", location), 409, "OperationCanceled");
            const status = await call("GET", location.replace("/operationResults/", "/operationStatuses/"));
            assert.equal(status.status, 200);
            assert.equal(status.json.status, "Canceled");
            assert.equal(status.json.error.code, "OperationCanceled");
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Canceled");
            assert.equal(server.counts().live, 1);
        });
    });

    describe("failed operations", () => {
        it("a failed create: the status resource says Failed with error {code, message}; the widget exists in provisioningState Failed", async () => {
            server.setOperations(fixedOperations({ pollsToFinish: 1, outcome: "failed" }));
            const created = await call("PUT", widget("w1"), { body: BODY });
            const status = await call("GET", created.headers.get("azure-asyncoperation") ?? "");
            assert.equal(status.status, 200, "reading the status of a failed operation is a success");
            assert.equal(status.json.status, "Failed");
            assert.equal(status.json.error.code, "WidgetOperationFailed");
            assert.match(status.json.error.message, /create of widget 'w1' failed/);
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Failed");
            assert.deepEqual([server.counts().creates, server.counts().live], [1, 1]);
        });

        it("a PUT over a failed widget is an update that provisions it again", async () => {
            server.setOperations(scriptedOperations({ kind: "create", pollsToFinish: 0, outcome: "failed" }));
            await call("PUT", widget("w1"), { body: BODY });
            const again = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(again.status, 200);
            const status = await call("GET", again.headers.get("azure-asyncoperation") ?? "");
            assert.equal(status.json.status, "InProgress");
            assert.equal((await call("GET", again.headers.get("azure-asyncoperation") ?? "")).json.status, "Succeeded");
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Succeeded");
            assert.equal(server.counts().creates, 1);
        });
    });

    describe("Retry-After", () => {
        it("alternates by default: on the first answer of an operation, not the next, then again; never on a terminal answer", async () => {
            server.setOperations(fixedOperations({ pollsToFinish: 4 }));
            const created = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(created.headers.get("retry-after"), "10");
            const monitor = created.headers.get("azure-asyncoperation") ?? "";
            const hints: Array<string | null> = [];
            for (let poll = 0; poll < 4; poll++) hints.push((await call("GET", monitor)).headers.get("retry-after"));
            assert.deepEqual(hints, [null, "10", null, null]);
        });

        it("is on every non-terminal answer with retryAfter 'always', in the seconds asked for", async () => {
            await start({ retryAfter: "always", retryAfterSeconds: 1 });
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 3 }));
            const deleted = await call("DELETE", widget("w1"));
            assert.equal(deleted.headers.get("retry-after"), "1");
            const location = deleted.headers.get("location") ?? "";
            assert.equal((await call("GET", location)).headers.get("retry-after"), "1");
            assert.equal((await call("GET", location)).headers.get("retry-after"), "1");
            const done = await call("GET", location);
            assert.equal(done.status, 204);
            assert.equal(done.headers.get("retry-after"), null);
        });

        it("is never sent with retryAfter 'never' (clients then wait their 60 s default)", async () => {
            await start({ retryAfter: "never" });
            const created = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(created.headers.get("retry-after"), null);
            const monitor = created.headers.get("azure-asyncoperation") ?? "";
            assert.equal((await call("GET", monitor)).headers.get("retry-after"), null);
        });
    });

    describe("late results", () => {
        it("a create: after the status says Succeeded, the next GET of the resource still shows it non-terminal, the one after Succeeded", async () => {
            server.setOperations(fixedOperations({ pollsToFinish: 1, resultLate: true }));
            const created = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(
                (await call("GET", created.headers.get("azure-asyncoperation") ?? "")).json.status,
                "Succeeded",
            );
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Accepted");
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Succeeded");
        });

        it("a delete: after the Location answers 204, the next GET still finds the widget, the one after 404", async () => {
            await existing("w1");
            server.setOperations(fixedOperations({ pollsToFinish: 1, resultLate: true }));
            const location = (await call("DELETE", widget("w1"))).headers.get("location") ?? "";
            assert.equal((await call("GET", location)).status, 204);
            assert.equal(server.counts().live, 0, "the widget is gone: only the read lags");
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Deleting");
            assert.equal((await call("GET", widget("w1"))).status, 404);
        });
    });

    describe("api-version and credentials", () => {
        it("requires api-version on every request, monitors included (400 MissingApiVersionParameter), and refuses one it does not support", async () => {
            assertError(await call("PUT", widget("w1", null), { body: BODY }), 400, "MissingApiVersionParameter");
            assertError(
                await call("PUT", widget("w1", "2019-01-01"), { body: BODY }),
                400,
                "NoRegisteredProviderFound",
            );
            assertError(await call("PUT", widget("w1", "latest"), { body: BODY }), 400, "InvalidApiVersionParameter");
            assert.equal(server.counts().creates, 0);
            const created = await call("PUT", widget("w1"), { body: BODY });
            const monitor = new URL(created.headers.get("azure-asyncoperation") ?? "");
            monitor.searchParams.delete("api-version");
            assertError(await call("GET", monitor.href), 400, "MissingApiVersionParameter");
            assertError(await call("GET", `${COLLECTION}`), 400, "MissingApiVersionParameter");
        });

        it("answers 401 AuthenticationFailed with WWW-Authenticate without the bearer token or with another, and counts it", async () => {
            const missing = await call("PUT", widget("w1"), { body: BODY, auth: null });
            assertError(missing, 401, "AuthenticationFailed");
            assert.match(missing.headers.get("www-authenticate") ?? "", /^Bearer /);
            assertError(await call("GET", widget("w1"), { auth: "Bearer wrong" }), 401, "AuthenticationFailed");
            assert.equal(
                (await call("GET", `${COLLECTION}?api-version=${ARM_API_VERSION}`, { auth: "bearer test-token" }))
                    .status,
                200,
            );
            assert.deepEqual([server.counts().unauthorized, server.counts().creates], [2, 0]);
        });

        it("answers 404 in the ARM error format to paths the API does not have, and counts them", async () => {
            const stray = await call(
                "GET",
                `/subscriptions/${SUBSCRIPTION}/providers/Other.Things/things?api-version=${ARM_API_VERSION}`,
            );
            assertError(stray, 404, "NotFound");
            assert.equal((await call("POST", widget("w1"), { body: BODY })).status, 404);
            assert.equal(server.counts().requestsOutsideApi, 2);
        });
    });

    describe("faults from the kit", () => {
        it("a lost answer to a create leaves the widget; the PUT sent again is an update of it, never a second one", async () => {
            server.setFaults(scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" } }]));
            await assert.rejects(call("PUT", widget("w1"), { body: BODY }));
            assert.deepEqual(
                [server.counts().creates, server.counts().live, server.counts().faultsInjected],
                [1, 1, 1],
            );
            const retry = await call("PUT", widget("w1"), { body: BODY });
            assert.equal(retry.status, 200, retry.text);
            assert.ok(retry.headers.get("azure-asyncoperation"));
            assert.deepEqual([server.counts().creates, server.counts().duplicates, server.counts().live], [1, 0, 1]);
        });

        it("a server error is answered instead of the create: nothing was made", async () => {
            server.setFaults(scriptedFaults([{ operation: "create", fault: { kind: "server-error", status: 503 } }]));
            assertError(await call("PUT", widget("w1"), { body: BODY }), 503, "ServiceUnavailable");
            assert.deepEqual([server.counts().creates, server.counts().live], [0, 0]);
            assert.equal(server.operations().length, 0);
            assertError(await call("GET", widget("w1")), 404, "ResourceNotFound");
        });

        it("a lost answer to a poll still counts as that poll", async () => {
            server.setOperations(fixedOperations({ pollsToFinish: 2 }));
            const monitor = (await call("PUT", widget("w1"), { body: BODY })).headers.get("azure-asyncoperation") ?? "";
            server.setFaults(scriptedFaults([{ operation: "poll", fault: { kind: "lose-answer" } }]));
            await assert.rejects(call("GET", monitor));
            assert.equal((await call("GET", monitor)).json.status, "Succeeded");
        });

        it("throttling is 429 TooManyRequests with Retry-After in seconds, as an HTTP date, or none", async () => {
            server.setFaults(
                scriptedFaults([
                    { operation: "list", fault: { kind: "throttle", hint: "seconds", seconds: 7 } },
                    { operation: "list", fault: { kind: "throttle", hint: "http-date", seconds: 30 } },
                    { operation: "list", fault: { kind: "throttle", hint: "none", seconds: 7 } },
                ]),
            );
            const list = `${COLLECTION}?api-version=${ARM_API_VERSION}`;
            const seconds = await call("GET", list);
            assertError(seconds, 429, "TooManyRequests");
            assert.equal(seconds.headers.get("retry-after"), "7");
            const date = await call("GET", list);
            assertError(date, 429, "TooManyRequests");
            assert.ok(Date.parse(date.headers.get("retry-after") ?? "") > Date.now() - 1000);
            assert.match(date.headers.get("retry-after") ?? "", /GMT$/);
            const none = await call("GET", list);
            assertError(none, 429, "TooManyRequests");
            assert.equal(none.headers.get("retry-after"), null);
            assert.equal((await call("GET", list)).status, 200);
        });
    });

    describe("listing and out-of-band changes", () => {
        it("lists the widgets of one resource group as { value }", async () => {
            await existing("w1");
            await existing("w2");
            const otherGroup = `/subscriptions/${SUBSCRIPTION}/resourceGroups/other/providers/Test.Widgets/widgets/w3?api-version=${ARM_API_VERSION}`;
            server.setOperations(fixedOperations({ pollsToFinish: 0 }));
            assert.equal((await call("PUT", otherGroup, { body: BODY })).status, 201);
            const list = await call("GET", `${COLLECTION}?api-version=${ARM_API_VERSION}`);
            assert.equal(list.status, 200);
            assert.deepEqual(list.json.value.map((item: { name: string }) => item.name).sort(), ["w1", "w2"]);
            assert.equal(list.json.nextLink, undefined);
            assert.equal(server.resources().length, 3);
        });

        it("mutate and remove change what the API shows, as another tool would", async () => {
            const created = await existing("w1");
            // A JSON merge-patch of what GET shows: null removes.
            server.mutate(created.json.id, { tags: { by: "portal" }, properties: { size: 9, color: null } });
            const read = await call("GET", widget("w1"));
            assert.deepEqual(read.json.tags, { team: "a", by: "portal" });
            assert.deepEqual(read.json.properties, { size: 9, provisioningState: "Succeeded" });
            server.mutate("w1", { properties: { provisioningState: "Failed" } });
            assert.equal((await call("GET", widget("w1"))).json.properties.provisioningState, "Failed");
            assert.throws(() => server.mutate("w1", { name: "other" }), /cannot change 'name'/);
            server.remove("w1");
            assert.equal((await call("GET", widget("w1"))).status, 404);
            assert.equal((await call("DELETE", widget("w1"))).status, 204);
            assert.deepEqual([server.counts().creates, server.counts().live], [1, 0]);
            assert.throws(() => server.remove("w1"), /no widget 'w1'/);
        });
    });
});
