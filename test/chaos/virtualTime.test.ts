// The chaos suite's virtual time: it moves only by jumps to the next timer, never while a request is
// being answered, fires a request's timer when the server holds its answer, behaves as Node's timers
// do at their edges, and calls a stall with nothing scheduled a hang.

import { strict as assert } from "node:assert";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { TIMEOUT_MAX, VirtualTime } from "./virtualTime";

const START = Date.parse("2030-01-01T00:00:00.000Z");
const LIMIT = { realLimitMs: 20_000 };

describe("chaos suite: virtual time", () => {
    it("a sleep ends when driven, at exactly its time, and timers fire in order", async () => {
        const time = new VirtualTime(START);
        const seen: string[] = [];
        const work = (async () => {
            await Promise.all([
                time.sleep(5_000).then(() => seen.push(`b@${time.now - START}`)),
                time.sleep(1_000).then(() => seen.push(`a@${time.now - START}`)),
                time.sleep(5_000).then(() => seen.push(`c@${time.now - START}`)),
            ]);
            return time.now - START;
        })();
        const driven = await time.drive(work, LIMIT);
        assert.deepEqual(driven, { settled: true, ok: true, value: 5_000 });
        assert.deepEqual(seen, ["a@1000", "b@5000", "c@5000"]);
        assert.equal(time.stats.jumps, 3);
    });

    it("waits as Node's timers do: below 1 ms or NaN is 1 ms; beyond 2^31-1 ms exact, or 1 ms when the real timers overflow", async () => {
        const exact = new VirtualTime(START);
        const overflowing = new VirtualTime(START, { overflowingTimers: true });
        const elapsed = async (time: VirtualTime, ms: number) => {
            const before = time.now;
            const driven = await time.drive(time.sleep(ms), LIMIT);
            assert.equal(driven.settled, true);
            return time.now - before;
        };
        assert.equal(await elapsed(exact, 0), 1);
        assert.equal(await elapsed(exact, Number.NaN), 1);
        assert.equal(await elapsed(exact, -5), 1);
        assert.equal(await elapsed(exact, TIMEOUT_MAX + 1), TIMEOUT_MAX + 1);
        assert.equal(await elapsed(overflowing, TIMEOUT_MAX + 1), 1);
        assert.equal(exact.stats.overflows, 1);
        assert.equal(overflowing.stats.overflows, 1);
    });

    it("an aborted sleep rejects with the reason and leaves no timer behind", async () => {
        const time = new VirtualTime(START);
        const controller = new AbortController();
        const slept = time.sleep(60_000, controller.signal);
        assert.equal(time.pending("sleep"), 1);
        controller.abort(new Error("cancelled (Ctrl-C)"));
        await assert.rejects(slept, /cancelled/);
        assert.equal(time.pending(), 0);
        assert.equal(time.now, START);
    });

    describe("with a real HTTP server", () => {
        let server: Server;
        let url: string;
        /** What the server does with the next request. */
        let behaviour: "answer late" | "hold" = "answer late";
        let time: VirtualTime;

        before(async () => {
            server = createServer((req, res) => {
                const id = Number(req.headers["x-request"]);
                if (behaviour === "hold") {
                    res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
                    res.write("{");
                    time.hold(id, true);
                    return;
                }
                // Real time passes while the answer is on its way: the client's timer must not fire.
                setTimeout(() => res.end('{"ok":true}'), 80);
            });
            await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
            url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        });
        after(() => {
            server.closeAllConnections();
            server.close();
        });

        /** A request as TaskApiClient makes one: its timer first, then the fetch, the body read under it. */
        async function request(timeoutMs: number): Promise<string> {
            const controller = new AbortController();
            const cancel = time.timeout(timeoutMs, () =>
                controller.abort(new Error(`no answer within ${timeoutMs} ms`)),
            );
            try {
                const response = await fetch(url, {
                    signal: controller.signal,
                    headers: { "x-request": String(time.lastRequestId) },
                });
                return await response.text();
            } finally {
                cancel();
            }
        }

        it("never fires a request's timer while its answer is on the way", async () => {
            time = new VirtualTime(START);
            behaviour = "answer late";
            const driven = await time.drive(request(30_000), LIMIT);
            assert.deepEqual(driven, { settled: true, ok: true, value: '{"ok":true}' });
            assert.equal(time.now, START, "no virtual time passed");
            assert.equal(time.requestsInFlight, 0);
        });

        it("fires the timer of a request whose body the server holds, after a collection", async () => {
            time = new VirtualTime(START);
            behaviour = "hold";
            const driven = await time.drive(request(30_000), LIMIT);
            assert.equal(driven.settled, true);
            assert.equal(driven.settled && !driven.ok && String(driven.error), "Error: no answer within 30000 ms");
            assert.equal(time.now, START + 30_000);
            assert.equal(time.stats.collections, 1);
        });
    });

    it("calls an operation that waits with nothing scheduled a hang, after one chance to unstick it", async () => {
        const time = new VirtualTime(START);
        let unstuck = 0;
        const driven = await time.drive(new Promise<never>(() => undefined), {
            ...LIMIT,
            onStuck: () => {
                unstuck++;
                return true;
            },
        });
        assert.deepEqual(driven, { settled: false, reason: "hang" });
        assert.equal(unstuck, 1);
    });

    it("moves the clock by `advance`, firing what falls due on the way", () => {
        const time = new VirtualTime(START);
        const fired: number[] = [];
        time.schedule(10_000, () => fired.push(time.now - START));
        time.schedule(90_000, () => fired.push(time.now - START));
        time.advance(60_000);
        assert.deepEqual(fired, [10_000]);
        assert.equal(time.now, START + 60_000);
        assert.equal(time.pending("server"), 1);
    });
});
