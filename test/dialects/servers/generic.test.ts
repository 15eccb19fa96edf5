// The generic dialect server's contract, checked with plain fetch: RFC 9110 202 + status monitor, the
// Idempotency-Key draft (400 / 422 / 409 / replay), Retry-After as seconds or an HTTP date, operations
// that fail, are canceled or whose result comes late, long-running PATCH and DELETE, the natural key
// `name`, and the counts (creates, duplicates, live) the conformance suites assert on.

import { strict as assert } from "node:assert";
import { type GenericServer, type GenericServerOptions, startGenericServer } from "./generic";
import { fixedOperations, scriptedFaults, scriptedOperations } from "./kit";

interface Reply {
    readonly status: number;
    readonly headers: Headers;
    // biome-ignore lint/suspicious/noExplicitAny: tests read JSON of several shapes
    readonly json: any;
}

interface CallOptions {
    readonly body?: unknown;
    readonly key?: string;
    readonly headers?: Record<string, string>;
    /** The Authorization header; the server's bearer token by default, none with null. */
    readonly auth?: string | null;
}

async function call(server: GenericServer, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    const auth = options.auth === undefined ? `Bearer ${server.token}` : options.auth;
    if (auth !== null) headers.authorization = auth;
    if (options.key !== undefined) headers["idempotency-key"] = options.key;
    if (options.body !== undefined) headers["content-type"] ??= "application/json";
    const answer = await fetch(`${server.url}${path}`, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await answer.text();
    return { status: answer.status, headers: answer.headers, json: text ? JSON.parse(text) : undefined };
}

const WIDGET = { name: "w1", size: 3 };

describe("generic dialect server", () => {
    let server: GenericServer | undefined;
    const start = async (options: GenericServerOptions = {}): Promise<GenericServer> => {
        server = await startGenericServer(options);
        return server;
    };
    afterEach(async () => {
        await server?.close();
        server = undefined;
    });

    /** Polls a monitor until it is no longer pending; returns the last answer and the polls it took. */
    async function settle(s: GenericServer, monitor: string): Promise<{ reply: Reply; polls: number }> {
        for (let polls = 1; polls <= 50; polls++) {
            const reply = await call(s, "GET", monitor);
            assert.equal(reply.status, 200);
            if (reply.json.status !== "pending") return { reply, polls };
        }
        throw new Error(`${monitor} still pending after 50 polls`);
    }

    describe("create: 202 + status monitor", () => {
        it("answers 202 with the monitor's Location and Retry-After; the monitor ends with the resource", async () => {
            const s = await start();
            const accepted = await call(s, "POST", "/widgets", { body: WIDGET, key: "k1" });
            assert.equal(accepted.status, 202);
            const monitor = accepted.headers.get("location") ?? "";
            assert.match(monitor, /^\/monitors\/[0-9a-f-]{36}$/);
            assert.equal(accepted.headers.get("retry-after"), "1");
            assert.equal(accepted.json.status, "pending");
            assert.equal(s.counts().live, 0, "nothing is live before the operation ends");
            assert.deepEqual((await call(s, "GET", "/widgets?name=w1")).json, { items: [] });

            const first = await call(s, "GET", monitor);
            assert.equal(first.json.status, "pending");
            assert.equal(first.headers.get("retry-after"), "1");
            assert.equal(first.headers.get("location"), null);
            const done = await call(s, "GET", monitor);
            assert.equal(done.status, 200);
            assert.equal(done.json.status, "succeeded");
            const resource = done.json.resourceLocation;
            assert.match(resource, /^\/widgets\/[0-9a-f-]{36}$/);
            assert.equal(done.headers.get("location"), resource);
            assert.equal(done.headers.get("retry-after"), null);

            const widget = await call(s, "GET", resource);
            assert.equal(widget.status, 200);
            assert.deepEqual(widget.json, { ...WIDGET, id: resource.split("/")[2] });
            assert.deepEqual(s.resources(), [widget.json]);
            const counts = s.counts();
            assert.deepEqual([counts.creates, counts.duplicates, counts.live], [1, 0, 1]);
        });

        it("refuses a create without a name or with an id (400 naming the field), nothing started", async () => {
            const s = await start();
            const nameless = await call(s, "POST", "/widgets", { body: { size: 1 }, key: "a" });
            assert.equal(nameless.status, 400);
            assert.match(nameless.json.detail, /name/);
            const withId = await call(s, "POST", "/widgets", { body: { name: "x", id: "mine" }, key: "b" });
            assert.equal(withId.status, 400);
            assert.match(withId.json.detail, /id/);
            assert.equal(s.operations().length, 0);
        });

        it("answers 404 to an unknown monitor", async () => {
            const s = await start();
            assert.equal((await call(s, "GET", "/monitors/nope")).status, 404);
        });
    });

    describe("Idempotency-Key (IETF draft)", () => {
        it("missing on POST -> 400 problem, nothing done", async () => {
            const s = await start();
            const reply = await call(s, "POST", "/widgets", { body: WIDGET });
            assert.equal(reply.status, 400);
            assert.equal(reply.headers.get("content-type"), "application/problem+json");
            assert.match(reply.json.type, /idempotency-key-missing$/);
            assert.equal(s.operations().length, 0);
        });

        it("same key while the operation runs -> 409 with Retry-After; afterwards the first answer replayed", async () => {
            const s = await start({ operations: fixedOperations({ pollsToFinish: 3 }) });
            const first = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            assert.equal(first.status, 202);
            const outstanding = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            assert.equal(outstanding.status, 409);
            assert.match(outstanding.json.type, /idempotency-key-outstanding$/);
            assert.equal(outstanding.headers.get("retry-after"), "1");
            // The 409 counted as a step of the operation: two polls finish a three-step operation.
            const { reply, polls } = await settle(s, first.headers.get("location") ?? "");
            assert.equal(polls, 2);
            assert.equal(reply.json.status, "succeeded");
            const replay = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            assert.equal(replay.status, 202);
            assert.equal(replay.headers.get("location"), first.headers.get("location"));
            assert.deepEqual(replay.json, first.json, "the first answer, as it was");
            assert.equal(s.counts().creates, 1);
            assert.equal(s.operations().length, 1);
        });

        it("same key with another body -> 422 (while running and after); member order does not matter", async () => {
            const s = await start({ operations: fixedOperations({ pollsToFinish: 1 }) });
            const first = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            const other = await call(s, "POST", "/widgets", { body: { ...WIDGET, size: 4 }, key: "k" });
            assert.equal(other.status, 422);
            assert.match(other.json.type, /idempotency-key-reused$/);
            await settle(s, first.headers.get("location") ?? "");
            assert.equal((await call(s, "POST", "/widgets", { body: { name: "w2" }, key: "k" })).status, 422);
            const reordered = await call(s, "POST", "/widgets", { body: { size: 3, name: "w1" }, key: "k" });
            assert.equal(reordered.status, 202);
            assert.equal(reordered.headers.get("location"), first.headers.get("location"));
        });

        it("a lost answer, then retries with the same key: 409 until done, then the replay; exactly one widget", async () => {
            const s = await start({
                faults: scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" } }]),
            });
            await assert.rejects(call(s, "POST", "/widgets", { body: WIDGET, key: "lost" }));
            const answers: number[] = [];
            let last: Reply | undefined;
            for (let i = 0; i < 5 && last?.status !== 202; i++) {
                last = await call(s, "POST", "/widgets", { body: WIDGET, key: "lost" });
                answers.push(last.status);
            }
            assert.deepEqual(answers, [409, 409, 202]);
            const { reply } = await settle(s, last?.headers.get("location") ?? "");
            assert.equal(reply.json.status, "succeeded");
            assert.deepEqual([s.counts().creates, s.counts().duplicates, s.counts().live], [1, 0, 1]);
            assert.equal(s.counts().faultsInjected, 1);
        });

        it("a refusal is replayed too (the draft: success or an error), and keys are per method and path", async () => {
            const s = await start({ operations: fixedOperations({ pollsToFinish: 0 }) });
            await call(s, "POST", "/widgets", { body: WIDGET, key: "a" });
            const taken = await call(s, "POST", "/widgets", { body: WIDGET, key: "b" });
            assert.equal(taken.status, 409);
            const id = s.resources()[0]?.id;
            assert.equal((await call(s, "DELETE", `/widgets/${id}`)).status, 202);
            assert.equal(s.counts().live, 0);
            const again = await call(s, "POST", "/widgets", { body: WIDGET, key: "b" });
            assert.equal(again.status, 409, "the key's first answer, though the name is free now");
            assert.equal((await call(s, "POST", "/widgets", { body: WIDGET, key: "c" })).status, 202);
        });

        it("reads a quoted sf-string key and a bare token as the same key; the strict syntax refuses the bare one", async () => {
            let s = await start({ operations: fixedOperations({ pollsToFinish: 0 }) });
            const quoted = await call(s, "POST", "/widgets", { body: WIDGET, key: '"8e03978e-40d5"' });
            const bare = await call(s, "POST", "/widgets", { body: WIDGET, key: "8e03978e-40d5" });
            assert.equal(bare.status, 202);
            assert.equal(bare.headers.get("location"), quoted.headers.get("location"));
            assert.equal((await call(s, "POST", "/widgets", { body: WIDGET, key: '""' })).status, 400);
            await s.close();
            s = await start({ keySyntax: "sf-string" });
            const strict = await call(s, "POST", "/widgets", { body: WIDGET, key: "bare" });
            assert.equal(strict.status, 400);
            assert.match(strict.json.type, /idempotency-key-invalid$/);
        });

        it("PATCH and DELETE honour a key when sent: the retry is replayed, not done twice", async () => {
            const s = await start({ operations: fixedOperations({ pollsToFinish: 0 }) });
            await call(s, "POST", "/widgets", { body: WIDGET, key: "c" });
            const id = s.resources()[0]?.id;
            const deleted = await call(s, "DELETE", `/widgets/${id}`, { key: "d" });
            assert.equal(deleted.status, 202);
            const retried = await call(s, "DELETE", `/widgets/${id}`, { key: "d" });
            assert.equal(retried.status, 202);
            assert.equal(retried.headers.get("location"), deleted.headers.get("location"));
            assert.equal((await call(s, "DELETE", `/widgets/${id}`)).status, 404, "without the key: gone");
        });
    });

    describe("Retry-After", () => {
        it("as an HTTP date from the injected clock, when the server says so", async () => {
            const now = Date.parse("2030-01-01T00:00:00.000Z");
            const s = await start({ retryAfter: "http-date", retryAfterSeconds: 5, now: () => now });
            const accepted = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            assert.equal(accepted.headers.get("retry-after"), "Tue, 01 Jan 2030 00:00:05 GMT");
            const polled = await call(s, "GET", accepted.headers.get("location") ?? "");
            assert.equal(polled.headers.get("retry-after"), "Tue, 01 Jan 2030 00:00:05 GMT");
        });

        it("absent when the server says none", async () => {
            const s = await start({ retryAfter: "none" });
            const accepted = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            assert.equal(accepted.status, 202);
            assert.equal(accepted.headers.get("retry-after"), null);
        });

        it("throttling: 429 with the fault's hint as seconds, an HTTP date, none, or in the body", async () => {
            const now = Date.parse("2030-01-01T00:00:00.000Z");
            const throttle = (hint: "seconds" | "http-date" | "none" | "body") => ({
                fault: { kind: "throttle" as const, hint, seconds: 4 },
            });
            const s = await start({
                now: () => now,
                faults: scriptedFaults([
                    throttle("seconds"),
                    throttle("http-date"),
                    throttle("none"),
                    throttle("body"),
                ]),
            });
            const replies = [];
            for (let i = 0; i < 4; i++) replies.push(await call(s, "POST", "/widgets", { body: WIDGET, key: "k" }));
            assert.deepEqual(
                replies.map((reply) => [reply.status, reply.headers.get("retry-after"), reply.json.retryAfterSeconds]),
                [
                    [429, "4", undefined],
                    [429, "Tue, 01 Jan 2030 00:00:04 GMT", undefined],
                    [429, null, undefined],
                    [429, null, 4],
                ],
            );
            assert.equal(s.operations().length, 0, "a throttled request does nothing");
            assert.equal((await call(s, "POST", "/widgets", { body: WIDGET, key: "k" })).status, 202);
        });
    });

    describe("operation outcomes from the operation plan", () => {
        it("failed: the monitor says failed with an error, nothing is created, the name is free", async () => {
            const s = await start({ operations: scriptedOperations({ outcome: "failed", pollsToFinish: 1 }) });
            const accepted = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            const { reply } = await settle(s, accepted.headers.get("location") ?? "");
            assert.equal(reply.json.status, "failed");
            assert.equal(reply.json.error.code, "OperationFailed");
            assert.equal(reply.json.resourceLocation, undefined);
            assert.equal(reply.headers.get("location"), null);
            assert.deepEqual([s.counts().creates, s.counts().live], [0, 0]);
            assert.equal((await call(s, "POST", "/widgets", { body: WIDGET, key: "k2" })).status, 202);
        });

        it("canceled: the monitor says canceled, nothing is created", async () => {
            const s = await start({ operations: scriptedOperations({ outcome: "canceled" }) });
            const accepted = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            const { reply, polls } = await settle(s, accepted.headers.get("location") ?? "");
            assert.equal(polls, 2);
            assert.equal(reply.json.status, "canceled");
            assert.equal(s.counts().live, 0);
        });

        it("resultLate: the widget is not readable on the first GET after succeeded, then is", async () => {
            const s = await start({ operations: scriptedOperations({ resultLate: true }) });
            const accepted = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            const { reply } = await settle(s, accepted.headers.get("location") ?? "");
            assert.equal(reply.json.status, "succeeded");
            assert.equal((await call(s, "GET", reply.json.resourceLocation)).status, 404);
            assert.equal((await call(s, "GET", reply.json.resourceLocation)).status, 200);
            assert.equal(s.counts().live, 1);
        });

        it("resultLate on a list: the first list by name misses it, the next finds it", async () => {
            const s = await start({ operations: scriptedOperations({ resultLate: true, pollsToFinish: 0 }) });
            await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            assert.deepEqual((await call(s, "GET", "/widgets?name=w1")).json.items, []);
            assert.equal((await call(s, "GET", "/widgets?name=w1")).json.items.length, 1);
        });

        it("instantAnswers final: an operation done at acceptance answers 201 + the widget's Location", async () => {
            const s = await start({ instantAnswers: "final", operations: fixedOperations({ pollsToFinish: 0 }) });
            const created = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            assert.equal(created.status, 201);
            assert.equal(created.headers.get("location"), `/widgets/${created.json.id}`);
            assert.equal(created.json.name, "w1");
            const patched = await call(s, "PATCH", `/widgets/${created.json.id}`, { body: { size: 9 } });
            assert.deepEqual([patched.status, patched.json.size], [200, 9]);
            assert.equal((await call(s, "DELETE", `/widgets/${created.json.id}`)).status, 204);
        });

        it("absoluteLocations: Location and resourceLocation are absolute URLs on the server", async () => {
            const s = await start({ absoluteLocations: true, operations: fixedOperations({ pollsToFinish: 1 }) });
            const accepted = await call(s, "POST", "/widgets", { body: WIDGET, key: "k" });
            const monitor = accepted.headers.get("location") ?? "";
            assert.ok(monitor.startsWith(`${s.url}/monitors/`), monitor);
            const done = await call(s, "GET", monitor.slice(s.url.length));
            assert.ok(String(done.json.resourceLocation).startsWith(`${s.url}/widgets/`));
        });
    });

    describe("PATCH and DELETE are long-running too", () => {
        async function created(s: GenericServer, body: Record<string, unknown> = WIDGET): Promise<string> {
            const accepted = await call(s, "POST", "/widgets", { body, key: `k-${String(body.name)}` });
            const { reply } = await settle(s, accepted.headers.get("location") ?? "");
            return String(reply.json.resourceLocation);
        }

        it("PATCH: 202 + monitor; the old widget until it succeeds, then the merge-patched one", async () => {
            const s = await start();
            const widget = await created(s, { name: "p", size: 1, color: "red" });
            const accepted = await call(s, "PATCH", widget, {
                body: { size: 2, color: null },
                headers: { "content-type": "application/merge-patch+json" },
            });
            assert.equal(accepted.status, 202);
            assert.match(accepted.headers.get("location") ?? "", /^\/monitors\//);
            assert.equal((await call(s, "GET", widget)).json.size, 1);
            const busy = await call(s, "PATCH", widget, { body: { size: 3 } });
            assert.equal(busy.status, 409, "one operation at a time on a widget");
            assert.match(busy.json.type, /operation-in-progress$/);
            const { reply } = await settle(s, accepted.headers.get("location") ?? "");
            assert.equal(reply.json.status, "succeeded");
            assert.equal(reply.headers.get("location"), widget);
            const after = (await call(s, "GET", widget)).json;
            assert.deepEqual([after.size, after.color, after.name], [2, undefined, "p"]);
        });

        it("PATCH refuses an id (400), a name another widget has (409), and answers 404 for a gone widget", async () => {
            const s = await start();
            const a = await created(s, { name: "a" });
            await created(s, { name: "b" });
            assert.equal((await call(s, "PATCH", a, { body: { id: "x" } })).status, 400);
            assert.equal((await call(s, "PATCH", a, { body: { name: "b" } })).status, 409);
            assert.equal((await call(s, "PATCH", "/widgets/none", { body: { size: 1 } })).status, 404);
        });

        it("DELETE: 202 + monitor; the widget stays readable until it succeeds; then 404, and DELETE again 404", async () => {
            const s = await start();
            const widget = await created(s);
            const accepted = await call(s, "DELETE", widget);
            assert.equal(accepted.status, 202);
            assert.equal((await call(s, "GET", widget)).status, 200);
            const { reply } = await settle(s, accepted.headers.get("location") ?? "");
            assert.equal(reply.json.status, "succeeded");
            assert.equal(reply.json.resourceLocation, undefined);
            assert.equal(reply.headers.get("location"), null);
            assert.equal((await call(s, "GET", widget)).status, 404);
            const again = await call(s, "DELETE", widget);
            assert.equal(again.status, 404);
            assert.deepEqual([s.counts().creates, s.counts().live], [1, 0]);
        });

        it("a failed DELETE leaves the widget", async () => {
            const s = await start();
            const widget = await created(s);
            s.setOperations(scriptedOperations({ kind: "delete", outcome: "failed" }));
            const accepted = await call(s, "DELETE", widget);
            assert.equal((await settle(s, accepted.headers.get("location") ?? "")).reply.json.status, "failed");
            assert.equal((await call(s, "GET", widget)).status, 200);
        });
    });

    describe("the natural key and the counts", () => {
        it("a create whose name a live widget has -> 409, no Retry-After, not created", async () => {
            const s = await start({ operations: fixedOperations({ pollsToFinish: 0 }) });
            await call(s, "POST", "/widgets", { body: WIDGET, key: "1" });
            const taken = await call(s, "POST", "/widgets", { body: { ...WIDGET, size: 9 }, key: "2" });
            assert.equal(taken.status, 409);
            assert.match(taken.json.type, /name-taken$/);
            assert.equal(taken.headers.get("retry-after"), null);
            assert.deepEqual([s.counts().creates, s.counts().duplicates, s.counts().live], [1, 0, 1]);
        });

        it("a create whose name a pending create holds -> 409 with Retry-After, and the pending one advances", async () => {
            const s = await start({ operations: fixedOperations({ pollsToFinish: 2 }) });
            const first = await call(s, "POST", "/widgets", { body: WIDGET, key: "1" });
            const taken = await call(s, "POST", "/widgets", { body: WIDGET, key: "2" });
            assert.equal(taken.status, 409);
            assert.equal(taken.headers.get("retry-after"), "1");
            assert.equal((await settle(s, first.headers.get("location") ?? "")).polls, 1);
            assert.equal(s.counts().creates, 1);
        });

        it("a name a pending rename or create is giving away is held: 409, so never a duplicate", async () => {
            const s = await start({ operations: fixedOperations({ pollsToFinish: 2 }) });
            const a = await call(s, "POST", "/widgets", { body: { name: "a" }, key: "1" });
            const widget = (await settle(s, a.headers.get("location") ?? "")).reply.json.resourceLocation;
            const rename = await call(s, "PATCH", widget, { body: { name: "x" } });
            assert.equal(rename.status, 202);
            const create = await call(s, "POST", "/widgets", { body: { name: "x" }, key: "2" });
            assert.equal(create.status, 409);
            assert.equal(create.headers.get("retry-after"), "1");
            const pending = await call(s, "POST", "/widgets", { body: { name: "y" }, key: "3" });
            const renameToY = await call(s, "PATCH", widget, { body: { name: "y" } });
            assert.equal(renameToY.status, 409, "the widget is busy, and y is being created");
            await settle(s, rename.headers.get("location") ?? "");
            assert.equal((await call(s, "PATCH", widget, { body: { name: "y" } })).status, 409);
            await settle(s, pending.headers.get("location") ?? "");
            assert.deepEqual(
                s
                    .resources()
                    .map((item) => item.name)
                    .sort(),
                ["x", "y"],
            );
            assert.equal(s.counts().duplicates, 0);
        });

        it("allowDuplicateNames: a second widget of a name is accepted and counted as a duplicate", async () => {
            const s = await start({ allowDuplicateNames: true, operations: fixedOperations({ pollsToFinish: 0 }) });
            assert.equal((await call(s, "POST", "/widgets", { body: WIDGET, key: "1" })).status, 202);
            assert.equal((await call(s, "POST", "/widgets", { body: WIDGET, key: "2" })).status, 202);
            assert.equal((await call(s, "POST", "/widgets", { body: { name: "other" }, key: "3" })).status, 202);
            assert.deepEqual([s.counts().creates, s.counts().duplicates, s.counts().live], [3, 1, 3]);
            assert.equal((await call(s, "GET", "/widgets?name=w1")).json.items.length, 2);
        });

        it("lists by name, or everything without one; pending creates are not listed", async () => {
            const s = await start({ operations: scriptedOperations({ pollsToFinish: 0 }, { pollsToFinish: 0 }) });
            await call(s, "POST", "/widgets", { body: { name: "a" }, key: "1" });
            await call(s, "POST", "/widgets", { body: { name: "b" }, key: "2" });
            await call(s, "POST", "/widgets", { body: { name: "c" }, key: "3" }); // still pending
            const named = (await call(s, "GET", "/widgets?name=b")).json.items;
            assert.deepEqual(
                named.map((item: { name: string }) => item.name),
                ["b"],
            );
            const all = (await call(s, "GET", "/widgets")).json.items;
            assert.deepEqual(
                all.map((item: { name: string }) => item.name),
                ["a", "b"],
            );
        });

        it("mutate and remove act out of band: GET sees the drift, then the deletion; an update then fails", async () => {
            const s = await start({ operations: fixedOperations({ pollsToFinish: 1 }) });
            const accepted = await call(s, "POST", "/widgets", { body: WIDGET, key: "1" });
            const widget = (await settle(s, accepted.headers.get("location") ?? "")).reply.json.resourceLocation;
            const id = widget.split("/")[2];
            s.mutate(id, { size: 42, id: "ignored" });
            assert.deepEqual((await call(s, "GET", widget)).json, { ...WIDGET, size: 42, id });
            const update = await call(s, "PATCH", widget, { body: { size: 1 } });
            s.remove(id);
            assert.equal((await call(s, "GET", widget)).status, 404);
            const { reply } = await settle(s, update.headers.get("location") ?? "");
            assert.deepEqual([reply.json.status, reply.json.error?.code], ["failed", "NotFound"]);
            assert.deepEqual([s.counts().live, s.resources().length], [0, 0]);
            assert.throws(() => s.remove(id), /no live widget/);
        });

        it("counts unauthorized requests (401 + WWW-Authenticate) and requests outside the API (404)", async () => {
            const s = await start();
            const missing = await call(s, "GET", "/widgets", { auth: null });
            assert.equal(missing.status, 401);
            assert.match(missing.headers.get("www-authenticate") ?? "", /^Bearer/);
            assert.equal((await call(s, "POST", "/widgets", { body: WIDGET, key: "k", auth: "Bearer x" })).status, 401);
            assert.equal((await call(s, "PUT", "/widgets/x", { body: WIDGET })).status, 404);
            assert.equal((await call(s, "GET", "/monitors")).status, 404);
            const counts = s.counts();
            assert.deepEqual([counts.unauthorized, counts.requestsOutsideApi, counts.requests], [2, 2, 4]);
            assert.equal(s.operations().length, 0);
        });
    });
});
