// What the client does for the dialects of the async engine: their headers go out (never replacing the
// credentials), a request the dialect calls repeatable is retried after an unknown outcome and one it
// does not is not, a monitor whose HTTP code is its status gets its error answers back, and error
// bodies in Azure's, Google's and AWS's shapes give their code and message (with the token redacted).
// The server is a recorded script of answers: the client is what is under test.

import { strict as assert } from "node:assert";
import { seededRandom } from "../../../provider/shared/random";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { FakeTime, rejection, TOKEN } from "./support";

const BASE = "http://api.test";

/** A client whose fetch answers from `script` in turn, recording each request. */
function scripted(script: Array<() => Response>) {
    const sent: Array<{ method: string; headers: Headers }> = [];
    const time = new FakeTime();
    const client = new TaskApiClient({
        baseUrl: BASE,
        token: TOKEN,
        clock: time.clock,
        sleep: time.sleep,
        timeout: time.timeout,
        random: seededRandom(1),
        fetch: async (_input, init) => {
            sent.push({ method: init?.method ?? "GET", headers: new Headers(init?.headers) });
            const next = script.shift();
            if (!next) throw new Error("no more answers scripted");
            return next();
        },
    });
    return { client, sent };
}

const json =
    (status: number, body: unknown, headers: Record<string, string> = {}) =>
    () =>
        new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

describe("TaskApiClient for the dialects", () => {
    it("sends the dialect's headers, but never lets them replace the credentials", async () => {
        const { client, sent } = scripted([json(200, {})]);
        await client.send({
            method: "POST",
            path: "/",
            body: {},
            headers: { "X-Amz-Target": "CloudApiService.GetResource", Authorization: "Bearer stolen" },
        });
        assert.equal(sent[0]?.headers.get("x-amz-target"), "CloudApiService.GetResource");
        assert.equal(sent[0]?.headers.get("authorization"), `Bearer ${TOKEN}`);
    });

    it("retries a PUT the dialect calls repeatable after a 500, and not one it does not", async () => {
        const repeatable = scripted([json(500, {}), json(201, { id: "w1" })]);
        const answer = await repeatable.client.send({ method: "PUT", path: "/widgets/w1", body: {}, repeatable: true });
        assert.equal(answer.status, 201);
        assert.equal(repeatable.sent.length, 2);
        const once = scripted([json(500, {}), json(201, { id: "w1" })]);
        const error = await rejection(once.client.send({ method: "PUT", path: "/widgets/w1", body: {} }));
        assert.ok(error instanceof TaskApiError && error.status === 500);
        assert.equal(once.sent.length, 1);
    });

    it("hands back a 4xx as an answer when asked (a monitor whose code is its status), never a 5xx", async () => {
        const { client } = scripted([
            json(409, { error: { code: "Conflict", message: "in use" } }, { "retry-after": "3" }),
        ]);
        const answer = await client.send({ method: "GET", path: "/loc/1", acceptErrors: true, repeatable: true });
        assert.deepEqual(
            [answer.status, answer.body, answer.header("Retry-After")],
            [409, { error: { code: "Conflict", message: "in use" } }, "3"],
        );
        const failing = scripted(Array(6).fill(json(500, {})));
        assert.ok(
            (await rejection(failing.client.send({ method: "GET", path: "/loc/1", acceptErrors: true }))) instanceof
                TaskApiError,
        );
    });

    it("reads code and message from Azure's, Google's and AWS's error bodies, with the token redacted", async () => {
        for (const [body, code, message] of [
            [
                { error: { code: "QuotaExceeded", message: `no room for ${TOKEN}` } },
                "QuotaExceeded",
                "no room for [redacted]",
            ],
            [{ error: { code: 409, status: "ALREADY_EXISTS", message: "exists" } }, "ALREADY_EXISTS", "exists"],
            [
                { __type: "com.amazonaws.cloudcontrol#AlreadyExistsException", Message: "taken" },
                "com.amazonaws.cloudcontrol#AlreadyExistsException",
                "taken",
            ],
        ] as const) {
            const { client } = scripted([json(409, body)]);
            const error = await rejection(client.send({ method: "POST", path: "/", body: {} }));
            assert.ok(error instanceof TaskApiError);
            assert.equal(error.code, code);
            assert.match(error.message, new RegExp(message.replace(/[[\]]/g, "\\$&")));
            assert.doesNotMatch(error.message, new RegExp(TOKEN.replace(/\./g, "\\.")));
        }
    });
});
