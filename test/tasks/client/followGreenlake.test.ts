// Guards following a GreenLake async operation to its end (provider/tasks/client/followOperation.ts with
// the greenlake dialect) against the package's task API server, the guarantees waitForTask's suite pinned
// moved onto the engine that replaces it: an operation already ended is seen after one look, without a
// wait, even at a deadline already passed; a state the API does not document ends it as failed, saying
// so; and stopping short is an OperationWaitError carrying the handle: "polling" (an answer that is not
// JSON, an operation the API does not have) and "interrupted" (the signal, before any look). Port 0, an
// injected clock moved only by a recording fake sleep.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import { seededRandom } from "../../../provider/shared/random";
import type { Fault } from "../../../provider/taskApiServer/control";
import type { TaskApiServer, TaskApiServerOptions } from "../../../provider/taskApiServer/taskApiServer";
import {
    type FollowOptions,
    type FollowOutcome,
    followOperation,
} from "../../../provider/tasks/client/followOperation";
import { DEFAULT_POLL_SCHEDULE } from "../../../provider/tasks/client/pollSchedule";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { OperationWaitError } from "../../../provider/tasks/errors/operationWaitError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import type { OperationHandle, OperationView } from "../../../provider/tasks/protocol/dialects/dialect";
import { greenlakeDialect } from "../../../provider/tasks/protocol/dialects/greenlake";
import { DATASTORES_PATH, operationUri } from "../../../provider/tasks/protocol/wire";
import { createBody, FakeTime, REQUEST_TIMEOUT_MS, Servers, START, TOKEN } from "./support";

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
    afterEach(() => servers.closeAll());

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

    describe("an operation that succeeds", () => {
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
    });

    describe("answers that are not an operation in a documented state", () => {
        const UNDOCUMENTED =
            /^the operation's state "SUSPENDED" is none of INITIALIZED, RUNNING, PAUSED, UNSPECIFIED, SUCCEEDED, FAILED, TIMEDOUT, CANCELLED$/;

        it("ends an operation whose first answer is in such a state as failed, saying so, at once", async () => {
            const handle = await startTask();
            server.addFault({ fault: { taskState: "SUSPENDED" } });
            const outcome = await followOperation(options(handle));
            assert.equal(outcome.view.state, "failed");
            assert.match(outcome.view.error ?? "", UNDOCUMENTED);
            assert.equal(outcome.polls, 1);
            assert.deepEqual(pollWaits, []);
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
        it("does not beat an operation seen ended on that last look", async () => {
            await start({ taskCompleteAfterPolls: 1 });
            const handle = await startTask();
            const outcome = await followOperation(options(handle, { deadline: START - 1 }));
            assert.equal(outcome.view.state, "succeeded");
        });
    });

    describe("the abort signal", () => {
        it("already aborted stops with OperationWaitError 'interrupted' before any poll", async () => {
            const handle = await startTask();
            const error = await rejection(followOperation(options(handle, { signal: AbortSignal.abort() })));
            assert.equal(error.stop, "interrupted");
            assert.deepEqual(error.handle, handle);
            assert.equal(error.lastSeen, undefined);
            assert.equal(polls(handle), 0);
            assert.match(error.message, /\(never seen\): interrupted/);
        });
    });
});
