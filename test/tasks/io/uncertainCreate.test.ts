// Guards a create whose POST had an attempt of unknown outcome and whose retry was then refused (issue 18,
// invariant 4 of the chaos suite: findings 4-state-5xx-then-400-leaves-zombie,
// 4-state-5xx-then-409-refuses-own-datastore, 4-state-cut-answer-then-429-leaves-zombie). A gateway in
// front of the task API server of the contract forwards the first POST, so the API makes the datastore,
// and answers it 502/504 or cuts its answer off; it answers the client's retry (same Idempotency-Key)
// itself: 400, 409 as a server does while a request with that key is still in progress (the IETF
// Idempotency-Key draft), or 429 with a Retry-After past the deadline. The create's outcome is then
// unknown: recorded as a pending create (partial state, not tainted, no datastore id), never as nothing,
// never as someone else's datastore; the next up resolves it by replaying the request as it was sent
// (its key and body, even when the program's createToken or size changed since, whose changes the same
// update then sends; by the key the engine sent it with when the program gave no createToken) and records
// the one datastore. A POST refused outright (no earlier attempt of unknown outcome) stays a plain refusal.
// Fake time.

import { strict as assert } from "node:assert";
import type { ServerResponse } from "node:http";
import { inspect } from "node:util";
import type { TaskApiServer } from "../../../provider/taskApiServer/taskApiServer";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { diffDatastore } from "../../../provider/tasks/logic/datastoreDiff";
import type { RawInputs } from "../../../provider/tasks/logic/datastoreState";
import { datastoreInputs, FakeTime, GIB, rejection, Servers } from "../client/support";
import { closeHostileApis, type HostileApi, hostileApi, json, lifecycleOf, type Received } from "./hostileApi";

/** What the gateway does with the n-th POST it receives. */
type PostAnswer = (request: Received, response: ServerResponse) => Promise<void>;

describe("a create whose POST had an attempt of unknown outcome, then a refused retry", () => {
    const servers = new Servers();
    let server: TaskApiServer;
    let time: FakeTime;
    beforeEach(async () => {
        time = new FakeTime();
        server = await servers.start({ taskCompleteAfterPolls: 1 });
    });
    afterEach(async () => {
        await closeHostileApis();
        await servers.closeAll();
    });

    const inputs = () => ({ ...datastoreInputs(), createToken: "tok" }) as RawInputs;

    /** Sends a request on to the server of the contract, as the client sent it; resolves with its answer. */
    async function forward(request: Received): Promise<Response> {
        const headers: Record<string, string> = { authorization: request.authorization ?? "" };
        if (request.body) headers["content-type"] = "application/json";
        if (request.idempotencyKey) headers["idempotency-key"] = request.idempotencyKey;
        return await fetch(`${server.url}${request.url}`, {
            method: request.method,
            headers,
            ...(request.body ? { body: request.body } : {}),
        });
    }

    /** A gateway that answers the POSTs it receives with `posts` in turn, and forwards everything else. */
    async function gateway(posts: PostAnswer[]): Promise<HostileApi> {
        let seen = 0;
        return await hostileApi(async (request, response) => {
            const scripted = request.method === "POST" ? posts[seen++] : undefined;
            if (scripted) return await scripted(request, response);
            const answer = await forward(request);
            const headers: Record<string, string> = {};
            for (const name of ["content-type", "location", "retry-after"]) {
                const value = answer.headers.get(name);
                if (value !== null) headers[name] = value;
            }
            response.writeHead(answer.status, headers);
            response.end(Buffer.from(await answer.arrayBuffer()));
        });
    }

    /** The API makes the datastore; the gateway answers `status` (a gateway that lost the upstream). */
    const madeThenAnswered =
        (status: number): PostAnswer =>
        async (request, response) => {
            await (await forward(request)).arrayBuffer();
            json(response, status, { error: "bad_gateway", message: "upstream went away" });
        };

    /** The API makes the datastore; its answer is cut off halfway through the body. */
    const madeThenCut: PostAnswer = async (request, response) => {
        const answer = Buffer.from(await (await forward(request)).arrayBuffer());
        response.writeHead(202, { "content-type": "application/json", "content-length": String(answer.length) });
        response.write(answer.subarray(0, Math.floor(answer.length / 2)));
        setImmediate(() => response.destroy());
    };

    /** The gateway answers on its own, forwarding nothing. */
    const refused =
        (status: number, body: unknown, headers: Record<string, string> = {}): PostAnswer =>
        async (_request, response) => {
            json(response, status, body, headers);
        };

    const badRequest = refused(400, { error: "bad_request", message: "the request was refused" });
    const keyInProgress = refused(409, {
        error: "conflict",
        message: "a request with this Idempotency-Key is still in progress",
    });
    const throttledPastDeadline = refused(
        429,
        { error: "rate_limited", message: "slow down" },
        { "retry-after": "999999999" },
    );

    const cases: { readonly title: string; readonly posts: PostAnswer[] }[] = [
        { title: "answered 502, then 400", posts: [madeThenAnswered(502), badRequest] },
        { title: "answered 504, then 409 (the key still in progress)", posts: [madeThenAnswered(504), keyInProgress] },
        { title: "answer cut off, then 429 past the deadline", posts: [madeThenCut, throttledPastDeadline] },
    ];

    for (const { title, posts } of cases) {
        it(`${title}: recorded as a pending create, which the next up resolves by the key to the one datastore`, async () => {
            const api = await gateway(posts);
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.create(inputs()));
            assert.ok(error instanceof PartialStateError, inspect(error));
            assert.match(error.message, /the create request's outcome is unknown/);
            assert.match(error.message, /finds it by replaying its createToken/);
            assert.equal(error.properties.tainted, false);
            assert.equal(error.properties.datastoreId, undefined);
            assert.equal(error.properties.createToken, "tok");
            const [made] = server.datastores();
            assert.equal(server.datastores().length, 1, "the API made the datastore on the first attempt");

            const { outs } = await lifecycle.update(error.properties as unknown as DatastoreOutputs, inputs());
            assert.equal(outs.datastoreId, made?.id);
            assert.equal(outs.tainted, false);
            assert.equal(server.datastores().length, 1, "no second datastore");
            const keys = server
                .requests()
                .filter((r) => r.method === "POST")
                .map((r) => [r.idempotencyKey, r.status]);
            assert.deepEqual(keys, [
                ["tok", 202],
                ["tok", 202],
            ]);
        });
    }

    it("the next up resumes it as it was sent (its key), then sends the program's changes to the one datastore", async () => {
        const api = await gateway([madeThenAnswered(502), badRequest]);
        const { lifecycle } = lifecycleOf(api.url, time);
        const error = await rejection(lifecycle.create(inputs()));
        assert.ok(error instanceof PartialStateError, inspect(error));
        const [made] = server.datastores();
        const changed = { ...inputs(), createToken: "tok-2", sizeInBytes: 32 * GIB } as RawInputs;
        // The engine resolves the pending create by replaying the request as it was sent (key "tok", 16 GiB),
        // then, in the same update, sends the program's size to what it made and records the program's token.
        const { outs } = await lifecycle.update(error.properties as unknown as DatastoreOutputs, changed);
        assert.equal(outs.datastoreId, made?.id, "its own datastore, not refused as someone else's");
        assert.equal(outs.tainted, false);
        assert.equal(outs.sizeInBytes, 32 * GIB);
        assert.equal(outs.createToken, "tok-2");
        assert.equal(server.datastores().length, 1);
        assert.equal(server.datastores()[0]?.capacityInBytes, 32 * GIB);
        const posts = server.requests().filter((r) => r.method === "POST");
        assert.deepEqual(
            posts.map((r) => [r.idempotencyKey, r.status]),
            [
                ["tok", 202],
                ["tok", 202],
            ],
            "replayed with the key it was sent with; the new token's keys are never sent",
        );
        const sent = api.received.filter((r) => r.method === "POST").map((r) => JSON.parse(r.body).sizeInBytes);
        // The first POST, its retry the gateway refused, and the replay of the next up.
        assert.deepEqual(sent, [16 * GIB, 16 * GIB, 16 * GIB], "replayed with the body it was sent with");
        assert.equal(server.requests().filter((r) => r.method === "PATCH").length, 1, "one resize");
        // The next up has nothing left to do.
        assert.equal(diffDatastore(outs, changed).changes, false);
    });

    it("a create sent without a token whose answer is lost is replayed by the key the engine sent it with: one datastore", async () => {
        const api = await gateway([madeThenAnswered(502)]);
        const { lifecycle } = lifecycleOf(api.url, time);
        const { outs } = await lifecycle.create(datastoreInputs() as RawInputs);
        const [made] = server.datastores();
        assert.equal(outs.datastoreId, made?.id);
        assert.equal(server.datastores().length, 1);
        const keys = server
            .requests()
            .filter((r) => r.method === "POST")
            .map((r) => r.idempotencyKey);
        assert.equal(keys.length, 2);
        assert.ok(keys[0] !== undefined && keys[0] === keys[1], `one key, sent twice: ${keys.join(", ")}`);
    });

    it("a pending create sent without a token is resumed by the key it was sent with, though the program has a createToken now", async () => {
        const api = await gateway([madeThenAnswered(502)]);
        // No retry in the client: the create ends with its outcome unknown.
        const { lifecycle } = lifecycleOf(api.url, time, { maxAttempts: 1 });
        const error = await rejection(lifecycle.create(datastoreInputs() as RawInputs));
        assert.ok(error instanceof PartialStateError, inspect(error));
        assert.match(error.message, /finds it by its natural key/);
        assert.equal(error.properties.tainted, false);
        assert.equal(error.properties.datastoreId, undefined);
        const [first] = server.requests().filter((r) => r.method === "POST");
        assert.ok(first?.idempotencyKey, "the engine sent the create with a key of its own");
        assert.equal(error.properties.createKey, first.idempotencyKey, "the key it was sent with is recorded");
        const [made] = server.datastores();
        const { outs } = await lifecycle.update(error.properties as unknown as DatastoreOutputs, inputs());
        assert.equal(outs.datastoreId, made?.id);
        assert.equal(outs.tainted, false);
        assert.equal(server.datastores().length, 1);
        assert.deepEqual(
            server
                .requests()
                .filter((r) => r.method === "POST")
                .map((r) => r.idempotencyKey),
            [first.idempotencyKey, first.idempotencyKey],
            "replayed by its own key; no POST with the new token's",
        );
    });

    it("a pending create keeps the key it was sent with when its resumption fails (the lookup refused)", async () => {
        const api = await gateway([madeThenAnswered(502), badRequest]);
        const { lifecycle } = lifecycleOf(api.url, time, { maxAttempts: 1 });
        const error = await rejection(lifecycle.create(inputs()));
        assert.ok(error instanceof PartialStateError, inspect(error));
        server.addFault({ match: { method: "GET" }, fault: { status: 500 } });
        const changed = { ...inputs(), createToken: "tok-2" } as RawInputs;
        const failed = await rejection(lifecycle.update(error.properties as unknown as DatastoreOutputs, changed));
        assert.ok(failed instanceof PartialStateError, inspect(failed));
        assert.equal(failed.properties.createToken, "tok");
        assert.equal(failed.properties.datastoreId, undefined);
    });

    it("a POST refused outright (no earlier attempt of unknown outcome) stays a refusal: nothing pending", async () => {
        const api = await gateway([badRequest]);
        const { lifecycle } = lifecycleOf(api.url, time);
        const error = await rejection(lifecycle.create(inputs()));
        assert.ok(error instanceof TaskApiError, inspect(error));
        assert.equal(error.status, 400);
        assert.deepEqual(server.datastores(), []);
    });
});
