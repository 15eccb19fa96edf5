// Errors that always give a next step (issue 20, part 2), as a user sees them under the REAL Pulumi CLI:
// what `pulumi` prints, and the engine's own event log (`--event-log`, which needs PULUMI_DEBUG_COMMANDS).
// A 401 names the setting that holds the token (the Datastore's, or the AsyncResource's own), never the
// token; a failed task says what the next `up` does and what `untaint: true` does, and the next `up`
// does it; an unreachable API is said once, without the lookup's URL-encoded query and without
// JavaScript stack frames under the Stack row; and a refresh or destroy that runs with the URL the last
// `up` stored says that the stack's config now names another and what to run, which then works.

import { strict as assert } from "node:assert";
import { readFile } from "node:fs/promises";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { join } from "node:path";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { startTaskApiServer, type TaskApiServer } from "../../provider/taskApiServer/taskApiServer";
import { DATASTORES_PATH } from "../../provider/tasks/protocol/wire";
import { CliProject, type ResourceSpec } from "../support/cliProject";
import { TOKEN } from "../support/datastoreFixture";
import { greenlakeArgs } from "../support/greenlakeResource";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { datastoreInputs } from "../tasks/client/support";

const WRONG_TOKEN = "tok-WRONG-5e1d0b";
const FAST_POLLS = { "pulumi-lifecycle:taskPollInitialMs": "20", "pulumi-lifecycle:taskPollMaxMs": "50" };
const DATASTORE_TYPE = "pulumi-nodejs:dynamic/tasks:Datastore";

/** What one `pulumi` command showed: its output, its exit code, and the engine's diagnostics. */
interface Shown {
    readonly code: number | null;
    readonly output: string;
    readonly diagnostics: { urn?: string; severity: string; message: string }[];
}

/** The part of the output under "Diagnostics:", where the CLI lists each resource's messages once. */
function diagnosticsSection(output: string): string {
    const start = output.indexOf("Diagnostics:");
    const end = output.indexOf("\nResources:", start);
    return start < 0 ? "" : output.slice(start, end < 0 ? undefined : end);
}

function count(text: string, phrase: string): number {
    return text.split(phrase).length - 1;
}

/** A line of a JavaScript stack trace: `    at Foo.bar (/path/file.js:75:27)`. */
const STACK_FRAME = /^\s*at .*[(\s/][^\s]*:\d+:\d+\)?\s*$/m;

const ds19 = (args: Record<string, unknown> = {}): ResourceSpec => ({
    type: "Datastore",
    name: "ds19",
    args: { ...datastoreInputs(), ...args },
});

/** A tasks.AsyncResource of the greenlake dialect against the bundled server, with its own token settings. */
const store = (url: string, args: Record<string, unknown> = {}): ResourceSpec => ({
    type: "AsyncResource",
    name: "store",
    args: { ...greenlakeArgs(url, "st1", { tokenConfig: "widgets:token", tokenEnv: "GREENLAKE_TOKEN" }), ...args },
});

/** A TCP relay to `target`: a URL that can stop answering while the API behind it keeps its data. */
async function relay(target: URL): Promise<{ url: string; close(): Promise<void> }> {
    const sockets = new Set<Socket>();
    const server: Server = createServer((inbound) => {
        const outbound = tcpConnect(Number(target.port), target.hostname);
        for (const socket of [inbound, outbound]) {
            sockets.add(socket);
            socket.on("close", () => sockets.delete(socket));
            socket.on("error", () => undefined);
        }
        inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    return {
        url: `http://127.0.0.1:${port}`,
        close: () =>
            new Promise<void>((resolve) => {
                for (const socket of sockets) socket.destroy();
                server.close(() => resolve());
            }),
    };
}

describe("errors that give a next step, under the real Pulumi CLI", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let api: TaskApiServer;
    const cleanups: (() => Promise<void>)[] = [];
    const shown: string[] = [];

    before(function () {
        cli = requirePulumiCli(this);
    });
    beforeEach(async () => {
        api = await startTaskApiServer({ token: TOKEN, taskCompleteAfterPolls: 3 });
        shown.length = 0;
    });
    afterEach(async () => {
        try {
            for (const text of shown) {
                assert.ok(!text.includes(TOKEN), "the API token never reaches the output or the event log");
                assert.ok(!text.includes(WRONG_TOKEN), "nor a wrong one");
            }
        } finally {
            for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
            await api.close();
        }
    });

    async function project(config: Record<string, string>, secrets: Record<string, string>): Promise<CliProject> {
        const made = await CliProject.create(cli, { name: "guidance", config: { ...FAST_POLLS, ...config }, secrets });
        cleanups.push(() => made.cleanup());
        return made;
    }

    /** A project whose Datastores use the task API at `url` with `token` (a secret). */
    const datastoreProject = (url: string, token: string) =>
        project({ "pulumi-lifecycle:taskApiUrl": url }, { "pulumi-lifecycle:taskApiToken": token });

    /** Runs `pulumi <args>` as a user would, with the engine's event log beside it. */
    async function pulumi(on: CliProject, args: string[], env: Record<string, string> = {}): Promise<Shown> {
        const log = join(on.temp.dir, `events-${Date.now()}.jsonl`);
        const run = on.spawn([...args, "--yes", "--non-interactive", "--event-log", log], {
            PULUMI_DEBUG_COMMANDS: "true",
            ...env,
        });
        const { code, output } = await run.done;
        const text = await readFile(log, "utf8").catch(() => "");
        const events = text
            .split("\n")
            .filter((line) => line.trim() !== "")
            .map((line) => JSON.parse(line) as EngineEvent);
        const diagnostics = events.flatMap((event) => (event.diagnosticEvent ? [event.diagnosticEvent] : []));
        shown.push(output, text);
        return { code, output, diagnostics };
    }

    /** An up of `resource` whose create task fails: what the CLI lists under "Diagnostics:". */
    async function upWithFailingCreate(on: CliProject, resource: ResourceSpec): Promise<string> {
        await on.program([resource]);
        api.addFault({
            match: { method: "POST", path: DATASTORES_PATH },
            fault: { task: { fails: "disk array offline" } },
        });
        const failed = await pulumi(on, ["up", "--skip-preview"]);
        assert.notEqual(failed.code, 0);
        return diagnosticsSection(failed.output);
    }

    /** The engine's error diagnostics about the resources of `type` (not the Stack's). */
    const errorsOn = (run: Shown, type: string) =>
        run.diagnostics.filter((d) => d.severity === "error" && d.urn?.includes(`::${type}::`)).map((d) => d.message);

    it("a 401 on a Datastore names pulumi-lifecycle:taskApiToken and TASK_API_TOKEN, never the token", async () => {
        const on = await datastoreProject(api.url, WRONG_TOKEN);
        await on.program([ds19()]);
        const up = await pulumi(on, ["up", "--skip-preview"]);
        assert.notEqual(up.code, 0);
        const [error, ...more] = errorsOn(up, DATASTORE_TYPE);
        assert.equal(more.length, 0, `one error: ${JSON.stringify(more)}`);
        assert.match(error ?? "", /with 401 \(unauthorized\)/);
        assert.match(error ?? "", /pulumi-lifecycle:taskApiToken/);
        assert.match(error ?? "", /TASK_API_TOKEN/);
        assert.match(
            diagnosticsSection(up.output),
            /The API did not accept the token: check the token in stack config pulumi-lifecycle:taskApiToken/,
        );
    });

    it("a 401 on an AsyncResource names its own token settings (api.tokenConfig, api.tokenEnv), never the token", async () => {
        const on = await project({}, { "widgets:token": WRONG_TOKEN });
        await on.program([store(api.url)]);
        const up = await pulumi(on, ["up", "--skip-preview"]);
        assert.notEqual(up.code, 0);
        const [error] = errorsOn(up, "pulumi-nodejs:dynamic/tasks:AsyncResource");
        assert.match(error ?? "", /with 401 \(unauthorized\)/);
        assert.match(error ?? "", /stack config widgets:token \(api\.tokenConfig/);
        assert.match(error ?? "", /the GREENLAKE_TOKEN environment variable \(api\.tokenEnv\)/);
        assert.ok(!(error ?? "").includes("pulumi-lifecycle:taskApiToken"), "not the Datastore's setting");
    });

    it("a Datastore whose create task fails: the error says the next up replaces it (untaint cannot keep one in ERROR), and it does", async () => {
        const on = await datastoreProject(api.url, TOKEN);
        const said = await upWithFailingCreate(on, ds19());
        assert.match(said, /ended failed \(FAILED\): INJECTED_FAILURE: disk array offline/);
        assert.match(said, /the next `pulumi up` replaces it \(deletes it, then creates it again\)/);
        assert.match(said, /`untaint: true` cannot keep it: the API has it in a state it does not recover from/);
        assert.equal(api.datastores()[0]?.state, "ERROR", "what the failed task left is in ERROR");

        const next = await pulumi(on, ["up", "--skip-preview"]);
        assert.equal(next.code, 0, next.output);
        assert.match(next.output, /\+-\s+pulumi-nodejs:dynamic\/tasks:Datastore ds19 replaced/);
        assert.deepEqual(
            api.datastores().map((d) => d.state),
            ["OK"],
            "the one in ERROR was deleted, a working one made",
        );
    });

    it("an AsyncResource whose create operation fails: the error says the next up replaces it and untaint: true keeps it, and it does", async () => {
        const on = await project({}, { "widgets:token": TOKEN });
        const said = await upWithFailingCreate(on, store(api.url));
        assert.match(said, /the next `pulumi up` replaces it \(deletes it, then creates it again\)/);
        assert.match(said, /set `untaint: true` to keep it instead: that `up` records it as the API has it/);
        const made = api.datastores()[0]?.id;
        assert.ok(made);

        await on.program([store(api.url, { untaint: true })]);
        const kept = await pulumi(on, ["up", "--skip-preview"]);
        assert.equal(kept.code, 0, kept.output);
        const [state] = (await on.state()).resources;
        assert.equal(state?.outputs?.tainted, false);
        assert.equal(state?.outputs?.resourceId, made, "the same one, kept");
        assert.equal(api.datastores().length, 1);
    });

    it("an unreachable API is said once: without the lookup's encoded query, without stack frames", async () => {
        const gone = await relay(new URL(api.url));
        await gone.close();
        const on = await datastoreProject(gone.url, TOKEN);
        await on.program([ds19()]);
        const up = await pulumi(on, ["up", "--skip-preview"]);
        assert.notEqual(up.code, 0);
        const said = diagnosticsSection(up.output);
        assert.equal(count(said, "could not reach the task API"), 1, said);
        assert.match(said, new RegExp(`could not reach the task API at ${gone.url} for GET ${DATASTORES_PATH} after`));
        assert.match(said, /ECONNREFUSED/);
        assert.ok(!/%20|%27|filter=/.test(up.output), `no URL-encoded query:\n${said}`);
        assert.ok(!STACK_FRAME.test(up.output), `no stack frames:\n${up.output}`);
    });

    it("refresh and destroy with the URL the last up stored: say the stack's config now names another and what to run; destroy --run-program then works", async () => {
        const before = await relay(new URL(api.url));
        cleanups.push(() => before.close());
        const on = await datastoreProject(before.url, TOKEN);
        await on.program([ds19()]);
        const up = await pulumi(on, ["up", "--skip-preview"]);
        assert.equal(up.code, 0, up.output);
        assert.equal(api.datastores().length, 1);

        // The API moves: the old URL stops answering, the stack's config names the new one.
        await before.close();
        const after = await relay(new URL(api.url));
        cleanups.push(() => after.close());
        await on.stack.setConfig("pulumi-lifecycle:taskApiUrl", { value: after.url });

        const expectations = (run: Shown) => {
            assert.notEqual(run.code, 0);
            const said = diagnosticsSection(run.output);
            assert.equal(count(said, "could not reach the task API"), 1, `said once:\n${said}`);
            assert.match(said, new RegExp(`${before.url} is the URL the last \`pulumi up\` stored`));
            assert.match(said, new RegExp(`Pulumi\\.dev\\.yaml now sets pulumi-lifecycle:taskApiUrl to ${after.url}`));
            assert.match(said, /run `pulumi destroy --run-program` \(or `pulumi refresh --run-program`\)/);
            assert.ok(!STACK_FRAME.test(run.output), `no stack frames under the Stack row:\n${run.output}`);
            assert.ok(!/%20|%27|filter=/.test(run.output), `no URL-encoded query:\n${said}`);
            const onStack = run.diagnostics.filter(
                (d) => d.urn?.includes("pulumi:pulumi:Stack") && d.message.includes("could not reach"),
            );
            assert.deepEqual(onStack, [], "nothing of it under the Stack row");
        };
        expectations(await pulumi(on, ["refresh"]));
        // TASK_API_URL does not override the stored stack config (see README): the same error.
        expectations(await pulumi(on, ["destroy"], { TASK_API_URL: after.url }));
        assert.equal(api.datastores().length, 1, "nothing was deleted");

        const destroyed = await pulumi(on, ["destroy", "--run-program"]);
        assert.equal(destroyed.code, 0, destroyed.output);
        assert.equal(api.datastores().length, 0, "deleted through today's URL");
        assert.deepEqual((await on.state()).resources, []);
    });
});
