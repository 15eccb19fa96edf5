// Guards seed 003 (a resource created by an asynchronous task) and seed 004 (partial state, no zombies)
// for tasks.Datastore under the REAL Pulumi CLI, against the bundled task API server on port 0: a full
// create, POST failing, polls failing (the engine's own partial state, then replace or untaint), a
// datastore deleted behind the stack's back (GET 404), Ctrl-C as a terminal sends it while a task is
// polled, and a create killed outright resumed by its token. Duplicates and zombies are counted on the
// server; the API token, set as a secret, is looked for in the exported state and in every output.

import { strict as assert } from "node:assert";
import { startTaskApiServer, type TaskApiServer } from "../../provider/taskApiServer/taskApiServer";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../provider/tasks/protocol/wire";
import { assertOk, CliProject, type CliRun, type ResourceSpec, type StateResource } from "../support/cliProject";
import { CLUSTER, GIB, HCI, TOKEN } from "../support/datastoreFixture";
import { providersIn, until } from "../support/processes";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";

const CREATE_TOKEN = "6f1c2a52-6c2e-4d8e-9d8a-3f0a8f6f2b11";
const HOUR = 3_600_000;

describe("seed 003/004 flows for tasks.Datastore under the real Pulumi CLI", function () {
    this.timeout(240_000);
    let cli: PulumiCli;
    let api: TaskApiServer;
    let project: CliProject;
    const outputs: string[] = [];

    const ds19 = (args: Record<string, unknown> = {}): ResourceSpec => ({
        type: "Datastore",
        name: "ds19",
        args: {
            hciClusterUuid: HCI,
            clusterId: CLUSTER,
            name: "ds19",
            sizeInBytes: 16 * GIB,
            datastoreType: "VMFS",
            createToken: CREATE_TOKEN,
            ...args,
        },
    });
    const record = async (run: Promise<CliRun>): Promise<CliRun> => {
        const result = await run;
        outputs.push(result.stdout, result.stderr, ...result.errors);
        return result;
    };
    const datastore = async (): Promise<StateResource | undefined> =>
        (await project.state()).resources.find((r) => r.type === "pulumi-nodejs:dynamic/tasks:Datastore");
    const polls = () => api.requests().filter((r) => r.method === "GET" && r.path.startsWith(ASYNC_OPERATIONS_PATH));

    before(function () {
        cli = requirePulumiCli(this);
    });
    beforeEach(async () => {
        // Tasks end on their third poll, so no test waits for time to pass; a test that needs a task to
        // run until it says so gives it an hour of the server's clock (longTask) and moves the clock.
        api = await startTaskApiServer({ token: TOKEN, taskCompleteAfterPolls: 3 });
        project = await CliProject.create(cli, {
            name: "datastore-cli",
            config: {
                "pulumi-lifecycle:taskApiUrl": api.url,
                "pulumi-lifecycle:taskPollInitialMs": "20",
                "pulumi-lifecycle:taskPollMaxMs": "50",
            },
            secrets: { "pulumi-lifecycle:taskApiToken": TOKEN },
        });
        outputs.length = 0;
    });
    afterEach(async () => {
        try {
            const exported = await project.storedState();
            const at = exported.indexOf(TOKEN);
            assert.ok(at < 0, `the API token reached the state: ${exported.slice(Math.max(0, at - 300), at + 40)}`);
            assert.ok(!outputs.some((text) => text.includes(TOKEN)), "the API token never reaches the CLI's output");
        } finally {
            await project.cleanup();
            await api.close();
        }
    });

    /** Makes the next create's task run for an hour of the server's clock, until `finishTasks`. */
    function longTask(): void {
        api.addFault({ match: { method: "POST", path: DATASTORES_PATH }, fault: { task: { durationMs: HOUR } } });
    }

    /** Ends the long task: moves the server's clock past its end. */
    function finishTasks(): void {
        api.advanceClock(HOUR);
    }

    it("creates through POST, task and GET; up again is the same; destroy deletes it", async () => {
        await project.program([ds19()]);
        const created = await record(project.up());
        assertOk(created);
        assert.deepEqual(created.steps, ["create ds19"]);
        const state = await datastore();
        assert.equal(state?.id, `${HCI}/${CLUSTER}/ds19`);
        assert.equal(state?.outputs?.state, "OK");
        assert.equal(state?.outputs?.datastoreId, api.datastores()[0]?.id);
        assert.equal(api.stats().datastoresCreated, 1);

        assert.ok(!created.stdout.includes("is plain stack config"), "a secret token draws no warning");
        const again = await record(project.up());
        assertOk(again);
        assert.deepEqual(again.steps, ["same ds19"]);

        const destroyed = await record(project.destroy());
        assertOk(destroyed);
        assert.deepEqual(destroyed.steps, ["delete ds19"]);
        assert.equal(api.datastores().length, 0);
    });

    it("a token set as plain config: the program warns that Pulumi stores it in clear, as it does", async () => {
        const plain = await CliProject.create(cli, {
            name: "datastore-plain-token",
            config: {
                "pulumi-lifecycle:taskApiUrl": api.url,
                "pulumi-lifecycle:taskApiToken": TOKEN,
                "pulumi-lifecycle:taskPollInitialMs": "20",
            },
        });
        try {
            await plain.program([ds19()]);
            const up = await plain.up();
            assertOk(up);
            assert.match(up.stdout, /pulumi-lifecycle:taskApiToken is plain stack config.*pulumi config set --secret/s);
            assert.ok((await plain.storedState()).includes(TOKEN), "Pulumi itself stores plain config in clear");
            const [resource] = (await plain.state()).resources;
            assert.ok(!JSON.stringify(resource).includes(TOKEN), "never in the datastore's own state");
        } finally {
            await plain.cleanup();
        }
    });

    it("POST answered 500 every time: a pending create is recorded (outcome unknown); the next up creates once", async () => {
        await project.program([ds19()]);
        api.addFault({ match: { method: "POST", path: DATASTORES_PATH }, times: 1000, fault: { status: 500 } });
        const failed = await record(project.up());
        assert.equal(failed.ok, false);
        assert.deepEqual(failed.steps, ["create ds19 (failed)"]);
        assert.equal(api.datastores().length, 0, "no zombie");
        const pending = await datastore();
        assert.ok(pending, "a 500 may have done the work: the stack keeps the create");
        assert.equal(pending.outputs?.datastoreId, undefined);
        assert.match(String(pending.initErrors), /outcome is unknown .* by replaying its createToken/);
        api.clearFaults();
        const healed = await record(project.up());
        assertOk(healed);
        assert.deepEqual(healed.steps, ["update ds19"]);
        assert.equal(api.stats().datastoresCreated, 1, "no duplicate");
        const recorded = await datastore();
        assert.equal(recorded?.outputs?.datastoreId, api.datastores()[0]?.id);
        assert.equal(recorded?.initErrors, undefined);
    });

    it("polls fail: the engine records partial, tainted state; the next up replaces it, leaving one datastore", async () => {
        await project.program([ds19()]);
        api.addFault({ match: { method: "GET", path: ASYNC_OPERATIONS_PATH }, times: 1000, fault: { status: 500 } });
        const failed = await record(project.up());
        assert.equal(failed.ok, false);
        assert.deepEqual(failed.steps, ["create ds19 (failed)"]);
        const partial = await datastore();
        assert.ok(partial, "the datastore the POST made is on record: not a zombie");
        assert.equal(partial.outputs?.tainted, true);
        assert.ok((partial.initErrors ?? []).length > 0, "the engine keeps the create's error as an init error");
        assert.equal(api.datastores().length, 1);

        api.clearFaults();
        const replaced = await record(project.up());
        assertOk(replaced);
        assert.deepEqual(replaced.steps, ["delete-replaced ds19", "replace ds19", "create-replacement ds19"]);
        assert.equal(api.datastores().length, 1, "the tainted one was deleted, one new one exists");
        assert.equal(api.stats().datastoresCreated, 2, "the first create and its replacement, nothing more");
        assert.equal((await datastore())?.outputs?.tainted, false);
    });

    it("polls fail, then untaint: the next up finds the datastore instead of replacing it", async () => {
        await project.program([ds19()]);
        api.addFault({ match: { method: "GET", path: ASYNC_OPERATIONS_PATH }, times: 1000, fault: { status: 500 } });
        assert.equal((await record(project.up())).ok, false);
        const madeId = api.datastores()[0]?.id;
        api.clearFaults();
        await project.program([ds19({ untaint: true })]);
        const untainted = await record(project.up());
        assertOk(untainted);
        assert.deepEqual(untainted.steps, ["update ds19"]);
        const state = await datastore();
        assert.equal(state?.outputs?.tainted, false);
        assert.equal(state?.outputs?.datastoreId, madeId);
        assert.equal(api.stats().datastoresCreated, 1);
    });

    it("GET 404: refresh forgets a datastore deleted outside Pulumi; the next up creates it again", async () => {
        await project.program([ds19()]);
        assertOk(await record(project.up()));
        const id = api.datastores()[0]?.id as string;
        const deleted = await fetch(`${api.url}${DATASTORES_PATH}/${id}`, {
            method: "DELETE",
            headers: { authorization: api.authorization },
        });
        assert.equal(deleted.status, 202);
        // The delete's task ends on its third poll.
        for (let poll = 0; poll < 3; poll++) {
            await fetch(`${api.url}${deleted.headers.get("location")}`, {
                headers: { authorization: api.authorization },
            });
        }
        assert.equal(api.datastores().length, 0);

        const refreshed = await record(project.refresh());
        assertOk(refreshed);
        assert.deepEqual(refreshed.steps, ["refresh ds19"]);
        assert.equal(await datastore(), undefined);

        const recreated = await record(project.up());
        assertOk(recreated);
        assert.deepEqual(recreated.steps, ["create ds19"]);
        assert.equal(api.datastores().length, 1);
    });

    for (const [how, interrupt] of [
        ["Ctrl-C in a terminal (SIGINT to the process group)", (pid: number) => process.kill(-pid, "SIGINT")],
        ["kill -INT of the CLI alone", (pid: number) => process.kill(pid, "SIGINT")],
    ] as const) {
        it(`${how}, once, while a task is polled: the up ends without waiting for the task, recording the create; the next up finishes it`, async () => {
            await project.program([ds19()]);
            longTask();
            const run = project.spawn(["up", "--yes", "--skip-preview", "--non-interactive"]);
            await until(() => polls().length > 0, run);
            // The engine sends Cancel to the provider and waits for running steps; the provider hears the
            // Cancel on its gRPC server (the SDK's own handler ignores it), stops waiting, and answers the
            // create as partial state, which the engine records.
            const interrupted = Date.now();
            interrupt(run.child.pid as number);
            const { code, output } = await run.done;
            console.log(`      the up ended ${((Date.now() - interrupted) / 1000).toFixed(1)} s after the interrupt`);
            outputs.push(output);
            assert.notEqual(code, 0);
            const state = await project.state();
            assert.deepEqual(state.pendingOperations, [], "the engine got the provider's answer");
            const partial = await datastore();
            assert.ok(partial, "the create is recorded");
            assert.equal(partial.outputs?.tainted, false, "not tainted: answered on the Cancel, not at a deadline");
            assert.equal(typeof partial.outputs?.taskId, "string");
            const task = api.operation(String(partial.outputs?.taskId));
            assert.ok(
                task && task.endedAt === undefined,
                "the up ended while the task still ran: it did not wait for it",
            );
            assert.match(
                String(partial.initErrors),
                /stopped following the create of datastore "ds19" .*: interrupted; it runs on at the API; the next `pulumi up` follows it to its end/,
            );
            assert.equal(api.datastores().length, 1);

            finishTasks();
            const finished = await record(project.up());
            assertOk(finished);
            assert.deepEqual(finished.steps, ["update ds19"]);
            assert.equal(api.stats().datastoresCreated, 1, "zero duplicates");
            assert.equal(api.datastores().length, 1, "zero zombies");
            const recorded = await datastore();
            assert.equal(recorded?.outputs?.datastoreId, api.datastores()[0]?.id);
            assert.equal(recorded?.outputs?.state, "OK");
            assert.equal(recorded?.initErrors, undefined);
        });
    }

    it("Ctrl-C twice at once while a task is polled: pending or recorded, the next up converges without a duplicate", async () => {
        await project.program([ds19()]);
        longTask();
        const run = project.spawn(["up", "--yes", "--skip-preview", "--non-interactive"]);
        await until(() => polls().length > 0, run);
        // The first Ctrl-C cancels (the provider hears it and answers within milliseconds); the second
        // terminates without waiting for answers. Which one the engine acts on first is a race: either
        // the create is a pending operation (the answer was not waited for) or partial state (it was).
        process.kill(-(run.child.pid as number), "SIGINT");
        process.kill(-(run.child.pid as number), "SIGINT");
        const { code, output } = await run.done;
        outputs.push(output);
        assert.notEqual(code, 0);
        const state = await project.state();
        const pending = state.pendingOperations.map((p) => p.type);
        const recorded = await datastore();
        assert.ok(
            (pending.length === 1 && pending[0] === "creating" && !recorded) ||
                (pending.length === 0 && recorded?.outputs?.taskId !== undefined),
            `the create is either pending or recorded: pending ${JSON.stringify(pending)}, recorded ${JSON.stringify(recorded?.outputs)}`,
        );
        console.log(`      the engine ${recorded ? "recorded the provider's answer" : "kept a pending create"}`);
        assert.equal(api.datastores().length, 1, "the datastore the POST made exists");
        await until(() => providersIn(project.dir).length === 0);

        finishTasks();
        const converged = await record(project.up());
        assertOk(converged);
        assert.deepEqual(converged.steps, [recorded ? "update ds19" : "create ds19"]);
        assert.equal(api.stats().datastoresCreated, 1, "zero duplicates");
        assert.equal(api.datastores().length, 1, "zero zombies");
        assert.equal((await datastore())?.outputs?.datastoreId, api.datastores()[0]?.id);
    });

    it("a create killed outright (SIGKILL) is resumed by its create token: one datastore, no duplicate", async () => {
        await project.program([ds19()]);
        longTask();
        const run = project.spawn(["up", "--yes", "--skip-preview", "--non-interactive"]);
        await until(() => polls().length > 0, run);
        process.kill(-(run.child.pid as number), "SIGKILL");
        await run.done;
        assert.equal(api.datastores().length, 1);
        // The engine starts plugins in a process group of their own: the kill does not reach the
        // provider, which must notice the engine is gone and exit rather than run on, orphaned.
        await until(() => providersIn(project.dir).length === 0);
        const pending = (await project.state()).pendingOperations;
        assert.deepEqual(
            pending.map((p) => p.type),
            ["creating"],
            "the engine knows a create was in flight",
        );

        // A killed CLI leaves its lock; the CLI's own message says to run `pulumi cancel`.
        const locked = await record(project.up());
        assert.equal(locked.ok, false);
        assert.match(locked.stderr, /pulumi cancel/);
        const cancel = await project.spawn(["cancel", "--yes", "--non-interactive"]).done;
        assert.equal(cancel.code, 0, cancel.output);

        finishTasks();
        const resumed = await record(project.up());
        assertOk(resumed);
        assert.deepEqual(resumed.steps, ["create ds19"]);
        assert.equal(api.stats().datastoresCreated, 1, "the token's replay found the first create: no duplicate");
        assert.equal((await datastore())?.outputs?.datastoreId, api.datastores()[0]?.id);
    });
});
