// Guards following an asynchronous task to its end (provider/tasks/core/waitForTask.ts) against the real
// task API server: SUCCEEDED after exactly the polls the task needs, every state reported to onProgress,
// waits from the backoff bands, aimed at the task's estimated end, or the server's suggested interval;
// and every way of stopping short as its TaskWaitError: TaskFailedError (FAILED, with the task's message),
// TaskPollingError (polls keep failing, or the answer is not a task in a known state, with the
// MalformedResponseError as its cause), TaskDeadlineError (with the last state seen) and
// TaskInterruptedError (the signal). Port 0, an injected clock moved only by a recording fake sleep.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import { seededRandom } from "../../../provider/shared/random";
import type { Fault, FaultRuleRequest } from "../../../provider/taskApiServer/control";
import type { TaskApiServer, TaskApiServerOptions } from "../../../provider/taskApiServer/taskApiServer";
import { backoffBand, DEFAULT_POLL_SCHEDULE } from "../../../provider/tasks/client/pollSchedule";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { type TaskOutcome, type WaitForTaskOptions, waitForTask } from "../../../provider/tasks/client/waitForTask";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { TaskDeadlineError } from "../../../provider/tasks/errors/taskDeadlineError";
import { TaskFailedError } from "../../../provider/tasks/errors/taskFailedError";
import { TaskInterruptedError } from "../../../provider/tasks/errors/taskInterruptedError";
import { TaskPollingError } from "../../../provider/tasks/errors/taskPollingError";
import { TaskWaitError } from "../../../provider/tasks/errors/taskWaitError";
import { type AsyncOperation, DATASTORES_PATH, type TaskAccepted } from "../../../provider/tasks/protocol/wire";
import { createBody, FakeTime, heldSleep, REQUEST_TIMEOUT_MS, Servers, START, TOKEN } from "./support";

describe("waitForTask", () => {
    const servers = new Servers();
    let server: TaskApiServer;
    let time: FakeTime;
    let client: TaskApiClient;
    /** The waits waitForTask asked for between polls (the client's own retry waits are in time.waits). */
    let pollWaits: number[];
    /** Every state onProgress was given. */
    let seen: AsyncOperation[];

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
    afterEach(() => servers.closeAll());

    /** POSTs a datastore (under `fault` when given, e.g. a task shape) and resolves with the task's absolute URI. */
    async function startTask(fault?: Fault): Promise<string> {
        if (fault) server.addFault({ match: { method: "POST" }, fault });
        const accepted = await client.send<TaskAccepted>({ method: "POST", path: DATASTORES_PATH, body: createBody() });
        assert.ok(accepted.location);
        server.clearRequests();
        // The client hands the Location back as sent; DatastoreApi resolves and checks it.
        return new URL(accepted.location, server.url).toString();
    }

    function options(taskUri: string, overrides: Partial<WaitForTaskOptions> = {}): WaitForTaskOptions {
        return {
            client,
            taskUri,
            startedAt: time.now,
            deadline: time.now + 20 * 60_000,
            clock: time.clock,
            sleep: time.recordingSleep(pollWaits),
            random: seededRandom(12),
            schedule: DEFAULT_POLL_SCHEDULE,
            onProgress: (operation) => seen.push(operation),
            ...overrides,
        };
    }

    /** An onProgress that records each state and, once the first poll is reported, adds `rule` for the next. */
    function faultAfterFirstPoll(rule: FaultRuleRequest): (operation: AsyncOperation) => void {
        let added = false;
        return (operation) => {
            seen.push(operation);
            if (!added) server.addFault(rule);
            added = true;
        };
    }

    async function rejection(promise: Promise<TaskOutcome>): Promise<TaskWaitError> {
        try {
            await promise;
        } catch (error) {
            assert.ok(error instanceof TaskWaitError, `not a TaskWaitError: ${inspect(error)}`);
            return error;
        }
        assert.fail("waitForTask resolved; it should have failed");
    }

    /** GETs of the task the server answered. */
    function polls(taskUri: string): number {
        return server.requests().filter((entry) => entry.method === "GET" && taskUri.endsWith(entry.path)).length;
    }

    function idOf(taskUri: string): string {
        return taskUri.slice(taskUri.lastIndexOf("/") + 1);
    }

    describe("a task that succeeds", () => {
        it("resolves with SUCCEEDED after exactly the polls the task needs, reporting every state", async () => {
            const taskUri = await startTask();
            const outcome = await waitForTask(options(taskUri));
            assert.equal(outcome.polls, 4);
            assert.equal(outcome.operation.state, "SUCCEEDED");
            assert.equal(outcome.operation.id, idOf(taskUri));
            assert.equal(outcome.operation.progressPercent, 100);
            assert.deepEqual(
                seen.map((operation) => `${operation.state} ${operation.progressPercent}`),
                ["QUEUED 0", "RUNNING 25", "RUNNING 50", "SUCCEEDED 100"],
            );
            assert.equal(seen.at(-1), outcome.operation);
            assert.equal(polls(taskUri), 4);
            assert.equal(pollWaits.length, 3);
            assert.deepEqual(time.waits, []);
        });

        it("waits within the backoff band of each attempt, but for at most one early wait at a predicted end", async () => {
            await start({ taskCompleteAfterPolls: 9 });
            const taskUri = await startTask();
            const outcome = await waitForTask(options(taskUri));
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
            // The server's clock stands at 99% of a 2 s task: the task reports RUNNING 99% forever, so every
            // estimate says it is about to end.
            await start({ clock: () => START, taskDurationMs: 2000 });
            const taskUri = await startTask();
            server.advanceClock(1980);
            await rejection(waitForTask(options(taskUri, { deadline: time.now + 30_000 })));
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

        it("resolves after one poll, without waiting, when the task has already ended", async () => {
            await start({ taskCompleteAfterPolls: 1 });
            const taskUri = await startTask();
            const outcome = await waitForTask(options(taskUri));
            assert.equal(outcome.polls, 1);
            assert.deepEqual(pollWaits, []);
            assert.deepEqual(
                seen.map((operation) => operation.state),
                ["SUCCEEDED"],
            );
        });

        it("takes a task URI as a path too", async () => {
            const taskUri = await startTask();
            const path = new URL(taskUri).pathname;
            const outcome = await waitForTask(options(path));
            assert.equal(outcome.polls, 4);
        });

        it("aims at the end a timed task's progress predicts, and sees it end soon after", async () => {
            // The server's clock is the fake one: the task advances as waitForTask sleeps.
            await start({ clock: time.clock, taskDurationMs: 2000 });
            const taskUri = await startTask();
            const outcome = await waitForTask(options(taskUri));
            assert.equal(outcome.operation.state, "SUCCEEDED");
            const elapsed = time.now - START;
            assert.ok(elapsed >= 2000, String(elapsed));
            assert.ok(
                elapsed <= 2000 * 1.05 + 10,
                `seen ended ${elapsed - 2000} ms late (waits ${pollWaits.join(", ")})`,
            );
            assert.ok(outcome.polls <= Math.log2(2000 / 100) + 3, `${outcome.polls} polls`);
            assert.ok(
                seen.some((operation) => operation.state === "RUNNING"),
                seen.map((operation) => operation.state).join(),
            );
        });

        it("waits the server's suggested interval between polls", async () => {
            await start({ taskCompleteAfterPolls: 4, suggestedPollingIntervalSeconds: 2 });
            const taskUri = await startTask();
            const outcome = await waitForTask(options(taskUri));
            assert.equal(outcome.polls, 4);
            assert.deepEqual(pollWaits, [2000, 2000, 2000]);
            assert.ok(seen.every((operation) => operation.suggestedPollingIntervalSeconds === 2));
        });

        it("follows the client's retries of a poll that failed transiently", async () => {
            const taskUri = await startTask();
            server.addFault({ match: { method: "GET" }, times: 2, fault: { status: 503 } });
            const outcome = await waitForTask(options(taskUri));
            assert.equal(outcome.polls, 4);
            assert.equal(time.waits.length, 2);
            assert.deepEqual(
                server.requests().map((entry) => entry.status),
                [503, 503, 200, 200, 200, 200],
            );
        });
    });

    describe("a task that fails", () => {
        it("rejects with TaskFailedError carrying the task's error message", async () => {
            const taskUri = await startTask({ task: { fails: "the disk caught fire" } });
            const error = await rejection(waitForTask(options(taskUri)));
            assert.ok(error instanceof TaskFailedError, inspect(error));
            assert.equal(error.name, "TaskFailedError");
            assert.equal(
                error.message,
                `task ${idOf(taskUri)} (Create datastore ds19) failed: the disk caught fire (INJECTED_FAILURE)`,
            );
            assert.equal(error.lastSeen?.state, "FAILED");
            assert.deepEqual(error.lastSeen?.error, { errorCode: "INJECTED_FAILURE", message: "the disk caught fire" });
            assert.equal(error.taskId, idOf(taskUri));
            assert.equal(error.taskUri, taskUri);
            assert.deepEqual(
                seen.map((operation) => operation.state),
                ["QUEUED", "RUNNING", "RUNNING", "FAILED"],
            );
            assert.equal(polls(taskUri), 4);
        });
    });

    describe("answers that are not a task in a known state", () => {
        it("rejects with TaskPollingError caused by MalformedResponseError for an unknown state, at once", async () => {
            const taskUri = await startTask();
            // The second poll reads a state the client does not know.
            const onProgress = faultAfterFirstPoll({ fault: { taskState: "PAUSED" } });
            const error = await rejection(waitForTask(options(taskUri, { onProgress })));
            assert.ok(error instanceof TaskPollingError, inspect(error));
            assert.equal(error.name, "TaskPollingError");
            const cause = error.cause;
            assert.ok(cause instanceof MalformedResponseError, inspect(cause));
            assert.equal(cause.method, "GET");
            assert.equal(cause.path, taskUri);
            assert.equal(cause.problem, 'the task is in an unknown state "PAUSED"');
            assert.equal(error.lastSeen, seen[0]);
            assert.equal(error.lastSeen?.state, "QUEUED");
            assert.equal(
                error.message,
                `could not follow task ${idOf(taskUri)} (last seen QUEUED 0%): the task API's answer to GET ${taskUri} ` +
                    'is not valid: the task is in an unknown state "PAUSED"',
            );
            assert.equal(seen.length, 1, "the unknown state must not be reported as progress");
            assert.equal(polls(taskUri), 2, "an unknown state is not polled again");
            assert.equal(pollWaits.length, 1);
        });

        it("names the task by its URI when the very first answer is unknown", async () => {
            const taskUri = await startTask();
            server.addFault({ fault: { taskState: "succeeded" } });
            const error = await rejection(waitForTask(options(taskUri)));
            assert.ok(error instanceof TaskPollingError, inspect(error));
            assert.ok(error.cause instanceof MalformedResponseError);
            assert.equal(error.lastSeen, undefined);
            assert.equal(error.taskId, idOf(taskUri));
            assert.match(error.message, /^could not follow task http:\/\/.*\(last seen never seen\): /);
            assert.deepEqual(seen, []);
        });

        it("rejects with TaskPollingError caused by MalformedResponseError for an answer that is not a task", async () => {
            const error = await rejection(waitForTask(options(`${server.url}${DATASTORES_PATH}`)));
            assert.ok(error instanceof TaskPollingError, inspect(error));
            assert.ok(error.cause instanceof MalformedResponseError, inspect(error.cause));
            assert.equal(error.cause.problem, "the answer is not a task (no id or state)");
        });

        it("rejects with TaskPollingError caused by MalformedResponseError for an answer that is not JSON", async () => {
            const taskUri = await startTask();
            server.addFault({ match: { method: "GET" }, fault: { invalidJson: true } });
            const error = await rejection(waitForTask(options(taskUri)));
            assert.ok(error instanceof TaskPollingError, inspect(error));
            assert.ok(error.cause instanceof MalformedResponseError, inspect(error.cause));
            assert.equal(polls(taskUri), 1);
        });
    });

    describe("polls that keep failing", () => {
        it("reject with TaskPollingError caused by the client's error, keeping the last state seen", async () => {
            const taskUri = await startTask();
            const onProgress = faultAfterFirstPoll({ match: { method: "GET" }, times: 10, fault: { status: 500 } });
            const error = await rejection(waitForTask(options(taskUri, { onProgress })));
            assert.ok(error instanceof TaskPollingError, inspect(error));
            assert.ok(error.cause instanceof TaskApiError, inspect(error.cause));
            assert.equal(error.cause.status, 500);
            assert.equal(error.lastSeen?.state, "QUEUED");
            assert.match(
                error.message,
                /\(last seen QUEUED 0%\): the task API answered GET .* with 500 \(internal_error\)/,
            );
            // One good poll, then the client's three attempts.
            assert.deepEqual(
                server.requests().map((entry) => entry.status),
                [200, 500, 500, 500],
            );
        });

        it("reject with TaskPollingError when the task is not found", async () => {
            const taskUri = `${server.url}/data-services/v1beta1/async-operations/00000000-0000-4000-8000-000000000000`;
            const error = await rejection(waitForTask(options(taskUri)));
            assert.ok(error instanceof TaskPollingError, inspect(error));
            assert.ok(error.cause instanceof TaskApiError);
            assert.equal(error.cause.status, 404);
            assert.equal(error.taskId, "00000000-0000-4000-8000-000000000000");
        });
    });

    describe("the deadline", () => {
        it("rejects with TaskDeadlineError and the last state, after one last look at the deadline", async () => {
            // RUNNING from the third poll on; about six polls fit in the second.
            await start({ taskCompleteAfterPolls: 20 });
            const taskUri = await startTask();
            const deadline = START + 1000;
            const error = await rejection(waitForTask(options(taskUri, { startedAt: START, deadline })));
            assert.ok(error instanceof TaskDeadlineError, inspect(error));
            assert.equal(error.name, "TaskDeadlineError");
            assert.equal(time.now, deadline, "the last sleep ends at the deadline");
            const slept = pollWaits.reduce((sum, wait) => sum + wait, 0);
            assert.ok(Math.abs(slept - 1000) < 0.01, String(slept));
            assert.equal(polls(taskUri), pollWaits.length + 1);
            assert.equal(error.lastSeen, seen.at(-1));
            assert.equal(error.lastSeen?.state, "RUNNING");
            assert.equal(
                error.message,
                `gave up waiting for task ${idOf(taskUri)} after 1 s (last seen RUNNING ${error.lastSeen?.progressPercent}%); ` +
                    "raise the resource's timeouts if the task needs longer",
            );
        });

        it("reports the time since the task started, not since waiting started", async () => {
            await start({ taskCompleteAfterPolls: 1000 });
            const taskUri = await startTask();
            const error = await rejection(
                waitForTask(options(taskUri, { startedAt: START - 90_000, deadline: START + 500 })),
            );
            assert.ok(error instanceof TaskDeadlineError, inspect(error));
            assert.match(error.message, / after 2m \(last seen /);
        });

        it("clamps even the server's suggested interval to the deadline", async () => {
            await start({ taskCompleteAfterPolls: 1000, suggestedPollingIntervalSeconds: 2 });
            const taskUri = await startTask();
            const error = await rejection(waitForTask(options(taskUri, { deadline: START + 3000 })));
            assert.ok(error instanceof TaskDeadlineError, inspect(error));
            assert.deepEqual(pollWaits, [2000, 1000]);
            assert.equal(polls(taskUri), 3);
        });

        it("looks once, without waiting, when it has already passed", async () => {
            await start({ taskCompleteAfterPolls: 1000 });
            const taskUri = await startTask();
            const error = await rejection(waitForTask(options(taskUri, { deadline: START - 1 })));
            assert.ok(error instanceof TaskDeadlineError, inspect(error));
            assert.equal(polls(taskUri), 1);
            assert.deepEqual(pollWaits, []);
            assert.equal(error.lastSeen?.state, "QUEUED");
        });

        it("does not beat a task seen ended on that last look", async () => {
            await start({ taskCompleteAfterPolls: 1 });
            const taskUri = await startTask();
            const outcome = await waitForTask(options(taskUri, { deadline: START - 1 }));
            assert.equal(outcome.operation.state, "SUCCEEDED");
        });
    });

    describe("the abort signal", () => {
        it("aborted during a sleep rejects with TaskInterruptedError and the last state seen", async () => {
            const taskUri = await startTask();
            const controller = new AbortController();
            time.onWait = (_ms, count) => {
                if (count === 2) controller.abort(new Error("SIGINT"));
            };
            const error = await rejection(waitForTask(options(taskUri, { signal: controller.signal })));
            assert.ok(error instanceof TaskInterruptedError, inspect(error));
            assert.equal(error.name, "TaskInterruptedError");
            assert.equal(polls(taskUri), 2);
            assert.equal(pollWaits.length, 2);
            assert.equal(error.lastSeen, seen[1]);
            assert.equal(error.lastSeen?.state, "RUNNING");
            assert.equal(error.message, `interrupted while waiting for task ${idOf(taskUri)} (last seen RUNNING 25%)`);
        });

        it("already aborted rejects with TaskInterruptedError before any poll", async () => {
            const taskUri = await startTask();
            const error = await rejection(waitForTask(options(taskUri, { signal: AbortSignal.abort() })));
            assert.ok(error instanceof TaskInterruptedError, inspect(error));
            assert.equal(error.lastSeen, undefined);
            assert.equal(error.taskId, idOf(taskUri));
            assert.equal(polls(taskUri), 0);
            assert.match(error.message, /\(last seen never seen\)$/);
        });

        it("aborted during a poll rejects with TaskInterruptedError, not TaskPollingError", async () => {
            const controller = new AbortController();
            await start({ taskCompleteAfterPolls: 4, sleep: heldSleep(() => controller.abort(new Error("SIGINT"))) });
            const taskUri = await startTask();
            // The second poll's answer is held until the signal is aborted.
            const onProgress = faultAfterFirstPoll({ match: { method: "GET" }, fault: { delayMs: 60_000 } });
            const error = await rejection(waitForTask(options(taskUri, { signal: controller.signal, onProgress })));
            assert.ok(error instanceof TaskInterruptedError, inspect(error));
            assert.equal(error.lastSeen, seen[0]);
            assert.deepEqual(time.waits, [], "the client does not retry an aborted request");
        });
    });
});
