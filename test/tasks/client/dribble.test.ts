// Guards issue 18 §2 "a body that dribbles after the headers": a server that sends its headers, then one
// byte a second, and never finishes. The per-request timeout and the caller's abort must end the request
// while its body is being read, whatever fetch does with its own signal: undici stops passing an abort on
// to a body once its request object has been collected (it holds it weakly), which in a provider process
// that has run a while happens at any time. So each test collects garbage between the headers and the
// stop, as such a process would, and then proves the request ends and its connection is released. A real
// node:http server on port 0; the request timer is FakeTime's, fired by the test.

import { strict as assert } from "node:assert";
import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { TaskApiUnreachableError } from "../../../provider/tasks/errors/taskApiUnreachableError";
import { DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { FakeTime, REQUEST_TIMEOUT_MS, rejection, TOKEN } from "./support";

setFlagsFromString("--expose-gc");
/** A full garbage collection, as a long-running process has them. */
const collectGarbage = runInNewContext("gc") as () => void;

/** A server that answers every request with headers, then one byte a second, forever. */
interface Dribbler {
    readonly url: string;
    /** Resolves once the answer to the first request has sent its headers and at least one byte after them. */
    readonly dribbling: Promise<void>;
    /** Resolves once the connection of the first answer has closed (the client released it). */
    readonly released: Promise<void>;
    readonly server: Server;
}

async function dribbler(status = 200): Promise<Dribbler> {
    let dribbling = (): void => undefined;
    let released = (): void => undefined;
    const dribblingPromise = new Promise<void>((resolve) => {
        dribbling = resolve;
    });
    const releasedPromise = new Promise<void>((resolve) => {
        released = resolve;
    });
    const server = createServer((request, response: ServerResponse) => {
        request.resume();
        response.writeHead(status, { "content-type": "application/json" });
        response.write("{");
        const timer = setInterval(() => {
            response.write(" ");
            dribbling();
        }, 1000);
        response.on("close", () => {
            clearInterval(timer);
            released();
        });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        dribbling: dribblingPromise,
        released: releasedPromise,
        server,
    };
}

describe("TaskApiClient against a body that dribbles after the headers (issue 18 §2)", () => {
    let api: Dribbler;
    let time: FakeTime;
    let headersIn: Promise<void>;

    beforeEach(async () => {
        time = new FakeTime();
        api = await dribbler();
    });
    afterEach(() => {
        api.server.closeAllConnections();
        api.server.close();
    });

    function clientOf(): TaskApiClient {
        let headers = (): void => undefined;
        headersIn = new Promise<void>((resolve) => {
            headers = resolve;
        });
        return new TaskApiClient({
            baseUrl: api.url,
            token: TOKEN,
            clock: time.clock,
            sleep: time.sleep,
            timeout: time.timeout,
            requestTimeoutMs: REQUEST_TIMEOUT_MS,
            maxAttempts: 1,
            fetch: async (input, init) => {
                const response = await fetch(input, init);
                headers();
                return response;
            },
        });
    }

    /** Waits until the client is reading a body that keeps coming, then collects garbage. */
    async function midBody(): Promise<void> {
        await headersIn;
        await api.dribbling;
        collectGarbage();
        collectGarbage();
    }

    it("fails as timed out when the request timer fires mid-body, and releases the connection", async () => {
        const request = rejection(clientOf().send({ method: "GET", path: DATASTORES_PATH }));
        await midBody();
        assert.equal(time.fireTimers(), 1, "one request timer was running");
        const error = await request;
        assert.ok(error instanceof TaskApiUnreachableError, inspect(error));
        assert.equal(error.reason, `no answer within ${REQUEST_TIMEOUT_MS} ms`);
        await api.released;
    });

    it("a 409 whose body is cut short by the caller's abort is still a 409: a definite answer, not an unknown outcome", async () => {
        api.server.closeAllConnections();
        api.server.close();
        api = await dribbler(409);
        const controller = new AbortController();
        const request = rejection(
            clientOf().send({ method: "POST", path: DATASTORES_PATH, body: {}, signal: controller.signal }),
        );
        await midBody();
        controller.abort(new Error("interrupted by SIGINT"));
        const error = await request;
        assert.ok(error instanceof TaskApiError, inspect(error));
        assert.equal(error.status, 409);
        assert.match(error.apiMessage, /\(its body did not arrive: interrupted by SIGINT\)$/);
        await api.released;
    });

    it("rejects at once with the abort reason when the caller aborts mid-body, and releases the connection", async () => {
        const controller = new AbortController();
        const reason = new Error("interrupted by SIGINT");
        const request = rejection(clientOf().send({ method: "GET", path: DATASTORES_PATH, signal: controller.signal }));
        await midBody();
        controller.abort(reason);
        assert.equal(await request, reason);
        assert.equal(time.pendingTimerCount, 0, "the request timer was cancelled");
        await api.released;
    });
});
