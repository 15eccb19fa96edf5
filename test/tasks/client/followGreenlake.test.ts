// Guards following a GreenLake async operation to its end (provider/tasks/client/followOperation.ts with
// the greenlake dialect) against the package's task API server: succeeded after exactly the polls the
// operation needs, every view reported to onProgress, waits from the backoff bands, aimed at the
// operation's estimated end, or the server's suggested interval; failed (with the API's error) and
// undocumented states as the operation's end; and every way of stopping short as an OperationWaitError
// carrying the handle: "polling" (polls keep failing, an answer that is not JSON, an operation the API
// does not have), "deadline" (with the last view seen) and "interrupted" (the signal). These are the
// guarantees waitForTask's suite pinned, moved onto the engine that replaces it. Port 0, an injected
// clock moved only by a recording fake sleep.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import { seededRandom } from "../../../provider/shared/random";
import type { Fault, FaultRuleRequest } from "../../../provider/taskApiServer/control";
import type { TaskApiServer, TaskApiServerOptions } from "../../../provider/taskApiServer/taskApiServer";
import {
    type FollowOptions,
    type FollowOutcome,
    followOperation,
} from "../../../provider/tasks/client/followOperation";
import { backoffBand, DEFAULT_POLL_SCHEDULE } from "../../../provider/tasks/client/pollSchedule";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { OperationWaitError } from "../../../provider/tasks/errors/operationWaitError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import type { OperationHandle, OperationView } from "../../../provider/tasks/protocol/dialects/dialect";
import { greenlakeDialect } from "../../../provider/tasks/protocol/dialects/greenlake";
import {
    ASYNC_OPERATIONS_PATH,
    DATASTORES_PATH,
    type DatastoreList,
    operationUri,
} from "../../../provider/tasks/protocol/wire";
import { closeHostileApis, hostileApi, json } from "../io/hostileApi";
import { createBody, FakeTime, heldSleep, REQUEST_TIMEOUT_MS, Servers, START, TOKEN } from "./support";

const dialect = greenlakeDialect();
const WHAT = "the create of datastore ds19";

describe("followOperation (greenlake dialect, against the task API server)", () => {
    const servers = new Servers();
    let server: TaskApiServer;
    let time: FakeTime;
    let client: TaskApiClient;
    /** The waits followOperation asked for between polls (the client's own retry waits are in time.waits). */
    let pollWaits: number[];
    /** Every view onProgress was given. */
    let seen: OperationView[];

    async function start(options: TaskApiServerOptions = {}): Promise<void> {
        await servers.closeAll();
        server = await servers.start(options);
        client = new TaskApiClient({
            baseUrl: server.url,
            token: TOKEN,
            clock: time.clock,
            sleep: time.sleep,
            timeout: time.timeout,
            random: seededRandom(11),
            requestTimeoutMs: REQUEST_TIMEOUT_MS,
            maxAttempts: 3,
        });
    }

    beforeEach(async () => {
        time = new FakeTime();
        pollWaits = [];
        seen = [];
        await start({ taskCompleteAfterPolls: 4 });
    });
    afterEach(async () => {
        await servers.closeAll();
        await closeHostileApis();
    });

    /**
     * POSTs a datastore (under `fault` when given, e.g. a task shape), reads the 202 as the dialect does
     * and resolves with the handle of the operation its Location names.
     */
    async function startTask(fault?: Fault): Promise<OperationHandle> {
        if (fault) server.addFault({ match: { method: "POST" }, fault });
        const answer = await client.send({ method: "POST", path: DATASTORES_PATH, body: createBody() });
        const submitted = dialect.submitted("create", answer, time.now);
        assert.equal(submitted.kind, "operation", inspect(submitted));
        assert.ok(submitted.kind === "operation");
        const location = answer.header("location");
        assert.ok(location);
        assert.deepEqual(submitted.handle, { kind: "greenlake-operation", ref: idOf(location) });
        server.clearRequests();
        return submitted.handle;
    }

    function options(handle: OperationHandle, overrides: Partial<FollowOptions> = {}): FollowOptions {
        return {
            client,
            dialect,
            handle,
            what: WHAT,
            startedAt: time.now,
            deadline: time.now + 20 * 60_000,
            clock: time.clock,
            sleep: time.recordingSleep(pollWaits),
            random: seededRandom(12),
            schedule: DEFAULT_POLL_SCHEDULE,
            onProgress: (view) => seen.push(view),
            ...overrides,
        };
    }

    /** An onProgress that records each view and, once the first poll is reported, adds `rule` for the next. */
    function faultAfterFirstPoll(rule: FaultRuleRequest): (view: OperationView) => void {
        let added = false;
        return (view) => {
            seen.push(view);
            if (!added) server.addFault(rule);
            added = true;
        };
    }

    async function rejection(promise: Promise<FollowOutcome>): Promise<OperationWaitError> {
        try {
            await promise;
        } catch (error) {
            assert.ok(error instanceof OperationWaitError, `not an OperationWaitError: ${inspect(error)}`);
            return error;
        }
        assert.fail("followOperation resolved; it should have stopped short");
    }

    /** GETs of the operation the server answered. */
    function polls(handle: OperationHandle): number {
        return server.requests().filter((entry) => entry.method === "GET" && entry.path === operationUri(handle.ref))
            .length;
    }

    function idOf(uri: string): string {
        return uri.slice(uri.lastIndexOf("/") + 1);
    }

    /** "<status> <progress>%" as OperationWaitError's message names the last view. */
    function named(view: OperationView | undefined): string {
        assert.ok(view);
        return `${view.status} ${view.progressPercent}%`;
    }

    describe("an operation that succeeds", () => {
        it("resolves succeeded after exactly the polls the operation needs, reporting every view", async () => {
            const handle = await startTask();
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.polls, 4);
            assert.equal(outcome.view.state, "succeeded");
            assert.equal(outcome.view.status, "SUCCEEDED");
            assert.equal(outcome.view.progressPercent, 100);
            assert.deepEqual(
                seen.map((view) => `${view.state} ${view.progressPercent}`),
                ["pending 0", "pending 25", "pending 50", "succeeded 100"],
            );
            assert.equal(seen.at(-1), outcome.view);
            assert.equal(polls(handle), 4);
            assert.equal(pollWaits.length, 3);
            assert.deepEqual(time.waits, []);
            // What it made: the datastore the POST created, named by the operation.
            const list = await client.send<DatastoreList>({ method: "GET", path: DATASTORES_PATH });
            assert.deepEqual(
                list.body?.items.map((item) => item.id),
                [outcome.view.resourceId],
            );
        });

        it("waits within the backoff band of each attempt, but for at most one early wait at a predicted end", async () => {
            await start({ taskCompleteAfterPolls: 9 });
            const handle = await startTask();
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.view.state, "succeeded");
            assert.equal(outcome.polls, 9);
            assert.equal(pollWaits.length, 8);
            let early = 0;
            pollWaits.forEach((wait, attempt) => {
                const { low, high } = backoffBand(attempt, DEFAULT_POLL_SCHEDULE);
                assert.ok(wait <= high, `wait ${attempt}: ${wait} over ${high}`);
                if (wait < low) {
                    early++;
                    assert.ok(
                        wait >= DEFAULT_POLL_SCHEDULE.initialMs / 2,
                        `wait ${attempt}: ${wait} under half a step`,
                    );
                }
            });
            assert.ok(early <= 1, `${early} early waits`);
        });

        it("polls early only once when progress stalls, then keeps to the backoff band", async () => {
            // The server's clock stands at 99% of a 2 s task: the operation reports RUNNING 99% forever, so
            // every estimate says it is about to end.
            await start({ clock: () => START, taskDurationMs: 2000 });
            const handle = await startTask();
            server.advanceClock(1980);
            const error = await rejection(followOperation(options(handle, { deadline: time.now + 30_000 })));
            assert.equal(error.stop, "deadline");
            assert.equal(named(error.lastSeen), "RUNNING 99%");
            // The last wait ends at the deadline, cut short on purpose; it is no early poll.
            assert.equal(Math.round(pollWaits.reduce((sum, wait) => sum + wait, 0)), 30_000);
            const early = pollWaits
                .slice(0, -1)
                .filter((wait, attempt) => wait < backoffBand(attempt, DEFAULT_POLL_SCHEDULE).low);
            assert.equal(early.length, 1, `early waits: ${early.join(", ")} of ${pollWaits.join(", ")}`);
            pollWaits.slice(0, -1).forEach((wait, attempt) => {
                const { low, high } = backoffBand(attempt, DEFAULT_POLL_SCHEDULE);
                if (wait !== early[0])
                    assert.ok(wait >= low && wait <= high, `wait ${attempt}: ${wait} not in [${low}, ${high}]`);
            });
        });

        it("resolves after one poll, without waiting, when the operation has already ended", async () => {
            await start({ taskCompleteAfterPolls: 1 });
            const handle = await startTask();
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.polls, 1);
            assert.deepEqual(pollWaits, []);
            assert.deepEqual(
                seen.map((view) => view.state),
                ["succeeded"],
            );
        });

        it("follows the operation a Location names, relative or absolute, by its id on the API's origin", async () => {
            const handle = await startTask();
            const path = operationUri(handle.ref);
            for (const location of [path, `${server.url}${path}`]) {
                const submitted = dialect.submitted(
                    "create",
                    { status: 202, header: (name) => (name === "location" ? location : undefined), body: undefined },
                    time.now,
                );
                assert.deepEqual(submitted.kind === "operation" ? submitted.handle : submitted, handle);
            }
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.polls, 4);
            assert.ok(
                server.requests().every((entry) => entry.path === `${ASYNC_OPERATIONS_PATH}/${handle.ref}`),
                inspect(server.requests()),
            );
        });

        it("aims at the end a timed operation's progress predicts, and sees it end soon after", async () => {
            // The server's clock is the fake one: the operation advances as followOperation sleeps.
            await start({ clock: time.clock, taskDurationMs: 2000 });
            const handle = await startTask();
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.view.state, "succeeded");
            const elapsed = time.now - START;
            assert.ok(elapsed >= 2000, String(elapsed));
            assert.ok(
                elapsed <= 2000 * 1.05 + 10,
                `seen ended ${elapsed - 2000} ms late (waits ${pollWaits.join(", ")})`,
            );
            assert.ok(outcome.polls <= Math.log2(2000 / 100) + 3, `${outcome.polls} polls`);
            assert.ok(
                seen.some((view) => view.status === "RUNNING"),
                seen.map((view) => view.status).join(),
            );
        });

        it("waits the server's suggested interval between polls", async () => {
            await start({ taskCompleteAfterPolls: 4, suggestedPollingIntervalSeconds: 2 });
            const handle = await startTask();
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.view.state, "succeeded");
            assert.equal(outcome.polls, 4);
            assert.deepEqual(pollWaits, [2000, 2000, 2000]);
            assert.ok(seen.every((view) => view.retryAfterMs === 2000));
        });

        it("follows the client's retries of a poll that failed transiently", async () => {
            const handle = await startTask();
            server.addFault({ match: { method: "GET" }, times: 2, fault: { status: 503 } });
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.view.state, "succeeded");
            assert.equal(outcome.polls, 4);
            assert.equal(time.waits.length, 2);
            assert.deepEqual(
                server.requests().map((entry) => entry.status),
                [503, 503, 200, 200, 200, 200],
            );
        });
    });

    describe("an operation that fails", () => {
        it("resolves failed, carrying the API's error code and message", async () => {
            const handle = await startTask({ task: { fails: "the disk caught fire" } });
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.view.state, "failed");
            assert.equal(outcome.view.status, "FAILED");
            assert.equal(outcome.view.error, "INJECTED_FAILURE: the disk caught fire");
            assert.deepEqual(
                seen.map((view) => view.state),
                ["pending", "pending", "pending", "failed"],
            );
            assert.equal(seen.at(-1), outcome.view);
            assert.equal(outcome.polls, 4);
            assert.equal(polls(handle), 4);
        });
    });

    describe("answers that are not an operation in a documented state", () => {
        const UNDOCUMENTED =
            /^the operation's state "SUSPENDED" is none of INITIALIZED, RUNNING, PAUSED, UNSPECIFIED, SUCCEEDED, FAILED, TIMEDOUT, CANCELLED$/;

        it("ends an operation in a state the API does not document as failed, saying so, at once", async () => {
            const handle = await startTask();
            // The second poll reads a state the API does not document.
            const onProgress = faultAfterFirstPoll({ fault: { taskState: "SUSPENDED" } });
            const outcome = await followOperation(options(handle, { onProgress }));
            assert.equal(outcome.view.state, "failed");
            assert.equal(outcome.view.status, "SUSPENDED");
            assert.match(outcome.view.error ?? "", UNDOCUMENTED);
            assert.deepEqual(
                seen.map((view) => view.state),
                ["pending", "failed"],
            );
            assert.equal(seen.at(-1), outcome.view);
            assert.equal(polls(handle), 2, "an ended operation is not polled again");
            assert.equal(pollWaits.length, 1);
        });

        it("ends it so when the very first answer is in such a state", async () => {
            const handle = await startTask();
            server.addFault({ fault: { taskState: "SUSPENDED" } });
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.view.state, "failed");
            assert.match(outcome.view.error ?? "", UNDOCUMENTED);
            assert.equal(outcome.polls, 1);
            assert.deepEqual(pollWaits, []);
        });

        it("follows on an operation PAUSED, a pending state the API documents", async () => {
            const handle = await startTask();
            const onProgress = faultAfterFirstPoll({ fault: { taskState: "PAUSED" } });
            const outcome = await followOperation(options(handle, { onProgress }));
            assert.equal(outcome.view.state, "succeeded");
            assert.deepEqual(seen.map((view) => `${view.state} ${view.status}`).slice(1), [
                "pending PAUSED",
                "pending RUNNING",
                "succeeded SUCCEEDED",
            ]);
        });

        it("stops with OperationWaitError 'polling' for an answer that is not an operation, keeping the handle", async () => {
            // A 200 whose body is a datastore list, not an operation: the API said nothing of the operation's end.
            const api = await hostileApi((_request, response) =>
                json(response, 200, { items: [], count: 0, total: 0 }),
            );
            const apiClient = new TaskApiClient({
                baseUrl: api.url,
                token: TOKEN,
                clock: time.clock,
                sleep: time.sleep,
            });
            const handle = { kind: "greenlake-operation", ref: "t1" };
            const error = await rejection(followOperation(options(handle, { client: apiClient })));
            assert.equal(error.stop, "polling");
            assert.deepEqual(error.handle, handle);
            assert.equal(error.lastSeen, undefined);
            assert.deepEqual(
                api.received.map((request) => `${request.method} ${request.url}`),
                [`GET ${ASYNC_OPERATIONS_PATH}/t1`],
            );
        });

        it("stops with OperationWaitError 'polling' caused by MalformedResponseError for an answer that is not JSON", async () => {
            const handle = await startTask();
            server.addFault({ match: { method: "GET" }, fault: { invalidJson: true } });
            const error = await rejection(followOperation(options(handle)));
            assert.equal(error.stop, "polling");
            assert.deepEqual(error.handle, handle);
            assert.ok(error.cause instanceof MalformedResponseError, inspect(error.cause));
            assert.equal(error.lastSeen, undefined);
            assert.match(error.message, new RegExp(`^could not look at ${WHAT} \\(never seen\\): `));
            assert.equal(polls(handle), 1);
        });
    });

    describe("polls that keep failing", () => {
        it("stop with OperationWaitError 'polling' caused by the client's error, keeping the last view seen", async () => {
            const handle = await startTask();
            const onProgress = faultAfterFirstPoll({ match: { method: "GET" }, times: 10, fault: { status: 500 } });
            const error = await rejection(followOperation(options(handle, { onProgress })));
            assert.equal(error.stop, "polling");
            assert.deepEqual(error.handle, handle);
            assert.ok(error.cause instanceof TaskApiError, inspect(error.cause));
            assert.equal(error.cause.status, 500);
            assert.equal(error.lastSeen, seen[0]);
            assert.equal(error.lastSeen?.state, "pending");
            assert.equal(error.lastSeen?.progressPercent, 0);
            assert.match(
                error.message,
                new RegExp(
                    `^could not look at ${WHAT} \\(last seen ${named(error.lastSeen)}\\): ` +
                        "the task API answered GET .* with 500 \\(internal_error\\)",
                ),
            );
            // One good poll, then the client's three attempts.
            assert.deepEqual(
                server.requests().map((entry) => entry.status),
                [200, 500, 500, 500],
            );
        });

        it("stop with OperationWaitError 'polling' when the operation is not found", async () => {
            const handle = { kind: "greenlake-operation", ref: "00000000-0000-4000-8000-000000000000" };
            const error = await rejection(followOperation(options(handle)));
            assert.equal(error.stop, "polling");
            assert.deepEqual(error.handle, handle);
            assert.ok(error.cause instanceof TaskApiError, inspect(error.cause));
            assert.equal(error.cause.status, 404);
            assert.equal(error.lastSeen, undefined);
            assert.equal(polls(handle), 1);
        });
    });

    describe("the deadline", () => {
        it("stops with OperationWaitError 'deadline' and the last view, after one last look at the deadline", async () => {
            // RUNNING from the third poll on; about six polls fit in the second.
            await start({ taskCompleteAfterPolls: 20 });
            const handle = await startTask();
            const deadline = START + 1000;
            const error = await rejection(followOperation(options(handle, { startedAt: START, deadline })));
            assert.equal(error.stop, "deadline");
            assert.deepEqual(error.handle, handle);
            assert.equal(time.now, deadline, "the last sleep ends at the deadline");
            const slept = pollWaits.reduce((sum, wait) => sum + wait, 0);
            assert.ok(Math.abs(slept - 1000) < 0.01, String(slept));
            assert.equal(polls(handle), pollWaits.length + 1);
            assert.equal(error.lastSeen, seen.at(-1));
            assert.equal(error.lastSeen?.state, "pending");
            assert.equal(error.lastSeen?.status, "RUNNING");
            assert.equal(
                error.message,
                `gave up waiting for ${WHAT} after 1 s (last seen ${named(error.lastSeen)}); ` +
                    "raise the resource's timeouts if it needs longer",
            );
        });

        it("reports the time since the operation started, not since following started", async () => {
            await start({ taskCompleteAfterPolls: 1000 });
            const handle = await startTask();
            const error = await rejection(
                followOperation(options(handle, { startedAt: START - 90_000, deadline: START + 500 })),
            );
            assert.equal(error.stop, "deadline");
            assert.match(error.message, / after 2m \(last seen /);
        });

        it("clamps even the server's suggested interval to the deadline", async () => {
            await start({ taskCompleteAfterPolls: 1000, suggestedPollingIntervalSeconds: 2 });
            const handle = await startTask();
            const error = await rejection(followOperation(options(handle, { deadline: START + 3000 })));
            assert.equal(error.stop, "deadline");
            assert.deepEqual(pollWaits, [2000, 1000]);
            assert.equal(polls(handle), 3);
        });

        it("looks once, without waiting, when it has already passed", async () => {
            await start({ taskCompleteAfterPolls: 1000 });
            const handle = await startTask();
            const error = await rejection(followOperation(options(handle, { deadline: START - 1 })));
            assert.equal(error.stop, "deadline");
            assert.equal(polls(handle), 1);
            assert.deepEqual(pollWaits, []);
            assert.equal(error.lastSeen?.state, "pending");
            assert.equal(error.lastSeen, seen[0]);
        });

        it("does not beat an operation seen ended on that last look", async () => {
            await start({ taskCompleteAfterPolls: 1 });
            const handle = await startTask();
            const outcome = await followOperation(options(handle, { deadline: START - 1 }));
            assert.equal(outcome.view.state, "succeeded");
        });
    });

    describe("the abort signal", () => {
        it("aborted during a sleep stops with OperationWaitError 'interrupted' and the last view seen", async () => {
            const handle = await startTask();
            const controller = new AbortController();
            time.onWait = (_ms, count) => {
                if (count === 2) controller.abort(new Error("SIGINT"));
            };
            const error = await rejection(followOperation(options(handle, { signal: controller.signal })));
            assert.equal(error.stop, "interrupted");
            assert.deepEqual(error.handle, handle);
            assert.equal(polls(handle), 2);
            assert.equal(pollWaits.length, 2);
            assert.equal(error.lastSeen, seen[1]);
            assert.equal(error.lastSeen?.state, "pending");
            assert.equal(named(error.lastSeen), "RUNNING 25%");
            assert.equal(
                error.message,
                `stopped following ${WHAT} (last seen RUNNING 25%): interrupted; it runs on at the API`,
            );
        });

        it("already aborted stops with OperationWaitError 'interrupted' before any poll", async () => {
            const handle = await startTask();
            const error = await rejection(followOperation(options(handle, { signal: AbortSignal.abort() })));
            assert.equal(error.stop, "interrupted");
            assert.deepEqual(error.handle, handle);
            assert.equal(error.lastSeen, undefined);
            assert.equal(polls(handle), 0);
            assert.match(error.message, /\(never seen\): interrupted/);
        });

        it("aborted during a poll stops as 'interrupted', not 'polling'", async () => {
            const controller = new AbortController();
            await start({ taskCompleteAfterPolls: 4, sleep: heldSleep(() => controller.abort(new Error("SIGINT"))) });
            const handle = await startTask();
            // The second poll's answer is held until the signal is aborted.
            const onProgress = faultAfterFirstPoll({ match: { method: "GET" }, fault: { delayMs: 60_000 } });
            const error = await rejection(followOperation(options(handle, { signal: controller.signal, onProgress })));
            assert.equal(error.stop, "interrupted");
            assert.deepEqual(error.handle, handle);
            assert.equal(error.lastSeen, seen[0]);
            assert.deepEqual(time.waits, [], "the client does not retry an aborted request");
        });
    });
});
