// The dialect-server kit over real HTTP: each fault kind does to a real client what its name says (a lost
// answer after the effect, a body cut after the headers, a throttle rendered by the dialect, a 5xx that
// does nothing), the body cap, strays and bad credentials are counted, and the fault and operation plans
// are deterministic. Plain fetch against a toy dialect whose handler counts its effects.

import { strict as assert } from "node:assert";
import { request as httpRequest } from "node:http";
import {
    DEFAULT_OPERATION,
    FAULT_KINDS,
    type Fault,
    type FaultPlan,
    fixedOperations,
    formatRetryAfter,
    type KitRequest,
    type KitServer,
    MAX_BODY_BYTES,
    noFaults,
    randomFaults,
    scriptedFaults,
    scriptedOperations,
    startServer,
} from "./kit";

const TOKEN = "Bearer kit-token";

interface Toy {
    readonly server: KitServer;
    readonly handled: KitRequest[];
    readonly throttles: Array<{ fault: Fault; operation: string }>;
}

/** A toy dialect: GET/POST /things, GET /things/<id>; every handled request is recorded (its effect). */
async function startToy(faults?: FaultPlan): Promise<Toy> {
    const handled: KitRequest[] = [];
    const throttles: Array<{ fault: Fault; operation: string }> = [];
    const server = await startServer({
        ...(faults ? { faults } : {}),
        classify: (method, path) => {
            if (path === "/things") return method === "POST" ? "create" : method === "GET" ? "list" : undefined;
            if (/^\/things\/[^/]+$/.test(path) && method === "GET") return "get";
            return undefined;
        },
        authenticate: (request) => request.headers.authorization === TOKEN,
        unauthorized: () => ({
            status: 401,
            headers: { "www-authenticate": 'Bearer realm="toy"' },
            body: { error: "toy-unauthorized" },
        }),
        renderThrottle: (fault, operation) => {
            throttles.push({ fault, operation });
            return {
                status: 429,
                headers: { "x-toy-throttle": `${fault.hint}/${fault.seconds}` },
                body: { operation },
            };
        },
        handler: (request) => {
            handled.push(request);
            if (request.path === "/things/bodyless") return { status: 204 };
            if (request.path === "/things/empty") return { status: 200 };
            return {
                status: 200,
                body: { handled: handled.length, echo: request.body ?? null, padding: "x".repeat(4000) },
            };
        },
    });
    return { server, handled, throttles };
}

// biome-ignore lint/suspicious/noExplicitAny: tests read JSON of several shapes
async function json(answer: Response): Promise<any> {
    return answer.json();
}

function get(toy: Toy, path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${toy.server.url}${path}`, { ...init, headers: { authorization: TOKEN, ...init.headers } });
}

function post(toy: Toy, path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${toy.server.url}${path}`, {
        method: "POST",
        body,
        headers: { authorization: TOKEN, "content-type": "application/json", ...headers },
    });
}

describe("dialect server kit", () => {
    let toy: Toy | undefined;
    afterEach(async () => {
        await toy?.server.close();
        toy = undefined;
    });

    describe("the harness", () => {
        it("hands the handler the method, path, query, headers and parsed JSON body, and sends its answer", async () => {
            toy = await startToy();
            const answer = await post(toy, "/things?a=1&b=two", JSON.stringify({ name: "w1" }), { "x-extra": "yes" });
            assert.equal(answer.status, 200);
            assert.equal(answer.headers.get("content-type"), "application/json");
            assert.deepEqual((await json(answer)).echo, { name: "w1" });
            const [seen] = toy.handled;
            assert.equal(seen?.method, "POST");
            assert.equal(seen?.path, "/things");
            assert.equal(seen?.query.get("b"), "two");
            assert.equal(seen?.headers["x-extra"], "yes");
            assert.equal(seen?.rawBody, '{"name":"w1"}');
            assert.equal(toy.server.stats().requests, 1);
        });

        it("answers 400 to a body that is not JSON, without handling it", async () => {
            toy = await startToy();
            const answer = await post(toy, "/things", "{not json");
            assert.equal(answer.status, 400);
            assert.equal(answer.headers.get("content-type"), "application/problem+json");
            assert.match((await json(answer)).detail, /not valid JSON/);
            assert.equal(toy.handled.length, 0);
        });

        it("answers 413 to a body over 1 MiB (declared or chunked), without handling it; 1 MiB exactly is read", async () => {
            toy = await startToy();
            const exactly = JSON.stringify("y".repeat(MAX_BODY_BYTES - 2));
            assert.equal(Buffer.byteLength(exactly), MAX_BODY_BYTES);
            assert.equal((await post(toy, "/things", exactly)).status, 200);
            const declared = await post(toy, "/things", JSON.stringify("y".repeat(MAX_BODY_BYTES)));
            assert.equal(declared.status, 413);
            const url = new URL(`${toy.server.url}/things`);
            const chunkedStatus = await new Promise<number>((resolve, reject) => {
                const sending = httpRequest(
                    {
                        host: url.hostname,
                        port: url.port,
                        path: "/things",
                        method: "POST",
                        headers: { authorization: TOKEN },
                    },
                    (answer) => {
                        answer.resume();
                        resolve(answer.statusCode ?? 0);
                    },
                );
                sending.on("error", reject);
                for (let i = 0; i < 5; i++) sending.write(Buffer.alloc(256 * 1024, 0x20));
                sending.end();
            });
            assert.equal(chunkedStatus, 413);
            assert.equal(toy.handled.length, 1);
            assert.equal(toy.server.stats().requests, 3);
        });

        it("answers 404 to a path the API does not have and counts it in requestsOutsideApi", async () => {
            toy = await startToy();
            const stray = await get(toy, "/admin/users");
            assert.equal(stray.status, 404);
            const wrongMethod = await fetch(`${toy.server.url}/things/1`, {
                method: "DELETE",
                headers: { authorization: TOKEN },
            });
            assert.equal(wrongMethod.status, 404);
            assert.equal(toy.handled.length, 0);
            assert.equal(toy.server.stats().requestsOutsideApi, 2);
            assert.equal(toy.server.stats().unauthorized, 0);
        });

        it("answers missing or wrong credentials with the dialect's answer and counts them, without handling", async () => {
            toy = await startToy(scriptedFaults([{ fault: { kind: "server-error", status: 500 }, times: 10 }]));
            const missing = await fetch(`${toy.server.url}/things`);
            assert.equal(missing.status, 401);
            assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="toy"');
            assert.deepEqual(await missing.json(), { error: "toy-unauthorized" });
            const wrong = await get(toy, "/things", { headers: { authorization: "Bearer nope" } });
            assert.equal(wrong.status, 401);
            const strayWithout = await fetch(`${toy.server.url}/elsewhere`);
            assert.equal(strayWithout.status, 401, "credentials are checked before the route is revealed");
            assert.equal(toy.handled.length, 0);
            const stats = toy.server.stats();
            assert.equal(stats.unauthorized, 3);
            assert.equal(stats.requestsOutsideApi, 1);
            assert.equal(stats.faultsInjected, 0, "faults apply to authenticated API requests only");
        });

        it("closes with keep-alive connections open", async () => {
            toy = await startToy();
            await (await get(toy, "/things")).text();
            await toy.server.close();
            await assert.rejects(get(toy, "/things"));
            await toy.server.close(); // a second close is harmless
        });
    });

    describe("faults", () => {
        it("lose-answer: the handler's effect happens, then the client gets a socket error", async () => {
            toy = await startToy(scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" } }]));
            await assert.rejects(post(toy, "/things", JSON.stringify({ name: "lost" })), (error: Error) => {
                assert.equal(error.name, "TypeError"); // fetch failed
                assert.match(String((error.cause as Error | undefined)?.message), /socket|closed|reset|hang up/i);
                return true;
            });
            assert.equal(toy.handled.length, 1, "the effect happened exactly once");
            assert.deepEqual(toy.handled[0]?.body, { name: "lost" });
            assert.equal(toy.server.stats().faultsInjected, 1);
            const after = await post(toy, "/things", "{}");
            assert.equal(after.status, 200, "the entry was used once");
            assert.equal(toy.handled.length, 2);
        });

        it("cut-answer: the status and headers arrive, the body is cut short", async () => {
            toy = await startToy(scriptedFaults([{ operation: "get", fault: { kind: "cut-answer" } }]));
            const answer = await get(toy, "/things/1");
            assert.equal(answer.status, 200);
            const declared = Number(answer.headers.get("content-length"));
            assert.ok(declared > 4000, `the whole length is announced (${declared})`);
            await assert.rejects(answer.text());
            assert.equal(toy.handled.length, 1, "handled before the answer was cut");
        });

        it("cut-answer of an answer with an empty body still breaks off the body", async () => {
            toy = await startToy(scriptedFaults([{ fault: { kind: "cut-answer" } }]));
            const answer = await get(toy, "/things/empty");
            assert.equal(answer.status, 200);
            await assert.rejects(answer.text());
            assert.equal(toy.handled.length, 1);
        });

        it("throttle: rendered by the dialect's callback with the fault and the operation; nothing handled", async () => {
            const fault: Fault = { kind: "throttle", hint: "http-date", seconds: 7 };
            toy = await startToy(scriptedFaults([{ operation: "list", fault }]));
            const answer = await get(toy, "/things");
            assert.equal(answer.status, 429);
            assert.equal(answer.headers.get("x-toy-throttle"), "http-date/7");
            assert.deepEqual(await answer.json(), { operation: "list" });
            assert.deepEqual(toy.throttles, [{ fault, operation: "list" }]);
            assert.equal(toy.handled.length, 0);
            assert.equal(toy.server.stats().faultsInjected, 1);
        });

        for (const status of [500, 502, 503, 504] as const) {
            it(`server-error ${status}: answered instead of handling (nothing done)`, async () => {
                toy = await startToy(scriptedFaults([{ method: "post", fault: { kind: "server-error", status } }]));
                const answer = await post(toy, "/things", "{}");
                assert.equal(answer.status, status);
                assert.match((await json(answer)).detail, /not handled/);
                assert.equal(toy.handled.length, 0);
                assert.equal((await post(toy, "/things", "{}")).status, 200);
                assert.equal(toy.handled.length, 1);
            });
        }

        it("slow: handled, and the whole answer still arrives", async () => {
            toy = await startToy(scriptedFaults([{ fault: { kind: "slow", ms: 5 } }]));
            const answer = await get(toy, "/things/1");
            assert.equal(answer.status, 200);
            assert.equal((await json(answer)).handled, 1);
            assert.equal(toy.server.stats().faultsInjected, 1);
        });

        it("setFaults replaces the plan of a running server", async () => {
            toy = await startToy();
            assert.equal((await get(toy, "/things")).status, 200);
            toy.server.setFaults(scriptedFaults([{ fault: { kind: "server-error", status: 503 } }]));
            assert.equal((await get(toy, "/things")).status, 503);
            toy.server.setFaults(noFaults());
            assert.equal((await get(toy, "/things")).status, 200);
        });
    });

    describe("fault plans", () => {
        const request = (operation: string, method = "GET") => ({ method, path: "/x", operation });

        it("scriptedFaults uses each entry `times` on its first matching requests, in order", () => {
            const e500: Fault = { kind: "server-error", status: 500 };
            const lose: Fault = { kind: "lose-answer" };
            const plan = scriptedFaults([
                { operation: "poll", fault: e500, times: 2 },
                { method: "POST", fault: lose },
            ]);
            assert.equal(plan.next(request("get")), undefined);
            assert.deepEqual(plan.next(request("poll")), e500);
            assert.deepEqual(plan.next(request("create", "POST")), lose);
            assert.equal(plan.next(request("create", "POST")), undefined);
            assert.deepEqual(plan.next(request("poll")), e500);
            assert.equal(plan.next(request("poll")), undefined);
        });

        it("randomFaults is deterministic per seed, keeps to its kinds and operations, and hits about `rate`", () => {
            const draw = (plan: FaultPlan, operation = "get") =>
                Array.from({ length: 2000 }, () => plan.next(request(operation)));
            const first = draw(randomFaults({ seed: 42, rate: 0.3 }));
            assert.deepEqual(draw(randomFaults({ seed: 42, rate: 0.3 })), first);
            assert.notDeepEqual(draw(randomFaults({ seed: 43, rate: 0.3 })), first);
            const hits = first.filter((fault) => fault !== undefined);
            assert.ok(hits.length > 500 && hits.length < 700, `about 30% of 2000 (${hits.length})`);
            assert.deepEqual(new Set(hits.map((fault) => fault?.kind)), new Set(FAULT_KINDS));
            const onlyThrottles = draw(randomFaults({ seed: 1, rate: 1, kinds: ["throttle"] }));
            assert.ok(onlyThrottles.every((fault) => fault?.kind === "throttle"));
            assert.ok(draw(randomFaults({ seed: 1, rate: 1, operations: ["poll"] })).every((f) => f === undefined));
            assert.ok(draw(randomFaults({ seed: 1, rate: 1, operations: ["poll"] }), "poll").every((f) => f));
        });
    });

    describe("operation plans and helpers", () => {
        it("fixedOperations fills the default { pollsToFinish: 2, outcome: succeeded }", () => {
            assert.deepEqual(DEFAULT_OPERATION, { pollsToFinish: 2, outcome: "succeeded" });
            const plan = fixedOperations({ outcome: "failed" });
            assert.deepEqual(plan.next("create"), { pollsToFinish: 2, outcome: "failed" });
            assert.deepEqual(plan.next("delete"), { pollsToFinish: 2, outcome: "failed" });
        });

        it("scriptedOperations uses each script once, for its kind when it names one, then the default", () => {
            const plan = scriptedOperations(
                { kind: "delete", outcome: "canceled" },
                { pollsToFinish: 0 },
                { resultLate: true },
            );
            assert.deepEqual(plan.next("create"), { pollsToFinish: 0, outcome: "succeeded" });
            assert.deepEqual(plan.next("delete"), { pollsToFinish: 2, outcome: "canceled" });
            assert.deepEqual(plan.next("update"), { pollsToFinish: 2, outcome: "succeeded", resultLate: true });
            assert.deepEqual(plan.next("create"), DEFAULT_OPERATION);
        });

        it("formatRetryAfter gives delay-seconds or an HTTP date that many seconds ahead", () => {
            const now = Date.parse("2030-01-01T00:00:00.250Z");
            assert.equal(formatRetryAfter(3, "seconds", now), "3");
            assert.equal(formatRetryAfter(2.1, "seconds", now), "3");
            assert.equal(formatRetryAfter(3, "http-date", now), "Tue, 01 Jan 2030 00:00:04 GMT");
        });
    });
});
