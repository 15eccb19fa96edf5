// Guards the defensive parsing of answers (provider/tasks/client/answerBody.ts, issue 18 §2): JSON nested
// deeper than MAX_JSON_DEPTH is refused before JSON.parse or any walk sees it, counting only brackets
// outside strings; the walk that redacts the token from error bodies is depth-bounded; and through the
// client, an error status whose body is nested 100,000 levels or too large to read is still a TaskApiError
// with that status. Pure, plus a node:http server on port 0.

import { strict as assert } from "node:assert";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import {
    MAX_JSON_DEPTH,
    MAX_RESPONSE_BYTES,
    mapStrings,
    nestedDeeperThan,
    parseJson,
} from "../../../provider/tasks/client/answerBody";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { FakeTime, REQUEST_TIMEOUT_MS, rejection, TOKEN } from "./support";

const nested = (depth: number, open = "[", close = "]") => `${open.repeat(depth)}${close.repeat(depth)}`;

describe("answer bodies (issue 18 §2: defensive parsing)", () => {
    describe("nestedDeeperThan", () => {
        it("counts arrays and objects, up to the limit and one past it", () => {
            assert.equal(nestedDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH), false);
            assert.equal(nestedDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH), true);
            assert.equal(nestedDeeperThan('{"a":{"b":[1,{"c":2}]}}', 3), true);
            assert.equal(nestedDeeperThan('{"a":{"b":[1,{"c":2}]}}', 4), false);
        });

        it("ignores brackets inside strings, escaped quotes included", () => {
            const text = JSON.stringify({ message: `${"[".repeat(1000)} \\" {{{ "`, nested: [[1]] });
            assert.equal(nestedDeeperThan(text, 3), false);
        });

        it("takes 100,000 levels in one pass without a RangeError", () => {
            assert.equal(nestedDeeperThan(nested(100_000), MAX_JSON_DEPTH), true);
            assert.equal(nestedDeeperThan(nested(100_000, '{"a":', "}"), MAX_JSON_DEPTH), true);
        });
    });

    describe("parseJson", () => {
        it("parses, refuses deep nesting unparsed, and tells text that is not JSON", () => {
            assert.deepEqual(parseJson('{"a":[1]}'), { value: { a: [1] } });
            assert.deepEqual(parseJson(""), { value: undefined });
            assert.deepEqual(parseJson("{nope"), { notJson: true });
            const refused = parseJson(nested(100_000));
            assert.ok("refused" in refused && /nested deeper than 64 levels/.test(refused.refused));
        });
    });

    describe("mapStrings", () => {
        it("maps every string, keys included", () => {
            assert.deepEqual(
                mapStrings({ a: ["x", { b: "y" }], n: 1, z: null }, (s) => s.toUpperCase()),
                { A: ["X", { B: "Y" }], N: 1, Z: null },
            );
        });

        it("stops at MAX_JSON_DEPTH instead of overflowing the stack", () => {
            let deep: unknown = "secret";
            for (let i = 0; i < 100_000; i++) deep = [deep];
            const mapped = mapStrings(deep, (s) => s);
            let depth = 0;
            for (let value = mapped; Array.isArray(value); value = value[0]) depth++;
            assert.equal(depth, MAX_JSON_DEPTH);
        });
    });

    describe("through the client: an error status is a TaskApiError with that status, whatever its body", () => {
        async function answering(status: number, body: string | (() => Buffer)) {
            const server = createServer((request, response) => {
                request.resume();
                response.writeHead(status, { "content-type": "application/json" });
                response.end(typeof body === "string" ? body : body());
            });
            server.listen(0, "127.0.0.1");
            await once(server, "listening");
            const time = new FakeTime();
            const client = new TaskApiClient({
                baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
                token: TOKEN,
                clock: time.clock,
                sleep: time.sleep,
                timeout: time.timeout,
                requestTimeoutMs: REQUEST_TIMEOUT_MS,
                maxAttempts: 1,
            });
            try {
                return await rejection(client.send({ method: "POST", path: "/x", body: {} }));
            } finally {
                server.closeAllConnections();
                server.close();
            }
        }

        for (const status of [400, 409, 422, 500]) {
            it(`${status} with a body nested 100,000 levels`, async () => {
                const error = await answering(status, nested(100_000, '{"error":', "}"));
                assert.ok(error instanceof TaskApiError, inspect(error));
                assert.equal(error.status, status);
                assert.equal(error.body, undefined);
                assert.match(error.apiMessage, /\(the body is nested deeper than 64 levels/);
            });
        }

        it("409 with a body larger than any answer of the API", async () => {
            const error = await answering(409, () => Buffer.alloc(MAX_RESPONSE_BYTES + 10, 0x20));
            assert.ok(error instanceof TaskApiError, inspect(error));
            assert.equal(error.status, 409);
            assert.match(error.apiMessage, new RegExp(`its body is larger than ${MAX_RESPONSE_BYTES} bytes`));
        });
    });
});
