// What the Pulumi engine gives every provider, honoured by ours, under the REAL CLI:
// - `customTimeouts` (which the SDK's dynamic-provider server drops) ends a create when the user said,
//   with the create recorded as partial state that the next `up` finishes, and no second datastore;
// - progress lines land on the resource's own row (the engine's event carries the datastore's URN);
// - a change made outside Pulumi shows, after `pulumi refresh`, on the field that drifted in
//   `pulumi preview --diff`, for a hosts entry and for a datastore;
// - every create records the state-shape version.

import { strict as assert } from "node:assert";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTaskApiServer, type TaskApiServer } from "../../provider/taskApiServer/taskApiServer";
import { DATASTORES_PATH } from "../../provider/tasks/protocol/wire";
import { assertOk, CliProject, type ResourceSpec, type StateResource } from "../support/cliProject";
import { CLUSTER, GIB, HCI, TOKEN } from "../support/datastoreFixture";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";

const HOUR = 3_600_000;
const DATASTORE_TYPE = "pulumi-nodejs:dynamic/tasks:Datastore";

describe("the engine's contract (customTimeouts, progress on the row, drift in diffs) under the real Pulumi CLI", function () {
    this.timeout(240_000);
    let cli: PulumiCli;
    let api: TaskApiServer;
    let project: CliProject;

    const ds19 = (options?: ResourceSpec["options"], sizeInBytes = 16 * GIB): ResourceSpec => ({
        type: "Datastore",
        name: "ds19",
        args: { hciClusterUuid: HCI, clusterId: CLUSTER, name: "ds19", sizeInBytes, datastoreType: "VMFS" },
        ...(options ? { options } : {}),
    });
    const stored = async (type: string): Promise<StateResource | undefined> =>
        (await project.state()).resources.find((r) => r.type === type);

    before(function () {
        cli = requirePulumiCli(this);
    });
    beforeEach(async () => {
        api = await startTaskApiServer({ token: TOKEN, taskCompleteAfterPolls: 3 });
        project = await CliProject.create(cli, {
            name: "engine-contract",
            config: {
                "pulumi-lifecycle:taskApiUrl": api.url,
                "pulumi-lifecycle:taskPollInitialMs": "20",
                "pulumi-lifecycle:taskPollMaxMs": "200",
            },
            secrets: { "pulumi-lifecycle:taskApiToken": TOKEN },
        });
    });
    afterEach(async () => {
        await project.cleanup();
        await api.close();
    });

    it("customTimeouts.create ends a create whose task runs for an hour, tainted; the next up replaces it: one datastore", async () => {
        // The task runs for an hour of the server's clock, which only the test moves.
        api.addFault({ match: { method: "POST", path: DATASTORES_PATH }, fault: { task: { durationMs: HOUR } } });
        await project.program([ds19({ customTimeouts: { create: "3s" } })]);
        const timedOut = await project.up();
        assert.equal(timedOut.ok, false, "the create ends at its customTimeouts");
        assert.deepEqual(timedOut.steps, ["create ds19 (failed)"]);
        assert.ok(
            timedOut.errors.some((message) => message.includes("raise `customTimeouts.create`")),
            `the error names the setting that ended it:\n${timedOut.errors.join("\n")}`,
        );
        const partial = await stored(DATASTORE_TYPE);
        assert.ok(partial, "the create is on record (partial state), not forgotten");
        assert.ok(partial.outputs?.taskId, "with the task it started");
        assert.equal(partial.outputs?.tainted, true, "a create that did not finish is tainted, as a timed-out one is");
        assert.ok((partial.initErrors ?? []).length > 0, "the engine keeps the create's error as an init error");
        assert.equal(api.datastores().length, 1, "the task's datastore exists on the server");

        api.advanceClock(HOUR);
        const replaced = await project.up();
        assertOk(replaced);
        assert.deepEqual(replaced.steps, ["delete-replaced ds19", "replace ds19", "create-replacement ds19"]);
        assert.equal(api.datastores().length, 1, "the tainted one was deleted: no zombie");
        assert.equal(api.stats().datastoresCreated, 2, "the first create and its replacement, nothing more");
        const recorded = await stored(DATASTORE_TYPE);
        assert.equal(recorded?.outputs?.datastoreId, api.datastores()[0]?.id);
        assert.equal(recorded?.outputs?.state, "OK");
        assert.equal(recorded?.outputs?.stateVersion, 1, "the state-shape version is recorded");
    });

    it("customTimeouts wins over the timeouts input, which stays the fallback", async () => {
        api.addFault({ match: { method: "POST", path: DATASTORES_PATH }, fault: { task: { durationMs: HOUR } } });
        const spec = ds19({ customTimeouts: { create: "2s" } });
        await project.program([{ ...spec, args: { ...spec.args, timeouts: { create: "1h" } } }]);
        const timedOut = await project.up();
        assert.equal(timedOut.ok, false, "the create ends at 2 s, not after the hour the input allows");
        assert.ok(
            timedOut.errors.some((message) => message.includes("raise `customTimeouts.create`")),
            timedOut.errors.join("\n"),
        );
        api.advanceClock(HOUR);
        const replaced = await project.up();
        assertOk(replaced);
        assert.deepEqual(replaced.steps, ["delete-replaced ds19", "replace ds19", "create-replacement ds19"]);
        assert.equal(api.datastores().length, 1, "the timed-out one was deleted: no zombie");
    });

    it("customTimeouts.delete bounds a destroy's delete, even the first call of a fresh provider process", async () => {
        const spec = ds19({ customTimeouts: { delete: "2s" } });
        await project.program([{ ...spec, args: { ...spec.args, timeouts: { delete: "1h" } } }]);
        assertOk(await project.up());
        api.addFault({ match: { method: "DELETE" }, fault: { task: { durationMs: HOUR } } });
        const destroyed = await project.destroy();
        assert.equal(destroyed.ok, false, "the delete ends at 2 s, not after the hour the input allows");
        assert.ok(
            destroyed.errors.some((message) => message.includes("customTimeouts.delete")),
            destroyed.errors.join("\n"),
        );
        assert.ok(await stored(DATASTORE_TYPE), "a delete not confirmed keeps the datastore in the stack");
        api.advanceClock(HOUR);
        assertOk(await project.destroy());
        assert.equal(api.datastores().length, 0);
    });

    it("progress lines are shown on the datastore's own row (the event carries its URN), with one figure", async () => {
        await project.program([ds19()]);
        const created = await project.up();
        assertOk(created);
        const urn = (await stored(DATASTORE_TYPE))?.urn;
        assert.ok(urn);
        const progress = created.diagnostics.filter(
            (d) => d.severity === "info" && d.message.startsWith("the create of"),
        );
        assert.ok(progress.length > 0, `progress lines were sent:\n${JSON.stringify(created.diagnostics, null, 2)}`);
        for (const line of progress) {
            assert.equal(line.urn, urn, `a progress line on another row: ${JSON.stringify(line)}`);
            const figures = line.message.match(/\d+%/g) ?? [];
            assert.ok(figures.length <= 1, `one progress figure per line: ${line.message}`);
        }
        const unattached = created.diagnostics.filter((d) => d.message.includes("this provider process cannot hear"));
        assert.deepEqual(unattached, [], "both hooks attach to the SDK's provider server: no warning");
    });

    it("a hosts line edited by hand: after refresh, preview --diff marks the field that drifted", async () => {
        const file = join(project.dir, "drift.hosts");
        await writeFile(file, "127.0.0.1 localhost\n");
        await project.program([
            { name: "web", args: { address: "10.0.0.5", names: ["web.internal"], comment: "ours", file } },
        ]);
        assertOk(await project.up());
        const text = await readFile(file, "utf8");
        const edited = text.replace(/10\.0\.0\.5(\s+web\.internal)/, "10.0.0.9$1");
        assert.notEqual(edited, text);
        await writeFile(file, edited);

        assertOk(await project.refresh());
        const preview = await project.preview({ diff: true });
        assertOk(preview);
        assert.deepEqual(preview.steps, ["update web"]);
        assert.match(preview.stdout, /~ address\s*:\s*"10\.0\.0\.9"\s*=>\s*"10\.0\.0\.5"/);
        assert.doesNotMatch(preview.stdout, /[~+-] names/, "only the drifted field is marked");

        assertOk(await project.up());
        assert.equal(await readFile(file, "utf8"), text, "the next up puts the line back, byte for byte");
        const again = await project.preview({ diff: true });
        assertOk(again);
        assert.deepEqual(again.steps, ["same web"]);
    });

    it("a hosts refresh that fails says so once, on the entry's row, without JavaScript stack frames", async () => {
        const file = join(project.dir, "broken.hosts");
        await writeFile(file, "127.0.0.1 localhost\n");
        await project.program([{ name: "web", args: { address: "10.0.0.5", names: ["web.internal"], file } }]);
        assertOk(await project.up());
        // The file becomes a directory: no hosts file can be read there, and nothing may be written.
        await rm(file);
        await mkdir(file);
        const run = project.spawn(["refresh", "--yes", "--non-interactive", "--stack", "dev"]);
        const { code, output } = await run.done;
        assert.notEqual(code, 0, output);
        const said = output.slice(output.indexOf("Diagnostics:"));
        assert.ok(said.includes("it is a directory"), said);
        assert.ok(!/^\s*at .*[(\s/][^\s]*:\d+:\d+\)?\s*$/m.test(output), `no stack frames:\n${output}`);
        // The Stack's row runs to the next row or section, whichever order the engine printed the rows in.
        const fromStack = said.slice(Math.max(0, said.indexOf("pulumi:pulumi:Stack")));
        const next = fromStack.search(/\n(?: {2}\S|\S)/);
        const stackRow = next < 0 ? fromStack : fromStack.slice(0, next);
        assert.ok(
            stackRow.startsWith("pulumi:pulumi:Stack") && !stackRow.includes("broken.hosts"),
            `not echoed under the Stack row:\n${said}`,
        );
        assert.equal(said.split("it is a directory").length - 1, 1, `said once:\n${said}`);
    });

    it("a datastore grown outside Pulumi: after refresh, preview names the size as it is now (it cannot shrink back)", async () => {
        await project.program([ds19()]);
        assertOk(await project.up());
        const id = api.datastores()[0]?.id as string;
        const resized = await fetch(`${api.url}${DATASTORES_PATH}/${id}`, {
            method: "PATCH",
            headers: { authorization: api.authorization, "content-type": "application/json" },
            body: JSON.stringify({ sizeInBytes: 32 * GIB }),
        });
        assert.equal(resized.status, 202);
        for (let poll = 0; poll < 3; poll++) {
            await fetch(`${api.url}${resized.headers.get("location")}`, {
                headers: { authorization: api.authorization },
            });
        }
        assert.equal(api.datastores()[0]?.capacityInBytes, 32 * GIB);

        assertOk(await project.refresh());
        const recorded = (await project.state()).resources.find((r) => r.type === DATASTORE_TYPE);
        assert.equal(recorded?.inputs?.sizeInBytes, 32 * GIB, "the refresh records the size as read as the input");
        const preview = await project.preview({ diff: true });
        assert.equal(preview.ok, false, "the program's smaller size cannot be applied, and preview says so");
        assert.match(preview.stderr, /sizeInBytes[\s\S]*17179869184 is smaller than the current 34359738368/);

        await project.program([ds19(undefined, 32 * GIB)]);
        const adopted = await project.preview({ diff: true });
        assertOk(adopted);
        assert.deepEqual(adopted.steps, ["same ds19"], "a program that takes the size as it is now changes nothing");
    });
});
