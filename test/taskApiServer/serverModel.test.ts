// Guards the task API server's pure models: task progression (INITIALIZED for the first 10%, RUNNING with
// rising progress, then ended; by time or by polls; milestones dated when they were reached), the fault
// rules (oldest applicable rule first, used up after `times`), the token bucket of the rate limit and the
// seeded random numbers of simulated failures. No server, no clock.

import { strict as assert } from "node:assert";
import { seededRandom } from "../../provider/shared/random";
import {
    FaultRules,
    faultAppliesTo,
    fullBucket,
    parseFaultRuleRequest,
    takeToken,
} from "../../provider/taskApiServer/faults";
import type { TaskRecord } from "../../provider/taskApiServer/records";
import { advanceTask, fractionDone, operationJson, taskState } from "../../provider/taskApiServer/taskProgress";

const T0 = Date.parse("2030-01-01T00:00:00.000Z");

function task(overrides: Partial<TaskRecord> = {}): TaskRecord {
    return {
        id: "00000000-0000-4000-8000-000000000001",
        kind: "create",
        datastoreId: "00000000-0000-4000-8000-0000000000d5",
        datastoreName: "ds19",
        createdAtMs: T0,
        plan: { durationMs: 1000 },
        polls: 0,
        ...overrides,
    };
}

describe("task API server models", () => {
    describe("task progression", () => {
        it("follows elapsed time for a timed task", () => {
            const timed = task();
            assert.deepEqual(
                [-5, 0, 99, 100, 500, 999, 1000, 5000].map((elapsed) => fractionDone(timed, T0 + elapsed)),
                [0, 0, 0.099, 0.1, 0.5, 0.999, 1, 1],
            );
        });

        it("follows polls for a polled task: the n-th poll of n reaches the end", () => {
            const polled = (polls: number) => task({ plan: { completeAfterPolls: 4 }, polls });
            assert.deepEqual(
                [0, 1, 2, 3, 4, 5].map((polls) => fractionDone(polled(polls), T0)),
                [0, 0, 0.25, 0.5, 1, 1],
            );
        });

        it("dates a timed task's milestones when they were reached, however late it is advanced", () => {
            const ended = advanceTask(task(), T0 + 60_000);
            assert.equal(ended.startedAtMs, T0 + 100);
            assert.equal(ended.halfwayAtMs, T0 + 500);
            assert.equal(ended.endedAtMs, T0 + 1000);
            assert.equal(taskState(ended), "SUCCEEDED");
        });

        it("dates a polled task's milestones at the poll that reached them", () => {
            const advanced = advanceTask(task({ plan: { completeAfterPolls: 2 }, polls: 2 }), T0 + 42);
            assert.equal(advanced.endedAtMs, T0 + 42);
        });

        it("returns the same record when nothing new was reached, and never moves an ended task", () => {
            const queued = task();
            assert.equal(advanceTask(queued, T0 + 50), queued);
            const running = advanceTask(queued, T0 + 200);
            assert.equal(advanceTask(running, T0 + 300), running);
            const ended = advanceTask(running, T0 + 1000);
            assert.equal(advanceTask(ended, T0 + 9999), ended);
        });

        it("reads FAILED, with the error, for a task whose failure was decided", () => {
            const failure = { errorCode: "INJECTED_FAILURE", message: "boom" };
            const failed = advanceTask(task({ failure }), T0 + 1000);
            const json = operationJson(failed, T0 + 1000);
            assert.equal(json.state, "FAILED");
            assert.deepEqual(json.error, failure);
            assert.equal(json.progressPercent, 100);
            assert.equal(json.endedAt, "2030-01-01T00:00:01.000Z");
            const running = operationJson(advanceTask(task({ failure }), T0 + 500), T0 + 500);
            assert.equal(running.error, null, "the error shows only once the task has failed");
        });

        it("reports progress that never falls, between 10 and 99 while RUNNING", () => {
            let last = -1;
            const moments = [...Array.from({ length: 143 }, (_, index) => index * 7), 1000];
            for (const elapsed of moments) {
                const current = advanceTask(task(), T0 + elapsed);
                const { progressPercent, state } = operationJson(current, T0 + elapsed);
                assert.ok(progressPercent >= last, `${progressPercent} < ${last} at ${elapsed}`);
                if (state === "RUNNING") assert.ok(progressPercent >= 10 && progressPercent <= 99);
                last = progressPercent;
            }
            assert.equal(last, 100);
        });

        it("names resize and delete tasks and their log", () => {
            const resize = operationJson(
                advanceTask(task({ kind: "resize", resizeToBytes: 3 * 1024 ** 3 }), T0 + 1000),
                T0,
            );
            assert.equal(resize.name, "Resize datastore ds19");
            assert.deepEqual(
                resize.logMessages.map((entry) => entry.message),
                [
                    "Resize datastore ds19: queued",
                    "Resizing datastore ds19 to 3 GiB",
                    "Resize datastore ds19: 50% done",
                    "Datastore ds19 resized",
                ],
            );
            const remove = operationJson(advanceTask(task({ kind: "delete" }), T0 + 100), T0 + 100);
            assert.equal(remove.name, "Delete datastore ds19");
            assert.equal(remove.logMessages.at(-1)?.message, "Deleting datastore ds19");
        });
    });

    describe("fault rules", () => {
        const post = { method: "POST", path: "/virtualization/v1beta1/datastores", route: "createDatastore" } as const;
        const poll = {
            method: "GET",
            path: "/data-services/v1beta1/async-operations/x",
            route: "getOperation",
        } as const;

        it("gives the oldest matching rule's fault, `times` times", () => {
            const rules = new FaultRules();
            rules.add(parseFaultRuleRequest({ match: { method: "post" }, times: 2, fault: { status: 503 } }));
            rules.add(parseFaultRuleRequest({ fault: { drop: true } }));
            assert.deepEqual(rules.take(post), { status: 503 });
            assert.deepEqual(rules.take(poll), { drop: true }, "the first rule does not match a GET");
            assert.deepEqual(rules.take(post), { status: 503 });
            assert.equal(rules.take(post), undefined);
        });

        it("matches a path by prefix", () => {
            const rules = new FaultRules();
            rules.add(parseFaultRuleRequest({ match: { path: "/data-services/" }, fault: { status: 500 } }));
            assert.equal(rules.take(post), undefined);
            assert.deepEqual(rules.take(poll), { status: 500 });
        });

        it("skips rules whose fault cannot apply to the request, without using them", () => {
            const rules = new FaultRules();
            rules.add(parseFaultRuleRequest({ fault: { taskState: "PAUSED" } }));
            rules.add(parseFaultRuleRequest({ fault: { task: { fails: "x" } } }));
            assert.deepEqual(rules.take(post), { task: { fails: "x" } });
            assert.deepEqual(rules.take(poll), { taskState: "PAUSED" });
            assert.equal(faultAppliesTo({ omitLocation: true }, "listDatastores"), false);
            assert.equal(faultAppliesTo({ omitLocation: true }, "deleteDatastore"), true);
            assert.equal(faultAppliesTo({ loseResponse: true }, "getDatastore"), true);
        });

        it("hits a matching request with a rule's probability, and only a hit uses the rule up", () => {
            const draws = [0.5, 0.1, 0.9];
            const rules = new FaultRules(() => draws.shift() ?? 1);
            rules.add(parseFaultRuleRequest({ times: 5, probability: 0.3, fault: { status: 429 } }));
            assert.deepEqual(
                [rules.take(post), rules.take(post), rules.take(post)].map((fault) => fault !== undefined),
                [false, true, false],
            );
            assert.equal(rules.list()[0]?.remaining, 4);
            for (const probability of [0, -1, 1.5, "0.3"]) {
                assert.throws(
                    () => parseFaultRuleRequest({ probability, fault: { status: 429 } }),
                    /probability must be a number in \(0, 1\]/,
                );
            }
        });

        it("lists rules with what remains of them and clears them", () => {
            const rules = new FaultRules();
            const rule = rules.add(parseFaultRuleRequest({ times: 3, fault: { delayMs: 10 } }));
            assert.deepEqual(rule, { id: rule.id, match: {}, remaining: 3, probability: 1, fault: { delayMs: 10 } });
            rules.take(post);
            assert.equal(rules.list()[0]?.remaining, 2);
            assert.equal(rules.clear(), 1);
            assert.deepEqual(rules.list(), []);
        });

        it("keeps only the fields of a valid rule", () => {
            assert.deepEqual(
                parseFaultRuleRequest({ match: { method: "delete" }, fault: { status: 429, retryAfterSeconds: 0 } }),
                {
                    match: { method: "DELETE" },
                    fault: { status: 429, retryAfterSeconds: 0 },
                },
            );
        });
    });

    describe("token bucket", () => {
        const limit = { perSecond: 2, burst: 2 };

        it("allows a burst, then refuses until a token has grown back", () => {
            let bucket = fullBucket(limit, T0);
            const decisions: string[] = [];
            for (const at of [0, 0, 0, 499, 500, 500, 1000]) {
                const decision = takeToken(bucket, limit, T0 + at);
                bucket = decision.bucket;
                decisions.push(decision.allowed ? "ok" : `retry ${decision.retryAfterSeconds}`);
            }
            assert.deepEqual(decisions, ["ok", "ok", "retry 1", "retry 1", "ok", "retry 1", "ok"]);
        });

        it("rounds Retry-After up to whole seconds for slow rates", () => {
            const slow = { perSecond: 1 / 60, burst: 1 };
            const first = takeToken(fullBucket(slow, T0), slow, T0);
            const second = takeToken(first.bucket, slow, T0 + 1000);
            assert.equal(second.allowed, false);
            assert.equal(second.retryAfterSeconds, 59);
        });

        it("never holds more than the burst", () => {
            const bucket = takeToken({ tokens: 0, updatedAtMs: T0 }, limit, T0 + 3_600_000).bucket;
            assert.equal(bucket.tokens, 1);
        });
    });

    describe("seeded random numbers", () => {
        it("repeat for a seed, differ between seeds, and stay in [0, 1)", () => {
            const draw = (seed: number) => Array.from({ length: 1000 }, seededRandom(seed));
            assert.deepEqual(draw(1), draw(1));
            assert.notDeepEqual(draw(1), draw(2));
            const values = draw(3);
            assert.ok(values.every((value) => value >= 0 && value < 1));
            const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
            assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
        });
    });
});
