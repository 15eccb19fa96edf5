// Guards what the task API client says about a retried request whose last answer is a refusal (issue 18,
// invariant 4 of the chaos suite: a POST answered 502/504, or left without an answer, after the API had
// made the datastore, then refused on its retry). The last answer speaks for that attempt only: when an
// earlier attempt may have been carried out (no answer, a 5xx or 408), the TaskApiError says so
// (`earlierOutcomeUnknown`, and its message), so the caller can record the outcome as unknown. A
// throttled attempt (429, 503 with Retry-After) was declined, nothing done: it leaves the refusal
// definite. Against the task API server of the contract, on fake time.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import { seededRandom } from "../../../provider/shared/random";
import type { Fault } from "../../../provider/taskApiServer/control";
import type { TaskApiServer } from "../../../provider/taskApiServer/taskApiServer";
import { mayHaveActed } from "../../../provider/tasks/client/retryPolicy";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { createBody, FakeTime, REQUEST_TIMEOUT_MS, rejection, Servers, START, TOKEN } from "./support";

const EARLIER = /An earlier attempt of this request got no definite answer, so the API may have carried it out/;

describe("TaskApiClient: a refusal after an attempt of unknown outcome", () => {
    const servers = new Servers();
    let server: TaskApiServer;
    let time: FakeTime;
    beforeEach(async () => {
        time = new FakeTime();
        server = await servers.start();
    });
    afterEach(() => servers.closeAll());

    function client(): TaskApiClient {
        return new TaskApiClient({
            baseUrl: server.url,
            token: TOKEN,
            clock: time.clock,
            sleep: time.sleep,
            timeout: time.timeout,
            random: seededRandom(7),
            requestTimeoutMs: REQUEST_TIMEOUT_MS,
        });
    }

    /** The POSTs' faults in turn, each once. */
    function posts(...faults: Fault[]): void {
        for (const fault of faults) server.addFault({ match: { method: "POST" }, fault });
    }

    /** A POST of a create with a key, refused in the end: its TaskApiError. */
    async function refusedCreate(body = createBody(), deadline?: number): Promise<TaskApiError> {
        const error = await rejection(
            client().send({ method: "POST", path: DATASTORES_PATH, body, idempotencyKey: "k1", deadline }),
        );
        assert.ok(error instanceof TaskApiError, inspect(error));
        return error;
    }

    it("a 502, then 400: the refusal says an earlier attempt may have been carried out", async () => {
        posts({ status: 502 });
        const error = await refusedCreate(createBody("ds19", { sizeInBytes: -1 }));
        assert.equal(error.status, 400);
        assert.equal(error.earlierOutcomeUnknown, true);
        assert.match(error.message, EARLIER);
    });

    it("no answer after the work, then 429 with a Retry-After past the deadline: the same", async () => {
        posts({ loseResponse: true }, { status: 429, retryAfterSeconds: 3600 });
        const error = await refusedCreate(createBody(), START + 60_000);
        assert.equal(error.status, 429);
        assert.equal(error.earlierOutcomeUnknown, true);
        assert.match(error.message, EARLIER);
        assert.equal(server.datastores().length, 1, "the API made the datastore on the first attempt");
    });

    it("a 504, then 409: the same (the client cannot tell the 504 did nothing)", async () => {
        await client().send({ method: "POST", path: DATASTORES_PATH, body: createBody(), idempotencyKey: "k0" });
        posts({ status: 504 });
        const error = await refusedCreate();
        assert.equal(error.status, 409);
        assert.equal(error.earlierOutcomeUnknown, true);
    });

    it("a refusal on the first attempt is definite", async () => {
        const error = await refusedCreate(createBody("ds19", { sizeInBytes: -1 }));
        assert.equal(error.status, 400);
        assert.equal(error.earlierOutcomeUnknown, false);
        assert.doesNotMatch(error.message, EARLIER);
    });

    for (const declined of [
        { status: 429, retryAfterSeconds: 1 },
        { status: 503, retryAfterSeconds: 1 },
    ] as const) {
        it(`a ${declined.status} with Retry-After (declined, nothing done), then 400: definite`, async () => {
            posts(declined);
            const error = await refusedCreate(createBody("ds19", { sizeInBytes: -1 }));
            assert.equal(error.status, 400);
            assert.equal(error.earlierOutcomeUnknown, false);
            assert.deepEqual(
                server.requests().map((r) => r.status),
                [declined.status, 400],
            );
        });
    }
});

describe("mayHaveActed", () => {
    it("is true after no answer, a 5xx or a 408", () => {
        assert.equal(mayHaveActed({ networkError: true }), true);
        for (const status of [408, 500, 502, 503, 504]) assert.equal(mayHaveActed({ status }), true, String(status));
    });

    it("is false after a declined request (429, 503 with Retry-After) and after any other status", () => {
        assert.equal(mayHaveActed({ status: 429 }), false);
        assert.equal(mayHaveActed({ status: 429, retryAfter: true }), false);
        assert.equal(mayHaveActed({ status: 503, retryAfter: true }), false);
        for (const status of [400, 401, 403, 404, 409, 410, 422]) {
            assert.equal(mayHaveActed({ status }), false, String(status));
        }
    });
});
