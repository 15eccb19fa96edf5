// One case of the compatibility matrix: a user's TypeScript program in a fresh project (the packed
// package installed by a package manager, next to a given @pulumi/pulumi), run by the real Pulumi CLI
// with a given Node.js first on PATH, against real servers: the task API server the package bundles
// (pulumi-lifecycle/task-api-server, loaded from the install) for tasks.Datastore, the generic dialect's
// server (test/dialects/servers) for tasks.AsyncResource, and a hosts file in a temporary directory.
// Every node process the CLI starts records its version (nodeProbe.cjs), so a case proves which Node.js
// ran the program and which ran each dynamic-provider process.

import { strict as assert } from "node:assert";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import type * as taskApi from "../../../provider/taskApiServer/index";
import { startGenericServer } from "../../dialects/servers/generic";
import type { DialectServer } from "../../dialects/servers/kit";
import { assertOk, CliProject, nameOf, type StateResource } from "../../support/cliProject";
import { CLUSTER, HCI, TOKEN } from "../../support/datastoreFixture";
import { makeTempDir, type TempDir } from "../../support/projects";
import type { PulumiCli } from "../../support/pulumiCli";
import { typeCheckedOnce } from "../../support/typeCheckedPrograms";
import { WIDGETS_TOKEN } from "../../tasks/asyncResource/dialectFixtures";
import type { InstalledProject } from "./installs";

/** A resource kind the program can declare. */
export type Kind = "HostEntry" | "Datastore" | "AsyncResource";

/** The program of every case: the resources the stack config `compat:kinds` lists, as a user writes them. */
export const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import { hosts, tasks } from "pulumi-lifecycle";

const config = new pulumi.Config("compat");
const kinds = config.requireObject<string[]>("kinds");
const createTimeout = config.get("datastoreCreateTimeout");
const customCreate = config.get("datastoreCustomCreateTimeout");

export const programNode = process.version;
export const sdkVersion: string = require("@pulumi/pulumi/package.json").version;

/** The ids of the resources declared (only those: an undefined stack output draws a warning). */
export const ids: Record<string, pulumi.Output<string>> = {};

if (kinds.includes("HostEntry")) {
    ids.web = new hosts.HostEntry("web", {
        address: "10.0.0.5",
        names: ["web.internal", "web"],
        file: config.require("hostsFile"),
    }).id;
}

if (kinds.includes("Datastore")) {
    ids.ds1 = new tasks.Datastore(
        "ds1",
        {
            hciClusterUuid: "${HCI}",
            clusterId: "${CLUSTER}",
            name: "ds1",
            sizeInBytes: 16 * 2 ** 30,
            datastoreType: "VMFS",
            timeouts: createTimeout === undefined ? undefined : { create: createTimeout },
        },
        { customTimeouts: customCreate === undefined ? undefined : { create: customCreate } },
    ).id;
}

if (kinds.includes("AsyncResource")) {
    ids.w1 = new tasks.AsyncResource("w1", {
        api: { url: config.require("widgetsUrl"), dialect: "generic", tokenConfig: "widgets:token" },
        collectionPath: "/widgets",
        itemPath: "/widgets/{id}",
        naturalKey: "name",
        idField: "id",
        lookup: { query: "name={key}" },
        body: { name: "w1", size: 3 },
    }).id;
}
`;

/** The project files of every case besides package.json and tsconfig.json. */
export const PROGRAM_FILES = { "Pulumi.yaml": "name: compat-app\nruntime: nodejs\n", "index.ts": PROGRAM };

const BASE = "127.0.0.1\tlocalhost\n# kept as it is\n";
const WEB_LINE = "10.0.0.5\tweb.internal web\n";
const PROBE = join(__dirname, "nodeProbe.cjs");
const PROVIDER_TYPE = "pulumi-nodejs:dynamic/";

/** An `up` with the engine's events. */
export interface UpResult {
    readonly ok: boolean;
    readonly output: string;
    readonly events: EngineEvent[];
}

/** A stack of a case, its servers and hosts file; `close` removes them. */
export class CompatStack {
    private constructor(
        readonly project: CliProject,
        readonly installed: InstalledProject,
        readonly kinds: readonly Kind[],
        readonly api: taskApi.TaskApiServer,
        readonly widgets: DialectServer,
        private readonly temp: TempDir,
    ) {}

    /** The hosts file the program's HostEntry manages. */
    get hostsFile(): string {
        return join(this.temp.dir, "hosts");
    }

    private get probeLog(): string {
        return join(this.temp.dir, "node-processes.jsonl");
    }

    /** A new stack of `installed`'s program declaring `kinds`, run by `cli`. */
    static async open(
        cli: PulumiCli,
        installed: InstalledProject,
        kinds: readonly Kind[],
        options: { datastoreCreateTimeout?: string; datastoreCustomCreateTimeout?: string } = {},
    ): Promise<CompatStack> {
        const temp = await makeTempDir("pulumi-lifecycle-compat-case-");
        const load = createRequire(join(installed.dir, "package.json"));
        const { startTaskApiServer } = load("pulumi-lifecycle/task-api-server") as typeof taskApi;
        const api = await startTaskApiServer({ token: TOKEN, taskCompleteAfterPolls: 3 });
        const widgets = await startGenericServer({ token: WIDGETS_TOKEN, retryAfter: "none" });
        await writeFile(join(temp.dir, "hosts"), BASE);
        const project = await CliProject.open(cli, installed.dir, { asInstalled: true });
        // One `pulumi config set-all` (CliProject.open's options would run the CLI once per key).
        const plain = (value: string) => ({ value });
        const secret = (value: string) => ({ value, secret: true });
        await project.stack.setAllConfig({
            "compat:kinds": plain(JSON.stringify(kinds)),
            "compat:hostsFile": plain(join(temp.dir, "hosts")),
            "compat:widgetsUrl": plain(widgets.url),
            ...(options.datastoreCreateTimeout
                ? { "compat:datastoreCreateTimeout": plain(options.datastoreCreateTimeout) }
                : {}),
            ...(options.datastoreCustomCreateTimeout
                ? { "compat:datastoreCustomCreateTimeout": plain(options.datastoreCustomCreateTimeout) }
                : {}),
            "pulumi-lifecycle:taskApiUrl": plain(api.url),
            "pulumi-lifecycle:taskPollInitialMs": plain("20"),
            "pulumi-lifecycle:taskPollMaxMs": plain("50"),
            "pulumi-lifecycle:taskApiToken": secret(TOKEN),
            "widgets:token": secret(WIDGETS_TOKEN),
        });
        const probe = { NODE_OPTIONS: `--require ${PROBE}`, COMPAT_PROBE_LOG: join(temp.dir, "node-processes.jsonl") };
        // The workspace keeps a copy of the environment it was given; `spawn` uses the project's.
        Object.assign(project.env, probe);
        Object.assign(project.stack.workspace.envVars, probe);
        return new CompatStack(project, installed, kinds, api, widgets, temp);
    }

    /** `pulumi up`, with every event the engine sent. */
    async up(): Promise<UpResult> {
        const events: EngineEvent[] = [];
        // For this up only: the workspace's environment also serves the project's other operations,
        // which CliProject.run gives their own.
        const envVars = this.project.stack.workspace.envVars;
        return typeCheckedOnce(
            this.project.dir,
            async (typeCheck): Promise<UpResult> => {
                Object.assign(envVars, typeCheck);
                try {
                    const { stdout, stderr } = await this.project.stack.up({ onEvent: (event) => events.push(event) });
                    return { ok: true, output: `${stdout}\n${stderr}`, events };
                } catch (error) {
                    const e = error as { stdout?: string; stderr?: string; message?: string };
                    return { ok: false, output: `${e.stdout ?? ""}\n${e.stderr ?? e.message ?? ""}`, events };
                } finally {
                    for (const key of Object.keys(typeCheck)) delete envVars[key];
                }
            },
            (up) => up.ok,
        );
    }

    /** The hosts file's text. */
    hostsText(): Promise<string> {
        return readFile(this.hostsFile, "utf8");
    }

    /** The Node.js versions of the node processes the CLI started: the program's and the providers'. */
    async nodeProcesses(): Promise<{ program: string[]; providers: string[] }> {
        const text = await readFile(this.probeLog, "utf8").catch(() => "");
        const processes = text
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line) as { version: string; argv: string[] });
        const versions = (test: (argv: string) => boolean) =>
            processes.filter((p) => test(p.argv.join(" "))).map((p) => p.version);
        return {
            program: versions((argv) => argv.includes("cmd/run")),
            providers: versions((argv) => argv.includes("dynamic-provider")),
        };
    }

    /** The resources of the stack by name. */
    async resources(): Promise<Record<string, StateResource>> {
        const { resources } = await this.project.state();
        return Object.fromEntries(resources.map((r) => [nameOf(r.urn), r]));
    }

    async close(): Promise<void> {
        try {
            await this.project.cleanup();
        } finally {
            await this.api.close();
            await this.widgets.close();
            await this.temp.cleanup();
        }
    }
}

/** The engine's diagnostics of an `up` that the Log service carried: ephemeral info messages, with their row. */
export function ephemeralInfo(events: readonly EngineEvent[]): { message: string; urn: string | undefined }[] {
    return events
        .map((e) => e.diagnosticEvent)
        .filter((d) => d?.ephemeral && d.severity === "info")
        .map((d) => ({ message: d?.message ?? "", urn: d?.urn || undefined }));
}

/** Every diagnostic of a run, as "severity: message", for failure messages. */
export function diagnostics(events: readonly EngineEvent[]): string {
    return (
        events
            .map((e) => e.diagnosticEvent)
            // The engine also sends debug lines (its own RPC log), which its type does not list.
            .filter((d): d is NonNullable<typeof d> => d !== undefined && (d.severity as string) !== "debug")
            .map((d) => `${d.severity}${d.ephemeral ? " (ephemeral)" : ""}: ${d.message.trim()}`)
            .join("\n")
    );
}

/** Seconds since `started` (a Date.now()), for the matrix's timings. */
export function secondsSince(started: number): string {
    return ((Date.now() - started) / 1000).toFixed(1);
}

/**
 * The case every cell of the matrix runs: `up` (with `checkLog`, the Datastore's progress must reach
 * the engine's Log service), then, with `refresh`, hand edits outside Pulumi and `pulumi refresh`, then
 * `pulumi destroy`; after each, the hosts file's bytes and the servers' records. Then which Node.js ran
 * the program and the provider processes. Returns the seconds each operation took.
 */
export async function lifecycle(
    stack: CompatStack,
    expected: { node: string; refresh: boolean; checkLog: boolean },
): Promise<Record<string, string>> {
    const has = (kind: Kind) => stack.kinds.includes(kind);
    const timings: Record<string, string> = {};
    let started = Date.now();
    const up = await stack.up();
    timings.up = secondsSince(started);
    assert.ok(up.ok, `the up failed:\n${up.output}\n${diagnostics(up.events)}`);
    const outputs = await stack.project.outputs();
    assert.equal(outputs.programNode, expected.node, "the program ran on the Node.js first on PATH");
    assert.equal(outputs.sdkVersion, stack.installed.pulumiVersion, "the program loaded the installed SDK");
    assert.equal(await stack.hostsText(), has("HostEntry") ? BASE + WEB_LINE : BASE);
    assert.deepEqual(
        stack.api.datastores().map((d) => d.name),
        has("Datastore") ? ["ds1"] : [],
    );
    assert.deepEqual(
        stack.widgets.resources().map((w) => [w.name, w.size]),
        has("AsyncResource") ? [["w1", 3]] : [],
    );
    if (has("HostEntry")) {
        // The SDK stores a reference by the package's name: the subpath the package exports for it, or
        // (SDKs that resolve the module's file rather than the package's export) its file in the package,
        // which the package exports too. Never a path on this machine, never the code.
        const provider = String((await stack.resources()).web?.inputs?.__provider);
        const requires = [...new Set(provider.match(/require\([^)]*\)/g))];
        assert.equal(requires.length, 1, provider);
        assert.match(
            requires[0] ?? "",
            /^require\("pulumi-lifecycle\/(provider\/hostEntry|dist\/hosts\/hostEntryShim\.js)"\)$/,
            "the state refers to the provider by the package's name, which the provider process resolves",
        );
        console.log(`      the state's __provider: ${requires[0]}`);
    }
    if (expected.checkLog) {
        // The Log client sends progress as ephemeral info messages; the engine-call hook gives each the
        // datastore's URN, so the engine shows it on the datastore's row rather than the Stack's.
        const progress = ephemeralInfo(up.events).filter((line) => line.message.includes('datastore "ds1"'));
        assert.ok(
            progress.length > 0,
            `the Datastore's progress reached the engine's Log service (ephemeral info messages); the up's diagnostics:\n${diagnostics(up.events)}`,
        );
        assert.deepEqual(
            progress.filter((line) => !line.urn?.endsWith("::ds1")),
            [],
            "every progress line is on the datastore's own row",
        );
    }
    const warnings = up.events.filter((e) => e.diagnosticEvent?.severity === "warning");
    assert.deepEqual(
        warnings.map((e) => e.diagnosticEvent?.message),
        [],
        "no warning: every hook into the SDK attached (one that cannot warns)",
    );

    const names = stack.kinds.map((kind) => ({ HostEntry: "web", Datastore: "ds1", AsyncResource: "w1" })[kind]);
    if (expected.refresh) {
        const edited = `${BASE}10.0.0.5\tweb.internal web # edited by hand\n`;
        if (has("HostEntry")) await writeFile(stack.hostsFile, edited);
        const widgetId = stack.widgets.resources()[0]?.id;
        if (has("AsyncResource")) stack.widgets.mutate(String(widgetId), { size: 5 });
        stack.api.clearRequests();
        started = Date.now();
        const refreshed = await stack.project.refresh();
        timings.refresh = secondsSince(started);
        assertOk(refreshed);
        assert.deepEqual(refreshed.steps.sort(), names.map((name) => `refresh ${name}`).sort());
        const state = await stack.resources();
        if (has("HostEntry")) {
            assert.equal(state.web?.outputs?.comment, "edited by hand", "refresh read the hand edit");
            assert.equal(await stack.hostsText(), edited, "refresh wrote nothing");
        }
        if (has("AsyncResource")) {
            assert.equal((state.w1?.outputs?.resource as { size?: unknown } | undefined)?.size, 5);
            assert.deepEqual(
                stack.widgets.resources().map((w) => [w.name, w.size]),
                [["w1", 5]],
            );
        }
        if (has("Datastore")) {
            assert.equal(state.ds1?.outputs?.state, "OK");
            assert.deepEqual([...new Set(stack.api.requests().map((r) => r.method))], ["GET"], "refresh only reads");
        }
    }

    started = Date.now();
    const destroyed = await stack.project.destroy();
    timings.destroy = secondsSince(started);
    assertOk(destroyed);
    assert.deepEqual(destroyed.steps.sort(), names.map((name) => `delete ${name}`).sort());
    assert.equal(await stack.hostsText(), BASE);
    assert.deepEqual(stack.api.datastores(), []);
    assert.equal(stack.widgets.counts().live, 0);
    assert.equal(stack.widgets.counts().duplicates, 0);
    assert.equal(stack.api.stats().datastoresCreated, has("Datastore") ? 1 : 0, "zero duplicates");
    assert.deepEqual(
        (await stack.project.state()).resources.filter((r) => r.type.startsWith(PROVIDER_TYPE)),
        [],
    );

    const ran = await stack.nodeProcesses();
    assert.ok(ran.program.length > 0, "the probe saw the program's node process");
    assert.deepEqual([...new Set(ran.program)], [expected.node], "every program ran on that Node.js");
    assert.ok(ran.providers.length > 0, "the probe saw the dynamic-provider processes");
    assert.deepEqual([...new Set(ran.providers)], [expected.node], "every provider process ran on that Node.js");
    return timings;
}

const cases = new Map<string, Promise<Record<string, string>>>();

/**
 * Opens a stack, runs `lifecycle` on it and closes it, once per test run for each distinct case (the
 * same project, Node.js, resources and checks): a suite asking for a case another suite already ran
 * (the newest @pulumi/pulumi is often the one developed against) gets that run's result. Resolves with
 * the timings, and whether this call ran the case.
 */
export async function runCase(
    cli: PulumiCli,
    installed: InstalledProject,
    kinds: readonly Kind[],
    expected: { node: string; refresh: boolean; checkLog: boolean },
): Promise<{ timings: Record<string, string>; ran: boolean }> {
    const key = JSON.stringify([installed.dir, kinds, expected]);
    const earlier = cases.get(key);
    if (earlier) return { timings: await earlier, ran: false };
    const run = (async () => {
        const started = Date.now();
        const stack = await CompatStack.open(cli, installed, kinds);
        try {
            const timings = await lifecycle(stack, expected);
            return { ...timings, case: secondsSince(started) };
        } finally {
            await stack.close();
        }
    })();
    cases.set(key, run);
    return { timings: await run, ran: true };
}
