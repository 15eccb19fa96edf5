// Guards the examples and the root Pulumi.yaml program as the full Pulumi projects users run: each goes
// through the harness (its own program, the real provider process) against a temporary hosts file or a
// task API server started here: up, refresh, up again with no change, a config change, destroy.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { startTaskApiServer, type TaskApiServer } from "../provider/taskApiServer/taskApiServer";
import { Harness, type RunResult } from "./harness/harness";
import { TOKEN } from "./support/datastoreFixture";
import { API, API_IPV6, assertEntries, BASE, WEB } from "./support/hostsExample";
import { makeTempDir, REPO_ROOT, type TempDir } from "./support/projects";

/**
 * The run's steps, sorted. The SDK registers resources as their inputs resolve (a resource with more
 * inputs registers later), not in declaration order, and the engine steps them as they arrive, so
 * steps of independent resources have no order to assert.
 */
function kinds(result: RunResult): string[] {
    return result.steps.map((step) => `${step.kind} ${step.name}`).sort();
}

/** The scenario of examples/hosts, run by the project at `projectDir` (the example or the repository root). */
function describeHostsProgram(label: string, projectDir: string, project: string): void {
    describe(label, () => {
        let temp: TempDir;
        let file: string;
        let harness: Harness;
        const lineStarts: { api?: number } = {};

        before(async () => {
            temp = await makeTempDir();
            file = join(temp.dir, "hosts");
            await writeFile(file, BASE);
            harness = new Harness({
                projectDir,
                stateFile: join(temp.dir, "state.json"),
                config: { "pulumi-lifecycle:hostsFile": file },
            });
        });
        after(() => temp.cleanup());

        it("up creates three lines, the same names once for IPv4 and once for IPv6", async () => {
            const result = await harness.up();
            assert.ok(result.ok, result.plan);
            assert.deepEqual(kinds(result), ["create api", "create api-ipv6", "create web"]);
            assert.deepEqual(result.outputs.ids, ["ipv4/web.internal", "ipv4/api.internal", "ipv6/api.internal"]);
            assert.equal(result.outputs.file, file);
            await assertEntries(file, [WEB, API("10.0.0.6"), API_IPV6]);
        });

        it("refresh reads every entry back and keeps them", async () => {
            const result = await harness.refresh();
            assert.ok(result.ok, result.plan);
            assert.deepEqual(kinds(result), ["refresh api", "refresh api-ipv6", "refresh web"]);
        });

        it("up again changes nothing", async () => {
            lineStarts.api = (await readFile(file, "utf8")).indexOf(API("10.0.0.6"));
            const result = await harness.up();
            assert.deepEqual(kinds(result), ["same api", "same api-ipv6", "same web"]);
            assert.deepEqual(
                result.calls.map((call) => call.method),
                ["Check", "Diff", "Check", "Diff", "Check", "Diff"],
            );
            await assertEntries(file, [WEB, API("10.0.0.6"), API_IPV6]);
        });

        it("a config change rewrites the api line in place", async () => {
            const result = await harness.up({
                config: { "pulumi-lifecycle:hostsFile": file, [`${project}:apiAddress`]: "10.0.0.7" },
            });
            assert.ok(result.ok, result.plan);
            assert.deepEqual(kinds(result), ["same api-ipv6", "same web", "update api"]);
            const before = await readFile(file, "utf8");
            await assertEntries(file, [WEB, API("10.0.0.7"), API_IPV6]);
            assert.equal(before.indexOf(API("10.0.0.7")), lineStarts.api, "rewritten in place");
        });

        it("destroy removes the three lines and nothing else", async () => {
            const result = await harness.destroy();
            assert.ok(result.ok, result.plan);
            assert.deepEqual(kinds(result), ["delete api", "delete api-ipv6", "delete web"]);
            assert.deepEqual(result.state.resources, []);
            assert.equal(await readFile(file, "utf8"), BASE);
        });
    });
}

describeHostsProgram("examples/hosts", join(REPO_ROOT, "examples", "hosts"), "hosts-example");
describeHostsProgram("the root Pulumi.yaml program", REPO_ROOT, "pulumi-lifecycle-demo");

describe("examples/import", () => {
    const projectDir = join(REPO_ROOT, "examples", "import");
    const LAB_LINES =
        "10.1.0.10\tbuild.lab ci.lab\t# build farm\n10.1.0.11\tdb.lab\n10.1.0.12\tdb.lab-replica # standby\n";
    let temp: TempDir;
    let original: string;
    let first: string;
    let second: string;
    let harness: Harness;

    before(async () => {
        temp = await makeTempDir();
        original = await readFile(join(projectDir, "existing.hosts"), "utf8");
        first = join(temp.dir, "existing.hosts");
        second = join(temp.dir, "moved.hosts");
        await copyFile(join(projectDir, "existing.hosts"), first);
        await copyFile(join(projectDir, "existing.hosts"), second);
        harness = new Harness({
            projectDir,
            stateFile: join(temp.dir, "state.json"),
            config: { "pulumi-lifecycle:hostsFile": first },
        });
    });
    after(() => temp.cleanup());

    it("holds exactly what the import helper prints for existing.hosts", async () => {
        const { stdout } = await promisify(execFile)(
            process.execPath,
            [
                join(REPO_ROOT, "dist", "cli", "main.js"),
                "hosts",
                "import",
                "--file",
                "existing.hosts",
                "--match",
                "\\.lab",
                "--omit-file",
                "--no-protect",
            ],
            { cwd: projectDir },
        );
        assert.equal(await readFile(join(projectDir, "index.ts"), "utf8"), stdout);
    });

    it("up adopts the existing lines without writing a byte", async () => {
        const result = await harness.up();
        assert.ok(result.ok, result.plan);
        assert.deepEqual(kinds(result), ["create build.lab", "create db.lab", "create db.lab-replica"]);
        assert.equal(await readFile(first, "utf8"), original);
    });

    it("refresh reads them back", async () => {
        const result = await harness.refresh();
        assert.deepEqual(kinds(result), ["refresh build.lab", "refresh db.lab", "refresh db.lab-replica"]);
    });

    it("up again changes nothing", async () => {
        const result = await harness.up();
        assert.deepEqual(kinds(result), ["same build.lab", "same db.lab", "same db.lab-replica"]);
        assert.equal(await readFile(first, "utf8"), original);
    });

    it("pointing the config at another file replaces each entry: adopted there, deleted here", async () => {
        const result = await harness.up({ config: { "pulumi-lifecycle:hostsFile": second } });
        assert.ok(result.ok, result.plan);
        // Create-before-delete: every replacement is created while the program runs; the old entries are
        // deleted after it has finished.
        const phases = result.steps.map((step) => step.kind);
        assert.deepEqual(phases, ["replace", "replace", "replace", "delete", "delete", "delete"]);
        assert.deepEqual(kinds(result), [
            "delete build.lab",
            "delete db.lab",
            "delete db.lab-replica",
            "replace build.lab",
            "replace db.lab",
            "replace db.lab-replica",
        ]);
        assert.equal(await readFile(second, "utf8"), original, "adopted in the new file without a write");
        assert.equal(await readFile(first, "utf8"), original.replace(LAB_LINES, ""), "deleted from the old one");
    });

    it("destroy deletes the managed lines and nothing else", async () => {
        const result = await harness.destroy();
        assert.ok(result.ok, result.plan);
        assert.equal(await readFile(second, "utf8"), original.replace(LAB_LINES, ""));
    });
});

describe("examples/datastore", () => {
    const projectDir = join(REPO_ROOT, "examples", "datastore");
    let api: TaskApiServer;
    let temp: TempDir;
    let harness: Harness;

    before(async () => {
        api = await startTaskApiServer({ token: TOKEN, taskCompleteAfterPolls: 3 });
        temp = await makeTempDir();
        harness = new Harness({
            projectDir,
            stateFile: join(temp.dir, "state.json"),
            config: { "pulumi-lifecycle:taskApiUrl": api.url, "pulumi-lifecycle:taskApiToken": { secret: TOKEN } },
            env: { TASK_POLL_INITIAL_MS: "2", TASK_POLL_MAX_MS: "10" },
        });
    });
    after(async () => {
        await api.close();
        await temp.cleanup();
    });

    it("up creates the token and the datastore through a task", async () => {
        const result = await harness.up();
        assert.ok(result.ok, result.plan);
        assert.deepEqual(kinds(result), ["create ds19", "create ds19-token"]);
        assert.equal(result.outputs.state, "OK");
        assert.equal(result.outputs.datastoreId, api.datastores()[0]?.id);
        assert.deepEqual(
            api
                .requests()
                .filter((r) => r.method === "POST")
                .map((r) => r.idempotencyKey),
            [result.state.resources.find((r) => r.name === "ds19-token")?.outputs.result],
            "one POST, keyed by the random token",
        );
    });

    it("refresh reads it back, and up again changes nothing", async () => {
        assert.deepEqual(kinds(await harness.refresh()), ["refresh ds19"]);
        assert.deepEqual(kinds(await harness.up()), ["same ds19", "same ds19-token"]);
    });

    it("a config change grows it in place through a resize task", async () => {
        const result = await harness.up({
            config: {
                "pulumi-lifecycle:taskApiUrl": api.url,
                "pulumi-lifecycle:taskApiToken": { secret: TOKEN },
                "datastore-example:sizeGiB": "32",
            },
        });
        assert.ok(result.ok, result.plan);
        assert.deepEqual(kinds(result), ["same ds19-token", "update ds19"]);
        assert.equal(result.outputs.sizeInBytes, 32 * 2 ** 30);
        assert.equal(api.datastores()[0]?.capacityInBytes, 32 * 2 ** 30);
    });

    it("destroy deletes it, and the API token is nowhere in the state", async () => {
        const result = await harness.destroy();
        assert.ok(result.ok, result.plan);
        assert.deepEqual(api.datastores(), []);
        assert.ok(!(await readFile(join(temp.dir, "state.json"), "utf8")).includes(TOKEN));
    });
});
