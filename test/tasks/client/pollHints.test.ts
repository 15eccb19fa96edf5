// Guards issue 18 §2 "clamp hints to a sane floor and ceiling": a GreenLake operation whose
// suggestedPollingIntervalSeconds is 0.0001, 1e9, negative, a string or null. followOperation, reading it
// through the greenlake dialect, must poll it no more often than once a second (the floor), at least every
// 5 minutes (the ceiling), by backoff when the hint is no positive number, and never sleep past the
// deadline. Counted over 10 virtual minutes (FakeTime) against a node:http server on port 0 whose
// operation never ends, until a cap far above every bound (so an old client still ends).

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import { seededRandom } from "../../../provider/shared/random";
import { followOperation } from "../../../provider/tasks/client/followOperation";
import {
    backoffBand,
    DEFAULT_POLL_SCHEDULE,
    HINT_CEILING_MS,
    HINT_FLOOR_MS,
} from "../../../provider/tasks/client/pollSchedule";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { OperationWaitError } from "../../../provider/tasks/errors/operationWaitError";
import { greenlakeDialect } from "../../../provider/tasks/protocol/dialects/greenlake";
import { ASYNC_OPERATIONS_PATH } from "../../../provider/tasks/protocol/wire";
import { closeHostileApis, hostileApi, json, operation } from "../io/hostileApi";
import { FakeTime, REQUEST_TIMEOUT_MS, rejection, START, TOKEN } from "./support";

const MINUTES = 10;
const WINDOW_MS = MINUTES * 60_000;

/** The most polls plain backoff makes in `windowMs`: waits at least the low end of each band. */
function backoffPolls(windowMs: number): number {
    let slept = 0;
    let waits = 0;
    while (slept < windowMs) {
        slept += backoffBand(waits, DEFAULT_POLL_SCHEDULE).low;
        waits++;
    }
    return waits + 1;
}

describe("a task's suggested polling interval is clamped (issue 18 §2)", () => {
    let time: FakeTime;
    beforeEach(() => {
        time = new FakeTime();
    });
    afterEach(closeHostileApis);

    const cases: [hint: unknown, bound: number, what: string][] = [
        [0.0001, MINUTES * (60_000 / HINT_FLOOR_MS) + 1, "at most once a second"],
        [1e9, WINDOW_MS / HINT_CEILING_MS + 1, "every 5 minutes"],
        [-1, backoffPolls(WINDOW_MS), "by backoff"],
        ["0.0001", backoffPolls(WINDOW_MS), "by backoff"],
        ["NaN", backoffPolls(WINDOW_MS), "by backoff"],
        [null, backoffPolls(WINDOW_MS), "by backoff"],
    ];
    for (const [hint, bound, what] of cases) {
        it(`${JSON.stringify(hint)}: polls ${what}, at most ${bound} times in ${MINUTES} virtual minutes`, async () => {
            const cap = bound + 100;
            let polls = 0;
            const api = await hostileApi((_request, response) => {
                polls++;
                const state = polls > cap ? "SUCCEEDED" : "RUNNING";
                json(response, 200, operation("t1", state, { suggestedPollingIntervalSeconds: hint as number }));
            });
            const client = new TaskApiClient({
                baseUrl: api.url,
                token: TOKEN,
                clock: time.clock,
                sleep: time.sleep,
                timeout: time.timeout,
                random: seededRandom(6),
                requestTimeoutMs: REQUEST_TIMEOUT_MS,
            });
            const deadline = START + WINDOW_MS;
            const pollWaits: number[] = [];
            time.onWait = (ms) => {
                assert.ok(ms <= deadline - time.now + 1e-6, `slept ${ms} ms with ${deadline - time.now} ms left`);
            };
            const error = await rejection(
                followOperation({
                    client,
                    dialect: greenlakeDialect(),
                    handle: { kind: "greenlake-operation", ref: "t1" },
                    what: "the create of datastore ds19",
                    startedAt: START,
                    deadline,
                    clock: time.clock,
                    sleep: time.recordingSleep(pollWaits),
                    random: seededRandom(7),
                    schedule: DEFAULT_POLL_SCHEDULE,
                }),
            );
            assert.ok(error instanceof OperationWaitError, inspect(error));
            assert.equal(error.stop, "deadline");
            // Every look went to the operation asked for, on the API's origin.
            assert.ok(
                api.received.every(
                    (request) => request.method === "GET" && request.url === `${ASYNC_OPERATIONS_PATH}/t1`,
                ),
                inspect(api.received.slice(0, 3)),
            );
            assert.ok(polls <= bound, `${polls} polls; the bound is ${bound}`);
            // Every wait but the last (clamped to the deadline) keeps to the hint's bounds.
            const between = pollWaits.slice(0, -1);
            if (typeof hint === "number" && hint > 0) {
                assert.ok(
                    between.every((ms) => ms >= HINT_FLOOR_MS && ms <= HINT_CEILING_MS),
                    String(between),
                );
            }
            assert.ok(
                pollWaits.every((ms) => ms <= HINT_CEILING_MS),
                String(pollWaits),
            );
        });
    }
});
