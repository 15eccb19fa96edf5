// followOperation against the generic dialect's server (test/dialects/servers/generic.ts, written from
// RFC 9110 and the Idempotency-Key draft, not from our client): a create submitted with its key and
// followed through the monitor to the widget it made; failed and canceled operations end as such;
// throttled looks are waited out; Ctrl-C and the deadline stop with the handle in the error, and a later
// follow of that handle sees the same operation to its end. Time is fake: no test waits.

import { strict as assert } from "node:assert";
import { seededRandom } from "../../../provider/shared/random";
import { followOperation } from "../../../provider/tasks/client/followOperation";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { OperationWaitError } from "../../../provider/tasks/errors/operationWaitError";
import type { OperationHandle } from "../../../provider/tasks/protocol/dialects/dialect";
import { GENERIC_DEFAULTS, genericDialect } from "../../../provider/tasks/protocol/dialects/generic";
import { type GenericServer, startGenericServer } from "../../dialects/servers/generic";
import { fixedOperations, scriptedFaults } from "../../dialects/servers/kit";
import { FakeTime, rejection } from "./support";

const TOKEN = "test-token";
const dialect = genericDialect(GENERIC_DEFAULTS);
const target = { collectionPath: "/widgets", itemPath: (id: string) => `/widgets/${encodeURIComponent(id)}` };

describe("followOperation (generic dialect, against its server)", () => {
    let server: GenericServer;
    let time: FakeTime;
    let client: TaskApiClient;

    beforeEach(() => {
        time = new FakeTime();
    });
    afterEach(() => server?.close());

    async function start(options: Parameters<typeof startGenericServer>[0] = {}): Promise<void> {
        server = await startGenericServer({ now: time.clock, ...options });
        client = new TaskApiClient({
            baseUrl: server.url,
            token: TOKEN,
            clock: time.clock,
            sleep: time.sleep,
            timeout: time.timeout,
            random: seededRandom(3),
        });
    }

    async function submitCreate(
        name: string,
        key = `key-${name}`,
    ): Promise<{ handle: OperationHandle; first: Parameters<typeof followOperation>[0]["first"] }> {
        const call = dialect.create(target, { name, size: 1 }, key);
        const answer = await client.send({
            method: call.method,
            path: call.path,
            body: call.body,
            ...(call.headers ? { headers: call.headers } : {}),
            repeatable: call.repeatable,
        });
        const submitted = dialect.submitted(
            "create",
            { status: answer.status, header: answer.header, body: answer.body },
            time.clock(),
        );
        assert.equal(submitted.kind, "operation");
        return submitted.kind === "operation" ? { handle: submitted.handle, first: submitted.view } : assert.fail();
    }

    function follow(handle: OperationHandle, extra: { signal?: AbortSignal; deadline?: number } = {}) {
        return followOperation({
            client,
            dialect,
            handle,
            what: "the create of widget",
            startedAt: time.clock(),
            deadline: extra.deadline ?? time.clock() + 20 * 60_000,
            signal: extra.signal,
            clock: time.clock,
            sleep: time.sleep,
            random: seededRandom(7),
            schedule: { initialMs: 100, maxMs: 10_000 },
        });
    }

    it("follows a create through its monitor to the widget it made", async () => {
        await start({ operations: fixedOperations({ pollsToFinish: 3 }) });
        const { handle, first } = await submitCreate("w1");
        const outcome = await followOperation({
            client,
            dialect,
            handle,
            first,
            what: "create",
            startedAt: time.clock(),
            deadline: time.clock() + 60_000,
            clock: time.clock,
            sleep: time.sleep,
            random: seededRandom(1),
            schedule: { initialMs: 100, maxMs: 10_000 },
        });
        assert.equal(outcome.view.state, "succeeded");
        assert.equal(outcome.polls, 3);
        const location = outcome.view.resourceLocation;
        assert.ok(location);
        const widget = await client.send<{ name: string }>({ method: "GET", path: location });
        assert.equal(widget.body?.name, "w1");
        // The first wait honoured the 202's Retry-After (1 s by default), within the hint bounds.
        assert.ok((time.waits[0] ?? 0) >= 1000, `first wait ${time.waits[0]}`);
        assert.deepEqual([server.counts().creates, server.counts().duplicates], [1, 0]);
    });

    it("ends failed and canceled operations as such, with the API's error", async () => {
        await start({ operations: fixedOperations({ pollsToFinish: 1, outcome: "failed" }) });
        const failed = await follow((await submitCreate("w2")).handle);
        assert.equal(failed.view.state, "failed");
        assert.ok(failed.view.error);
        server.setOperations(fixedOperations({ pollsToFinish: 1, outcome: "canceled" }));
        assert.equal((await follow((await submitCreate("w3")).handle)).view.state, "canceled");
    });

    it("waits out throttled looks at the monitor, in every hint form", async () => {
        await start({ operations: fixedOperations({ pollsToFinish: 2 }) });
        const { handle } = await submitCreate("w4");
        server.setFaults(
            scriptedFaults([
                { operation: "poll", fault: { kind: "throttle", hint: "seconds", seconds: 4 } },
                { operation: "poll", fault: { kind: "throttle", hint: "http-date", seconds: 6 } },
                { operation: "poll", fault: { kind: "server-error", status: 503 } },
            ]),
        );
        const outcome = await follow(handle);
        assert.equal(outcome.view.state, "succeeded");
        assert.ok(
            time.waits.some((ms) => ms >= 4000),
            `waits ${time.waits.join(", ")}`,
        );
    });

    it("stops on Ctrl-C with the handle, and a later follow of it sees the same operation end", async () => {
        await start({ operations: fixedOperations({ pollsToFinish: 4 }) });
        const { handle } = await submitCreate("w5");
        const controller = new AbortController();
        controller.abort(new Error("cancelled (Ctrl-C)"));
        const error = await rejection(follow(handle, { signal: controller.signal }));
        assert.ok(error instanceof OperationWaitError);
        assert.equal(error.stop, "interrupted");
        assert.deepEqual(error.handle, handle);
        const resumed = await follow(error.handle);
        assert.equal(resumed.view.state, "succeeded");
        assert.deepEqual([server.counts().creates, server.counts().duplicates], [1, 0]);
    });

    it("gives up at the deadline, naming it, with the handle to follow on", async () => {
        await start({ operations: fixedOperations({ pollsToFinish: 1000 }) });
        const { handle } = await submitCreate("w6");
        const deadline = time.clock() + 30_000;
        const error = await rejection(follow(handle, { deadline }));
        assert.ok(error instanceof OperationWaitError);
        assert.equal(error.stop, "deadline");
        assert.match(error.message, /after 30 s \(last seen pending\); raise the resource's timeouts/);
        // No wait reached past the deadline.
        assert.ok(time.clock() <= deadline, `slept to ${time.clock() - deadline} ms past the deadline`);
    });
});
