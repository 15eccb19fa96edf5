// Guards the examples and the root Pulumi.yaml program (what `npm run up` runs) under the REAL Pulumi
// CLI, as users run them: the TypeScript program directory, a new stack on a temporary file backend, a
// temporary hosts file or the bundled task API server: up, refresh, up again with no change, a config
// change, destroy. examples/datastore takes its create token from @pulumi/random, so it also proves the
// random plugin built beside the CLI.

import { strict as assert } from "node:assert";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTaskApiServer, type TaskApiServer } from "../../provider/taskApiServer/taskApiServer";
import { assertOk, CliProject, type CliRun } from "../support/cliProject";
import { TOKEN } from "../support/datastoreFixture";
import { API, API_IPV6, assertEntries, BASE, WEB } from "../support/hostsExample";
import { makeTempDir, REPO_ROOT, type TempDir } from "../support/projects";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";

/** Steps of independent resources have no order the engine promises: compare them sorted. */
function sorted(run: CliRun): string[] {
    return [...run.steps].sort();
}

function describeHostsProgram(label: string, projectDir: string, projectName: string): void {
    describe(`${label} under the real Pulumi CLI`, function () {
        this.timeout(300_000);
        let cli: PulumiCli;
        let temp: TempDir;
        let file: string;
        let project: CliProject;

        before(async function () {
            cli = requirePulumiCli(this);
            temp = await makeTempDir();
            file = join(temp.dir, "hosts");
            await writeFile(file, BASE);
            project = await CliProject.open(cli, projectDir, { config: { "pulumi-lifecycle:hostsFile": file } });
        });
        after(async () => {
            await project?.cleanup();
            await temp?.cleanup();
        });

        it("up creates three lines, the same names once for IPv4 and once for IPv6", async () => {
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(sorted(run), ["create api", "create api-ipv6", "create web"]);
            const outputs = await project.stack.outputs();
            assert.deepEqual(outputs.ids?.value, ["ipv4/web.internal", "ipv4/api.internal", "ipv6/api.internal"]);
            assert.equal(outputs.file?.value, file);
            await assertEntries(file, [WEB, API("10.0.0.6"), API_IPV6]);
        });

        it("refresh reads every entry back; up again changes nothing and writes nothing", async () => {
            const refreshed = await project.refresh();
            assertOk(refreshed);
            assert.deepEqual(sorted(refreshed), ["refresh api", "refresh api-ipv6", "refresh web"]);
            const before = await readFile(file, "utf8");
            const again = await project.up();
            assertOk(again);
            assert.deepEqual(sorted(again), ["same api", "same api-ipv6", "same web"]);
            assert.equal(await readFile(file, "utf8"), before);
        });

        it("a config change rewrites the api line in place", async () => {
            const at = (await readFile(file, "utf8")).indexOf(API("10.0.0.6"));
            await project.stack.setConfig(`${projectName}:apiAddress`, { value: "10.0.0.7" });
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(sorted(run), ["same api-ipv6", "same web", "update api"]);
            await assertEntries(file, [WEB, API("10.0.0.7"), API_IPV6]);
            assert.equal((await readFile(file, "utf8")).indexOf(API("10.0.0.7")), at, "rewritten in place");
        });

        it("destroy removes the three lines and nothing else", async () => {
            const run = await project.destroy();
            assertOk(run);
            assert.deepEqual(sorted(run), ["delete api", "delete api-ipv6", "delete web"]);
            assert.equal(await readFile(file, "utf8"), BASE);
        });
    });
}

describeHostsProgram("examples/hosts", join(REPO_ROOT, "examples", "hosts"), "hosts-example");
describeHostsProgram("the root Pulumi.yaml program", REPO_ROOT, "pulumi-lifecycle-demo");

describe("examples/import under the real Pulumi CLI", function () {
    this.timeout(300_000);
    const projectDir = join(REPO_ROOT, "examples", "import");
    let cli: PulumiCli;
    let temp: TempDir;
    let original: string;
    let file: string;
    let project: CliProject;

    before(async function () {
        cli = requirePulumiCli(this);
        temp = await makeTempDir();
        original = await readFile(join(projectDir, "existing.hosts"), "utf8");
        file = join(temp.dir, "existing.hosts");
        await copyFile(join(projectDir, "existing.hosts"), file);
        project = await CliProject.open(cli, projectDir, { config: { "pulumi-lifecycle:hostsFile": file } });
    });
    after(async () => {
        await project?.cleanup();
        await temp?.cleanup();
    });

    it("up adopts the existing lines without writing a byte; preview then shows no change", async () => {
        const run = await project.up();
        assertOk(run);
        assert.deepEqual(sorted(run), ["create build.lab", "create db.lab", "create db.lab-replica"]);
        assert.equal(await readFile(file, "utf8"), original);
        const preview = await project.preview();
        assertOk(preview);
        assert.deepEqual(sorted(preview), ["same build.lab", "same db.lab", "same db.lab-replica"]);
    });

    it("destroy deletes the adopted lines and nothing else", async () => {
        const run = await project.destroy();
        assertOk(run);
        const text = await readFile(file, "utf8");
        assert.ok(!/\.lab/.test(text.replace(/^#.*$/gm, "")), "no .lab entry is left");
        assert.equal(text.split("\n").length, original.split("\n").length - 3);
    });
});

describe("examples/datastore under the real Pulumi CLI (with the random plugin)", function () {
    this.timeout(300_000);
    const projectDir = join(REPO_ROOT, "examples", "datastore");
    let cli: PulumiCli;
    let api: TaskApiServer;
    let project: CliProject;

    before(async function () {
        cli = requirePulumiCli(this);
        api = await startTaskApiServer({ token: TOKEN, taskCompleteAfterPolls: 3 });
        project = await CliProject.open(cli, projectDir, {
            config: {
                "pulumi-lifecycle:taskApiUrl": api.url,
                "pulumi-lifecycle:taskPollInitialMs": "20",
                "pulumi-lifecycle:taskPollMaxMs": "50",
            },
            secrets: { "pulumi-lifecycle:taskApiToken": TOKEN },
        });
    });
    after(async () => {
        await project?.cleanup();
        await api?.close();
    });

    it("up creates the token and the datastore through a task", async () => {
        const run = await project.up();
        assertOk(run);
        assert.deepEqual(sorted(run), ["create ds19", "create ds19-token"]);
        const outputs = await project.stack.outputs();
        assert.equal(outputs.state?.value, "OK");
        assert.equal(outputs.datastoreId?.value, api.datastores()[0]?.id);
    });

    it("refresh reads it back, and up again changes nothing", async () => {
        const refreshed = await project.refresh();
        assertOk(refreshed);
        assert.ok(refreshed.steps.includes("refresh ds19"));
        const again = await project.up();
        assertOk(again);
        assert.deepEqual(sorted(again), ["same ds19", "same ds19-token"]);
    });

    it("a config change grows it in place through a resize task", async () => {
        await project.stack.setConfig("datastore-example:sizeGiB", { value: "32" });
        const run = await project.up();
        assertOk(run);
        assert.deepEqual(sorted(run), ["same ds19-token", "update ds19"]);
        assert.equal(api.datastores()[0]?.capacityInBytes, 32 * 2 ** 30);
    });

    it("destroy deletes it, and the API token is nowhere in the state or the output", async () => {
        const run = await project.destroy();
        assertOk(run);
        assert.deepEqual(api.datastores(), []);
        assert.ok(!(await project.storedState()).includes(TOKEN));
        assert.ok(!run.stdout.includes(TOKEN) && !run.stderr.includes(TOKEN));
    });
});
