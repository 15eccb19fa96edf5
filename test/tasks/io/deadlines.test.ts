// Guards issue 18 §2 "every operation has a deadline; every wait is clamped to what remains of it": a
// refresh (DatastoreLifecycle.read) against a task API that answers every request 429, with each form of
// Retry-After a server may send (0, 2, a number far too large for a timer, an HTTP date far ahead, one
// in the past, garbage). Each read must end by its deadline (timeouts.read, 5 minutes by default) with no
// more requests than the schedule allows: throttled retries wait at least the Retry-After and at least
// the backoff step, and a Retry-After beyond the deadline gives up at once with a message saying so. No
// sleep may be longer than what remains. Fake time; a real node:http server on port 0 that, past a cap
// far above every bound, stops throttling so that a client without a deadline still ends.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import { backoffBand, DEFAULT_POLL_SCHEDULE, doublingWaitMs } from "../../../provider/tasks/client/pollSchedule";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { CreateTokenSpentError } from "../../../provider/tasks/errors/createTokenSpentError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import type { RawInputs } from "../../../provider/tasks/logic/datastoreState";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { CLUSTER, datastoreInputs, FakeTime, HCI, rejection, START } from "../client/support";
import { closeHostileApis, hostileApi, json, lifecycleOf, list, operation, pathOf, resource } from "./hostileApi";

const ID = `${HCI}/${CLUSTER}/ds19`;
const PROPS: DatastoreOutputs = { ...datastoreInputs(), tainted: false, datastoreId: "d1" };
const READ_DEFAULT_MS = 5 * 60_000;
/** The client's attempts at a failure that is not throttling (its default). */
const MAX_ATTEMPTS = 6;

/**
 * The most requests a read can make in `deadlineMs` when every answer is 429 with a Retry-After of
 * `retryAfterMs`: each wait is at least max(Retry-After, the low end of its backoff band), the waits stop
 * once they reach the deadline (the last one clamped to it), and one request follows each wait.
 */
function requestBound(retryAfterMs: number, deadlineMs: number): number {
    let slept = 0;
    let waits = 0;
    while (slept < deadlineMs) {
        slept += Math.max(retryAfterMs, backoffBand(waits, DEFAULT_POLL_SCHEDULE).low);
        waits++;
    }
    return waits + 1;
}

describe("a read under permanent 429 ends by its deadline (issue 18 §2)", () => {
    let time: FakeTime;
    afterEach(closeHostileApis);
    beforeEach(() => {
        time = new FakeTime();
    });

    const httpDate = (ms: number) => new Date(ms).toUTCString();
    const forms: [
        name: string,
        header: () => string,
        expected: "backs off" | "gives up" | "counts failures",
        retryAfterMs: number,
    ][] = [
        ["0", () => "0", "backs off", 0],
        ["2", () => "2", "backs off", 2000],
        ["999999999", () => "999999999", "gives up", 999_999_999_000],
        ["an HTTP date ten years ahead", () => httpDate(START + 10 * 365 * 86_400_000), "gives up", 0],
        ["an HTTP date in the past", () => httpDate(START - 86_400_000), "backs off", 0],
        ["garbage", () => "soon, please", "counts failures", 0],
    ];

    for (const [name, header, expected, retryAfterMs] of forms) {
        it(`Retry-After: ${name}: ${expected}, within the deadline and the bound`, async () => {
            const bound =
                expected === "backs off"
                    ? requestBound(retryAfterMs, READ_DEFAULT_MS)
                    : expected === "gives up"
                      ? 1
                      : MAX_ATTEMPTS;
            const cap = bound + 50;
            const api = await hostileApi((_request, response) => {
                // Past the cap, an old client without a deadline is let go, so the test ends and fails on the count.
                if (api.received.length > cap) json(response, 200, list([]));
                else json(response, 429, { error: "rate_limited", message: "slow down" }, { "retry-after": header() });
            });
            const deadline = START + READ_DEFAULT_MS;
            time.onWait = (ms) => {
                assert.ok(ms <= deadline - time.now + 1e-6, `slept ${ms} ms with ${deadline - time.now} ms left`);
            };
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.read(ID, PROPS));
            assert.ok(error instanceof TaskApiError, inspect(error));
            assert.equal(error.status, 429);
            assert.ok(api.received.length <= bound, `${api.received.length} requests; the bound is ${bound}`);
            assert.ok(time.now <= deadline, `ended ${time.now - deadline} ms past the deadline`);
            console.log(`      ${api.received.length} requests (bound ${bound}), ${time.waits.length} waits`);
            if (expected === "gives up") {
                assert.equal(api.received.length, 1);
                assert.deepEqual(time.waits, [], "no sleep towards a Retry-After past the deadline");
                assert.match(
                    error.message,
                    /The API asked to retry after .+, past the operation's deadline \(5m from now\): raise timeouts\.read, or retry later$/,
                );
            }
            if (expected === "backs off") {
                assert.match(
                    error.message,
                    /The operation's deadline has passed: raise timeouts\.read, or retry later$/,
                );
                assert.ok(time.waits.every((ms) => ms >= retryAfterMs || time.now === deadline));
            }
        });
    }

    it("takes timeouts.read from the state: a 1-minute read ends within the minute", async () => {
        const bound = requestBound(0, 60_000);
        const api = await hostileApi((_request, response) => {
            if (api.received.length > bound + 50) json(response, 200, list([]));
            else json(response, 429, { error: "rate_limited", message: "slow down" }, { "retry-after": "0" });
        });
        const { lifecycle } = lifecycleOf(api.url, time);
        const error = await rejection(lifecycle.read(ID, { ...PROPS, timeouts: { read: "1m" } }));
        assert.ok(error instanceof TaskApiError, inspect(error));
        assert.equal(time.now, START + 60_000);
        assert.ok(api.received.length <= bound, String(api.received.length));
    });

    it("a create whose every key the server replays as spent stops at its deadline, not after 1,000 POSTs", async () => {
        // Each POST is "replayed": its task ended at once, naming a datastore that is gone.
        const api = await hostileApi((request, response) => {
            const path = pathOf(request.url);
            const n = api.received.filter((r) => r.method === "POST").length;
            if (request.method === "GET" && path === DATASTORES_PATH) json(response, 200, list([]));
            else if (request.method === "POST") {
                const location = `${ASYNC_OPERATIONS_PATH}/t${n}`;
                json(response, 202, { taskUri: location }, { location });
            } else if (path.startsWith(ASYNC_OPERATIONS_PATH)) {
                const id = path.slice(path.lastIndexOf("/") + 1);
                const made = resource(`${DATASTORES_PATH}/d${id.slice(1)}`);
                json(response, 200, operation(id, "SUCCEEDED", { associatedResources: made }));
            } else json(response, 404, { error: "not_found", message: "gone" });
        });
        const deadline = START + 60_000;
        time.onWait = (ms) => {
            assert.ok(ms <= deadline - time.now + 1e-6, `slept ${ms} ms with ${deadline - time.now} ms left`);
        };
        const { lifecycle } = lifecycleOf(api.url, time);
        const inputs = { ...datastoreInputs(), createToken: "tok", timeouts: { create: "1m" } } as RawInputs;
        const error = await rejection(lifecycle.create(inputs));
        assert.ok(error instanceof CreateTokenSpentError, inspect(error));
        assert.match(
            error.message,
            /create key\(s\) of this resource were spent .* before the deadline passed; nothing was made\. Run the command again .* raise timeouts\.create$/,
        );
        let keys = 1;
        for (let slept = 0; slept < 60_000; keys++) slept += doublingWaitMs(keys - 1, DEFAULT_POLL_SCHEDULE);
        const posts = api.received.filter((r) => r.method === "POST").length;
        assert.ok(posts <= keys, `${posts} POSTs; the backoff allows ${keys} keys in a minute`);
        assert.ok(time.now <= deadline);
    });
});
