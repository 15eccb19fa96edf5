// Guards the task API client as a security boundary, against hand-made servers that misbehave the way a
// misconfigured API or something between us and it can: a task Location on another origin (handed back
// unfollowed by the client, whose operation id alone the greenlake dialect takes), a redirect
// to another origin (neither may receive the bearer token, the body or the Idempotency-Key), an answer
// far larger than any the API sends (read no further than MAX_RESPONSE_BYTES, and not retried), and
// error texts and JSON keys carrying the token (redacted before anything is cut). Servers listen on
// port 0 and are closed after each test; sleeps are fake.

import { strict as assert } from "node:assert";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { MAX_RESPONSE_BYTES, TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { CrossOriginError } from "../../../provider/tasks/errors/crossOriginError";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { TaskApiUnreachableError } from "../../../provider/tasks/errors/taskApiUnreachableError";
import { greenlakeDialect } from "../../../provider/tasks/protocol/dialects/greenlake";
import { FakeTime, REQUEST_TIMEOUT_MS, rejection, TOKEN } from "./support";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

interface Received {
    readonly method: string;
    readonly url: string;
    readonly authorization: string | undefined;
    readonly idempotencyKey: string | undefined;
}

describe("TaskApiClient as a security boundary", () => {
    const servers: Server[] = [];
    let time: FakeTime;

    beforeEach(() => {
        time = new FakeTime();
    });
    afterEach(async () => {
        for (const server of servers.splice(0)) {
            server.closeAllConnections();
            server.close();
        }
    });

    /** A server on port 0 answering with `handler`; records every request it receives. */
    async function serve(handler: Handler): Promise<{ url: string; received: Received[] }> {
        const received: Received[] = [];
        const server = createServer((request, response) => {
            received.push({
                method: request.method ?? "",
                url: request.url ?? "",
                authorization: request.headers.authorization,
                idempotencyKey: request.headers["idempotency-key"] as string | undefined,
            });
            request.resume();
            handler(request, response);
        });
        servers.push(server);
        server.listen(0, "127.0.0.1");
        await once(server, "listening");
        return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
    }

    function clientOf(baseUrl: string): TaskApiClient {
        return new TaskApiClient({
            baseUrl,
            token: TOKEN,
            clock: time.clock,
            sleep: time.sleep,
            random: () => 0.5,
            timeout: time.timeout,
            requestTimeoutMs: REQUEST_TIMEOUT_MS,
            maxAttempts: 3,
        });
    }

    it("refuses a task Location on another origin: the token, body and key never go there", async () => {
        const elsewhere = await serve((_, response) => response.end("{}"));
        const api = await serve((_, response) => {
            response.writeHead(202, { location: `${elsewhere.url}/data-services/v1beta1/async-operations/x` });
            response.end(JSON.stringify({ taskUri: "x" }));
        });
        const client = clientOf(api.url);
        // The client hands the Location back unfollowed; the greenlake dialect takes only the operation's
        // id from it (as HPE's provider keeps only its path.Base) and looks at it on the API's own origin.
        const accepted = await client.send({
            method: "POST",
            path: "/datastores",
            body: { a: 1 },
            idempotencyKey: "k-1",
        });
        assert.equal(accepted.location, `${elsewhere.url}/data-services/v1beta1/async-operations/x`);
        const dialect = greenlakeDialect();
        const submitted = dialect.submitted("create", { status: 202, header: accepted.header, body: accepted.body }, 0);
        assert.ok(submitted.kind === "operation", inspect(submitted));
        const poll = dialect.poll(submitted.handle);
        assert.equal(poll.path, "/data-services/v1beta1/async-operations/x", "a path: sent to the API's origin");
        await client.send({ method: poll.method, path: poll.path });
        const error = await rejection(client.send({ method: "GET", path: String(accepted.location) }));
        assert.ok(error instanceof CrossOriginError, inspect(error));
        assert.deepEqual(elsewhere.received, []);
        assert.equal(api.received.length, 2, "the POST once, and the look at the operation on the API's origin");
    });

    it("refuses to be pointed at another origin by a path given as an absolute URL", async () => {
        const elsewhere = await serve((_, response) => response.end("{}"));
        const api = await serve((_, response) => response.end("{}"));
        const error = await rejection(clientOf(api.url).send({ method: "GET", path: `${elsewhere.url}/x` }));
        assert.ok(error instanceof CrossOriginError, inspect(error));
        assert.deepEqual(elsewhere.received, []);
        assert.deepEqual(api.received, []);
    });

    it("follows no redirect: a 302 to another origin never reaches it", async () => {
        const elsewhere = await serve((_, response) => response.end("{}"));
        const api = await serve((_, response) => {
            response.writeHead(302, { location: `${elsewhere.url}/stolen` });
            response.end();
        });
        const error = await rejection(clientOf(api.url).send({ method: "GET", path: "/datastores" }));
        assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
        assert.deepEqual(elsewhere.received, []);
        assert.ok(api.received.every((r) => r.authorization === `Bearer ${TOKEN}`));
    });

    it("stops reading an answer past MAX_RESPONSE_BYTES, without retrying, saying so", async () => {
        let written = 0;
        const api = await serve((_, response) => {
            response.writeHead(200, { "content-type": "application/json" });
            const chunk = Buffer.alloc(64 * 1024, 0x20);
            const pump = (): void => {
                while (written <= MAX_RESPONSE_BYTES * 4) {
                    written += chunk.length;
                    if (!response.write(chunk)) {
                        response.once("drain", pump);
                        return;
                    }
                }
                response.end();
            };
            response.on("error", () => undefined);
            pump();
        });
        const error = await rejection(clientOf(api.url).send({ method: "GET", path: "/datastores" }));
        assert.ok(error instanceof MalformedResponseError, inspect(error));
        assert.match(error.message, new RegExp(`larger than ${MAX_RESPONSE_BYTES} bytes`));
        assert.equal(api.received.length, 1, "not retried");
        assert.ok(written < MAX_RESPONSE_BYTES * 4, "the client stopped reading; the server did not send it all");
    });

    it("refuses an answer whose declared length is too large before reading it", async () => {
        const api = await serve((_, response) => {
            response.writeHead(200, { "content-length": String(MAX_RESPONSE_BYTES + 1) });
            response.write("{");
        });
        const error = await rejection(clientOf(api.url).send({ method: "GET", path: "/datastores" }));
        assert.ok(error instanceof MalformedResponseError, inspect(error));
        assert.equal(api.received.length, 1);
    });

    it("redacts the token from a server's error text before cutting it to length", async () => {
        // 190 characters, then the token: a cut at 200 characters would leave its first 10 in clear.
        const api = await serve((_, response) => {
            response.writeHead(400, { "content-type": "text/plain" });
            response.end(`${"x".repeat(190)}${TOKEN} and more`);
        });
        const error = await rejection(clientOf(api.url).send({ method: "GET", path: "/datastores" }));
        assert.ok(error instanceof TaskApiError, inspect(error));
        assert.ok(!error.message.includes(TOKEN.slice(0, 6)), error.message);
        assert.match(error.message, /x{190}\[redac/);
    });

    it("redacts the token from the keys of an error body, not only from its values", async () => {
        const api = await serve((_, response) => {
            response.writeHead(400, { "content-type": "application/json" });
            response.end(JSON.stringify({ error: "bad_request", message: "no", [TOKEN]: { [`k-${TOKEN}`]: 1 } }));
        });
        const error = await rejection(clientOf(api.url).send({ method: "GET", path: "/datastores" }));
        assert.ok(error instanceof TaskApiError, inspect(error));
        const logged = inspect(error, { depth: 10 });
        assert.ok(!logged.includes(TOKEN), logged);
        assert.deepEqual(error.body, { error: "bad_request", message: "no", "[redacted]": { "k-[redacted]": 1 } });
    });
});
