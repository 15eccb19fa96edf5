// Issue 20, "Upgrades change nothing", under the REAL Pulumi CLI: a stack made by the package as it was
// when the issue started (commit d5d241c, built from git history and packed), then run with the package
// of this checkout (packed the same way) installed in its place, shows no change to its user. One
// TypeScript project that imports `pulumi-lifecycle` by name, installed by npm from the tarball, on a
// local file backend: hosts.HostEntry rows of several shapes in two files (one named relative to the
// project), two tasks.Datastore against the bundled task API server and two tasks.AsyncResource against
// the generic dialect's server. After the reinstall: `pulumi preview --diff --expect-no-changes`,
// `pulumi up --expect-no-changes`, `pulumi refresh --expect-no-changes`, the preview again, each
// passing and printing no change marker, writing no byte of a hosts file and sending no write to either
// server; the stack's outputs (every declared output of every resource) stay as the old package made
// them; then `pulumi destroy` leaves the hosts files byte for byte as they were before the stack and
// both servers empty.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { startTaskApiServer, type TaskApiServer } from "../../provider/taskApiServer/taskApiServer";
import { npmInstallArgs } from "../compat/support/installs";
import { type GenericServer, startGenericServer } from "../dialects/servers/generic";
import { CliProject, nameOf } from "../support/cliProject";
import { CLUSTER, GIB, HCI, TOKEN } from "../support/datastoreFixture";
import { commitOf, packCommit, packCurrent, packedManifest, tarballDigest, treeDigest } from "../support/packages";
import { makeTempDir, REPO_ROOT, type TempDir } from "../support/projects";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { registryEnv } from "../support/registry";
import { skipBecause } from "../support/system";
import { typeCheckedOnce } from "../support/typeCheckedPrograms";
import { WIDGETS_TOKEN } from "../tasks/asyncResource/dialectFixtures";

const runFile = promisify(execFile);

/** The package as it was when issue 20 started. */
const OLD_COMMIT = "d5d241c";
const WIDGETS_TOKEN_CONFIG = "widgets:token";

/** What the hosts files hold before the stack: lines the stack must leave as they are. */
const HOSTS_BEFORE =
    "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n# managed by hand below\n10.9.9.9\tkept.lab\n";
const EXTRA_BEFORE = "# a second hosts file, named relative to the project\n10.8.8.8\tother.lab # not ours\n";

/** The user's program: every resource's declared outputs are stack outputs, so any change shows. */
const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import { hosts, tasks } from "pulumi-lifecycle";

const config = new pulumi.Config("upgrade");
const hostsFile = config.require("hostsFile");
const widgetsUrl = config.require("widgetsUrl");

function view<T extends object, K extends keyof T>(resource: T, keys: K[]): Record<string, unknown> {
    return Object.fromEntries(keys.map((key) => [key, resource[key]]));
}
const entryOutputs = ["id", "address", "names", "comment", "file", "adopt", "line"] as const;
const datastoreOutputs = [
    "id", "hciClusterUuid", "clusterId", "name", "sizeInBytes", "datastoreType", "createToken", "timeouts",
    "adopt", "untaint", "datastoreId", "state", "taskId", "tainted", "taintReason",
] as const;
const widgetOutputs = ["id", "resourceId", "resource", "body", "operation", "tainted", "taintReason"] as const;

const web = new hosts.HostEntry("web", { address: "10.0.0.5", names: ["web.internal", "web"], file: hostsFile });
const apiV6 = new hosts.HostEntry("api-v6", {
    address: "fd00::6",
    names: ["api.internal", "api"],
    comment: "the API over IPv6",
    file: hostsFile,
});
const db = new hosts.HostEntry("db", {
    address: "10.0.0.7",
    names: ["db.internal", "db", "postgres.internal"],
    comment: "primary",
    file: "./extra.hosts",
});
const cache = new hosts.HostEntry("cache", { address: "10.0.0.8", names: ["cache.internal"], file: "./extra.hosts" });

const cluster = { hciClusterUuid: ${JSON.stringify(HCI)}, clusterId: ${JSON.stringify(CLUSTER)} };
const dsToken = new tasks.Datastore("ds-token", {
    ...cluster,
    name: "ds-token",
    sizeInBytes: ${16 * GIB},
    datastoreType: "VMFS",
    createToken: "3b0f6c1e-2f5d-4c8a-9a61-5d0c7e9b2a10",
});
const dsPlain = new tasks.Datastore("ds-plain", {
    ...cluster,
    name: "ds-plain",
    sizeInBytes: ${8 * GIB},
    datastoreType: "VVOL",
    timeouts: { create: "10m", read: "2m" },
});

const api = { url: widgetsUrl, dialect: "generic" as const, tokenConfig: ${JSON.stringify(WIDGETS_TOKEN_CONFIG)} };
const widgetPaths = { collectionPath: "/widgets", itemPath: "/widgets/{id}", naturalKey: "name", idField: "id", lookup: { query: "name={key}" } };
const w1 = new tasks.AsyncResource("w1", {
    api,
    ...widgetPaths,
    body: { name: "w1", size: 3, tags: { team: "infra" } },
    createToken: "0b5e7c1a-0000-4000-8000-000000000001",
});
const w2 = new tasks.AsyncResource("w2", {
    api,
    ...widgetPaths,
    body: JSON.stringify({ name: "w2", size: 4 }),
    replaceOnChanges: ["size"],
});

export const entries = {
    web: view(web, [...entryOutputs]),
    apiV6: view(apiV6, [...entryOutputs]),
    db: view(db, [...entryOutputs]),
    cache: view(cache, [...entryOutputs]),
};
export const datastores = { dsToken: view(dsToken, [...datastoreOutputs]), dsPlain: view(dsPlain, [...datastoreOutputs]) };
export const widgets = { w1: view(w1, [...widgetOutputs]), w2: view(w2, [...widgetOutputs]) };
`;

const TSCONFIG = {
    compilerOptions: {
        strict: true,
        target: "es2022",
        module: "commonjs",
        moduleResolution: "node",
        esModuleInterop: true,
        skipLibCheck: true,
    },
    files: ["index.ts"],
};

/** The resources of the program, by name. */
const RESOURCES = ["web", "api-v6", "db", "cache", "ds-token", "ds-plain", "w1", "w2"];

/** One run of the `pulumi` binary, with what the engine reported in its event log. */
interface Run {
    readonly code: number | null;
    readonly output: string;
    /** `op name` of each step the engine began on a resource of the program. */
    readonly steps: string[];
    /** For refresh: `op name` of what each read found (`same`, `update`, `delete`). */
    readonly results: string[];
    /** The summary's counts by operation (the stack itself included). */
    readonly changes: Record<string, number>;
}

interface EngineEvent {
    resourcePreEvent?: { metadata: { op: string; urn: string; type: string } };
    resOutputsEvent?: { metadata: { op: string; urn: string; type: string } };
    summaryEvent?: { resourceChanges?: Record<string, number> };
}

function ours(type: string): boolean {
    return type !== "pulumi:pulumi:Stack" && !type.startsWith("pulumi:providers:");
}

/** The version of a package this repository has installed, so the project installs the same. */
async function installedVersion(name: string): Promise<string> {
    return (
        JSON.parse(await readFile(join(REPO_ROOT, "node_modules", name, "package.json"), "utf8")) as {
            version: string;
        }
    ).version;
}

/**
 * Lines of the CLI's display that mark a change: a resource or property prefixed `+`, `-`, `~`, `+-`,
 * `-+`, `++`, `--`, `<=`, `>`, or a step written out as `(create)`, `(update)`, `(replace)`, `(delete)`.
 * Left out: the rows of a refresh in progress (` ~  <type> <name> refreshing (0s)`: the op running, not
 * a result), and the stack's outputs as a preview shows them, which the caller compares as a whole.
 */
function changeLines(output: string): string[] {
    const lines = output.split("\n");
    const outputsAt = lines.findIndex((line) => line.trim() === "--outputs:--");
    const outputsEnd = lines.findIndex((line, at) => at > outputsAt && line.startsWith("Resources:"));
    return lines
        .filter((_, at) => outputsAt < 0 || at <= outputsAt || at >= outputsEnd)
        .filter((line) => !/ refreshing \(\d+s\)\s*$/.test(line))
        .filter(
            (line) =>
                /^\s*(\+-|-\+|\+\+|--|<=|[~+\->])\s/.test(line) ||
                /\((create|update|replace|delete|create-replacement|delete-replaced|import)\)/.test(line) ||
                /\[diff: /.test(line),
        );
}

/** The stack's outputs as a preview prints them (its `--outputs:--` block). */
function previewOutputs(output: string): string {
    const at = output.indexOf("--outputs:--");
    return at < 0 ? "" : output.slice(at, output.indexOf("\nResources:", at));
}

/** What a hosts file is on disk: its bytes, and whether anyone wrote it (inode and modification time). */
async function fileFacts(path: string): Promise<{ text: string; ino: number; mtimeNs: bigint }> {
    const facts = await stat(path, { bigint: true });
    return { text: await readFile(path, "utf8"), ino: Number(facts.ino), mtimeNs: facts.mtimeNs };
}

describe(`an upgrade from the package at ${OLD_COMMIT} to this checkout, under the real Pulumi CLI`, function () {
    this.timeout(600_000);
    let cli: PulumiCli;
    let temp: TempDir;
    let dir: string;
    let hostsFile: string;
    let extraFile: string;
    let oldTarball: string;
    let newTarball: string;
    let taskApi: TaskApiServer;
    let widgets: GenericServer;
    let project: CliProject;
    let runs = 0;
    const printed: string[] = [];
    const started = Date.now();

    /** Writes package.json naming `tarball` as the package and installs the project with npm. */
    async function install(tarball: string): Promise<void> {
        const versions = Object.fromEntries(
            await Promise.all(
                ["@pulumi/pulumi", "typescript", "ts-node", "@types/node"].map(
                    async (name) => [name, await installedVersion(name)] as const,
                ),
            ),
        );
        const { "@pulumi/pulumi": pulumiVersion, ...devDependencies } = versions;
        await writeFile(
            join(dir, "package.json"),
            JSON.stringify(
                {
                    name: "upgrade",
                    private: true,
                    dependencies: { "pulumi-lifecycle": `file:${tarball}`, "@pulumi/pulumi": pulumiVersion },
                    devDependencies,
                },
                null,
                2,
            ),
        );
        // Without the dependencies' install scripts (npmInstallArgs says why): this suite tests our state
        // across versions, not ssh2's native build.
        await runFile("npm", npmInstallArgs({ ignoreScripts: true }), {
            cwd: dir,
            env: registryEnv(),
            maxBuffer: 64 * 1024 * 1024,
        });
        assert.equal(
            await treeDigest(join(dir, "node_modules", "pulumi-lifecycle")),
            await tarballDigest(tarball),
            `node_modules/pulumi-lifecycle is exactly ${tarball}`,
        );
    }

    /** Runs `pulumi <args>` on the stack in the project, as a user types it, with the engine's event log. */
    async function pulumi(args: string[]): Promise<Run> {
        const eventLog = join(temp.dir, "events", `${++runs}.jsonl`);
        // Type-checked on the first run of each install (its package.json names the tarball), as the
        // other real-CLI suites do (typeCheckedPrograms.ts).
        const { code, output } = await typeCheckedOnce(
            dir,
            (typeCheck) =>
                // `--event-log` exists only with PULUMI_DEBUG_COMMANDS, as the Automation API runs the CLI.
                project.spawn(
                    [
                        ...args,
                        "--stack",
                        project.stack.name,
                        "--non-interactive",
                        "--color",
                        "never",
                        "--event-log",
                        eventLog,
                    ],
                    { PULUMI_DEBUG_COMMANDS: "true", ...typeCheck },
                ).done,
            (run) => run.code === 0,
        );
        printed.push(output);
        const events = (await readFile(eventLog, "utf8").catch(() => ""))
            .split("\n")
            .filter((line) => line.trim() !== "")
            .map((line) => JSON.parse(line) as EngineEvent);
        const steps: string[] = [];
        const results: string[] = [];
        let changes: Record<string, number> = {};
        for (const event of events) {
            const pre = event.resourcePreEvent?.metadata;
            if (pre && ours(pre.type)) steps.push(`${pre.op} ${nameOf(pre.urn)}`);
            const result = event.resOutputsEvent?.metadata;
            if (result && ours(result.type)) results.push(`${result.op} ${nameOf(result.urn)}`);
            if (event.summaryEvent) changes = event.summaryEvent.resourceChanges ?? {};
        }
        return { code, output, steps: steps.sort(), results: results.sort(), changes };
    }

    /** Asserts a run passed and showed its user no change at all. */
    function assertNoChange(run: Run, what: string, op: string): void {
        assert.equal(run.code, 0, `${what} failed (exit ${run.code}):\n${run.output}`);
        assert.deepEqual(run.steps, RESOURCES.map((name) => `${op} ${name}`).sort(), `${what}: steps\n${run.output}`);
        assert.deepEqual(
            run.changes,
            { same: RESOURCES.length + 1 },
            `${what}: the summary counts every resource (and the stack) unchanged\n${run.output}`,
        );
        assert.deepEqual(changeLines(run.output), [], `${what} prints no change marker:\n${run.output}`);
    }

    const files = () => Promise.all([fileFacts(hostsFile), fileFacts(join(dir, "extra.hosts"))]);
    /**
     * The files beside the hosts files, but the journal: the package keeps it while creates are in
     * flight and a later run removes it when nothing is pending (README, "Files beside the hosts file"),
     * so whether it is there says which run came last, not what the upgrade did.
     */
    const listing = async () =>
        [await readdir(dirname(hostsFile)), await readdir(dir)].map((names) =>
            names.filter((name) => !name.endsWith(".pulumi-lifecycle.journal")).sort(),
        );
    /** What the servers hold and every write they were ever sent: a write since the upgrade shows here. */
    const servers = () => ({
        datastores: taskApi.datastores(),
        taskApiWrites: taskApi.requests().filter((r) => r.method !== "GET").length,
        widgets: widgets.resources(),
        widgetOperations: widgets.operations().length,
        widgetCreates: widgets.counts().creates,
    });

    before(async function () {
        cli = requirePulumiCli(this);
        const commit = await commitOf(OLD_COMMIT);
        if (!commit) {
            const missing = `commit ${OLD_COMMIT} (the package before issue 20) is not in this clone of ${REPO_ROOT}: a shallow clone? Fetch the full history (git fetch --unshallow)`;
            if (process.env.CI === "true") throw new Error(`CI must run the upgrade test, but ${missing}`);
            skipBecause(this, missing);
        }
        temp = await makeTempDir("pulumi-lifecycle-upgrade-");
        oldTarball = await packCommit(commit);
        newTarball = await packCurrent(temp.dir);
        // The tarball is the commit: its package.json is the one git has at that commit.
        const { stdout: committed } = await runFile("git", ["-C", REPO_ROOT, "show", `${commit}:package.json`]);
        assert.equal(await packedManifest(oldTarball), committed);

        taskApi = await startTaskApiServer({ token: TOKEN, taskCompleteAfterPolls: 3 });
        widgets = await startGenericServer({ token: WIDGETS_TOKEN, retryAfter: "none" });
        dir = join(temp.dir, "project");
        hostsFile = join(temp.dir, "etc", "hosts");
        extraFile = join(dir, "extra.hosts");
        await mkdir(dir);
        await mkdir(dirname(hostsFile));
        await mkdir(join(temp.dir, "events"));
        await writeFile(hostsFile, HOSTS_BEFORE);
        await writeFile(extraFile, EXTRA_BEFORE);
        await writeFile(join(dir, "Pulumi.yaml"), "name: upgrade\nruntime: nodejs\nmain: index.ts\n");
        await writeFile(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
        await writeFile(join(dir, "index.ts"), PROGRAM);
        await install(oldTarball);
        project = await CliProject.open(cli, dir, {
            config: {
                "upgrade:hostsFile": hostsFile,
                "upgrade:widgetsUrl": widgets.url,
                "pulumi-lifecycle:taskApiUrl": taskApi.url,
                "pulumi-lifecycle:taskPollInitialMs": "20",
                "pulumi-lifecycle:taskPollMaxMs": "50",
            },
            secrets: { "pulumi-lifecycle:taskApiToken": TOKEN, [WIDGETS_TOKEN_CONFIG]: WIDGETS_TOKEN },
        });
    });
    after(async () => {
        console.log(`      the upgrade suite took ${((Date.now() - started) / 1000).toFixed(1)} s`);
        try {
            if (project) {
                const stored = await project.storedState();
                assert.ok(!stored.includes(TOKEN) && !stored.includes(WIDGETS_TOKEN), "no token reaches the state");
                assert.ok(
                    !printed.some((text) => text.includes(TOKEN) || text.includes(WIDGETS_TOKEN)),
                    "nor the CLI's output",
                );
            }
        } finally {
            await project?.cleanup();
            await taskApi?.close();
            await widgets?.close();
            await temp?.cleanup();
        }
    });

    let outputsBefore: Record<string, unknown>;
    let filesBefore: Awaited<ReturnType<typeof files>>;
    let listingBefore: string[][];
    let serversBefore: ReturnType<typeof servers>;
    let oldPreview: Run;
    let stateBefore: Awaited<ReturnType<typeof resourceStates>>;

    /** Each resource's inputs and outputs as `pulumi stack export` has them, by name. */
    async function resourceStates(): Promise<Record<string, { inputs: unknown; outputs: unknown }>> {
        const { resources } = await project.state();
        return Object.fromEntries(resources.map((r) => [nameOf(r.urn), { inputs: r.inputs, outputs: r.outputs }]));
    }

    /**
     * Asserts a preview after the upgrade shows no change: as `assertNoChange`, and the stack's outputs
     * printed exactly as the old package's preview printed them. (A preview prints an output-only
     * property that the state lacks, such as `taintReason` of a healthy resource, as `+ [unknown]`,
     * with the old package as with the new: the SDK's rule for a dry run, so compared, not forbidden.)
     */
    function assertPreviewUnchanged(run: Run, what: string): void {
        assertNoChange(run, what, "same");
        assert.equal(previewOutputs(run.output), previewOutputs(oldPreview.output), `${what}: the outputs as before`);
    }

    /**
     * Asserts that since the old package's up nothing was written: hosts files, their directories, both
     * servers, the stack's outputs, and each resource's inputs and outputs in the state, byte for byte.
     * (The stack's outputs change only when the program runs, so a refresh that rewrote a resource's
     * outputs would show only in the state; and a state the new package rewrote silently here is one the
     * next change of shape can no longer tell apart.)
     */
    async function assertNothingWritten(what: string): Promise<void> {
        assert.deepEqual(await files(), filesBefore, `${what} writes no hosts file`);
        assert.deepEqual(await listing(), listingBefore, `${what} leaves no file beside them`);
        assert.deepEqual(servers(), serversBefore, `${what} sends no write to the servers`);
        assert.deepEqual(
            await project.outputs(),
            outputsBefore,
            `${what} keeps every output as the old package made it`,
        );
        assert.deepEqual(await resourceStates(), stateBefore, `${what} keeps the state as the old package wrote it`);
    }

    it(`the package at ${OLD_COMMIT} creates the stack, and its own preview shows no change`, async () => {
        const up = await pulumi(["up", "--yes", "--skip-preview"]);
        assert.equal(up.code, 0, up.output);
        assert.deepEqual(up.steps, RESOURCES.map((name) => `create ${name}`).sort());
        assert.equal(taskApi.datastores().length, 2);
        assert.equal(widgets.counts().live, 2);
        const hosts = await readFile(hostsFile, "utf8");
        assert.ok(hosts.startsWith(HOSTS_BEFORE) && hosts.includes("web.internal") && hosts.includes("fd00::6"));
        assert.ok(
            (await readFile(extraFile, "utf8")).includes("postgres.internal"),
            "the relative file is the project's",
        );
        outputsBefore = await project.outputs();
        stateBefore = await resourceStates();
        filesBefore = await files();
        listingBefore = await listing();
        serversBefore = servers();

        // The control: the old package is silent about its own stack, so what follows measures the upgrade.
        oldPreview = await pulumi(["preview", "--diff", "--expect-no-changes"]);
        assertNoChange(oldPreview, "the old package's preview", "same");
        await assertNothingWritten("the old package's preview");
    });

    it("installed with this checkout's package: `pulumi preview --diff --expect-no-changes` shows no change", async () => {
        await install(newTarball);
        assert.notEqual(await tarballDigest(newTarball), await tarballDigest(oldTarball), "a different package");
        assertPreviewUnchanged(await pulumi(["preview", "--diff", "--expect-no-changes"]), "preview");
        await assertNothingWritten("preview");
    });

    it("`pulumi up --expect-no-changes` passes and writes nothing", async () => {
        assertNoChange(await pulumi(["up", "--yes", "--skip-preview", "--expect-no-changes"]), "up", "same");
        await assertNothingWritten("up");
    });

    it("`pulumi refresh --expect-no-changes` reads every resource and finds nothing changed", async () => {
        const refresh = await pulumi(["refresh", "--yes", "--skip-preview", "--expect-no-changes"]);
        assertNoChange(refresh, "refresh", "refresh");
        assert.deepEqual(refresh.results, RESOURCES.map((name) => `same ${name}`).sort(), refresh.output);
        await assertNothingWritten("refresh");
    });

    it("after the refresh, `pulumi preview --diff --expect-no-changes` still shows no change", async () => {
        assertPreviewUnchanged(await pulumi(["preview", "--diff", "--expect-no-changes"]), "preview after refresh");
        await assertNothingWritten("preview after refresh");
    });

    it("`pulumi destroy` removes everything: the hosts files are byte for byte as before the stack, the servers empty", async () => {
        const destroy = await pulumi(["destroy", "--yes", "--skip-preview"]);
        assert.equal(destroy.code, 0, destroy.output);
        assert.deepEqual(destroy.steps, RESOURCES.map((name) => `delete ${name}`).sort());
        assert.equal(await readFile(hostsFile, "utf8"), HOSTS_BEFORE);
        assert.equal(await readFile(extraFile, "utf8"), EXTRA_BEFORE);
        assert.deepEqual(await listing(), listingBefore, "no file left beside them");
        assert.deepEqual(taskApi.datastores(), []);
        assert.equal(taskApi.stats().datastoresCreated, 2, "each datastore created once");
        assert.deepEqual(widgets.resources(), []);
        assert.equal(widgets.counts().live, 0);
        assert.equal(widgets.counts().creates, 2, "each widget created once");
        assert.equal(widgets.counts().duplicates, 0);
        assert.deepEqual((await project.state()).resources, [], "the stack holds nothing");
    });
});
