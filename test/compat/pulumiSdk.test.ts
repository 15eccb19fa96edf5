// The compatibility matrix, @pulumi/pulumi: the oldest version the declared peer range admits and the
// newest on the registry, each installed with npm next to the packed package in a fresh project and run
// under Node.js 22 by the real CLI: a TypeScript program of each resource through up, refresh and
// destroy, and the three hooks that reach into the SDK's dynamic-provider process, proved by what the
// engine sees. The Log client (provider/shared/engineLog.ts): the Datastore's progress arrives as the
// engine's ephemeral info messages. The engine-call hook (provider/shared/engineCalls.ts): those lines
// carry the datastore's URN, and a `customTimeouts` of 3 s ends a create whose task runs for an hour.
// The Cancel hook (provider/shared/engineCancel.ts): a `kill -INT` of the CLI alone (the engine sends
// Cancel, not a signal, to the provider) while a task runs makes the create answer at once with partial
// state, long before the create's own 60 s deadline.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../provider/tasks/protocol/wire";
import { until } from "../support/processes";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { CompatStack, diagnostics, PROGRAM_FILES, runCase, secondsSince } from "./support/compatStack";
import { installedProject, newestPulumiVersion, oldestPulumiVersion, runPath } from "./support/installs";
import { cliWithNode, requireCompatTools } from "./support/tools";

const run = promisify(execFile);
const HOUR = 3_600_000;

describe("compatibility: @pulumi/pulumi, the oldest in the peer range and the newest (Node.js 22, npm)", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let nodeVersion: string;
    const versions: Record<"oldest" | "newest", string> = { oldest: "", newest: "" };

    before(async function () {
        const pulumi = requirePulumiCli(this);
        const { node22 } = requireCompatTools(this, ["node22"]);
        nodeVersion = (await run(node22, ["--version"])).stdout.trim();
        versions.oldest = oldestPulumiVersion();
        versions.newest = await newestPulumiVersion();
        console.log(`      oldest ${versions.oldest}, newest ${versions.newest}`);
        cli = await cliWithNode(pulumi, node22, runPath("cli-sdk-node22"));
    });

    for (const which of ["oldest", "newest"] as const) {
        it(`the ${which}: a program of each resource through up (progress reaching the engine's Log service), refresh and destroy`, async () => {
            const installed = await installedProject({
                manager: "npm",
                pulumiVersion: versions[which],
                files: PROGRAM_FILES,
                ignoreScripts: true,
            });
            const { timings, ran } = await runCase(cli, installed, ["HostEntry", "Datastore", "AsyncResource"], {
                node: nodeVersion,
                refresh: true,
                checkLog: true,
            });
            console.log(
                `      ${versions[which]}: seconds ${JSON.stringify(timings)}${ran ? "" : " (the run of the Node.js 22 suite: the same case)"}`,
            );
        });

        it(`the ${which}: customTimeouts reaches the provider (the engine-call hook), which ends a create whose task runs for an hour at it`, async () => {
            const installed = await installedProject({
                manager: "npm",
                pulumiVersion: versions[which],
                files: PROGRAM_FILES,
                ignoreScripts: true,
            });
            // The `timeouts` input (the fallback) ends it at 60 s should customTimeouts not be heard.
            const stack = await CompatStack.open(cli, installed, ["Datastore"], {
                datastoreCustomCreateTimeout: "3s",
                datastoreCreateTimeout: "60s",
            });
            try {
                stack.api.addFault({
                    match: { method: "POST", path: DATASTORES_PATH },
                    fault: { task: { durationMs: HOUR } },
                });
                const up = await stack.up();
                assert.equal(up.ok, false, "the create ends at its customTimeouts");
                const errors = up.events
                    .map((e) => e.diagnosticEvent)
                    .filter((d) => d?.severity === "error")
                    .map((d) => d?.message ?? "");
                assert.ok(
                    errors.some((message) => message.includes("raise `customTimeouts.create`")),
                    `the error names the setting that ended it:\n${diagnostics(up.events)}`,
                );
                const ds1 = (await stack.resources()).ds1;
                assert.equal(ds1?.outputs?.tainted, true, "the create is on record, tainted");
                stack.api.advanceClock(HOUR);
                const destroyed = await stack.project.destroy();
                assert.ok(destroyed.ok, destroyed.stderr);
                assert.deepEqual(stack.api.datastores(), []);
            } finally {
                await stack.close();
            }
        });

        it(`the ${which}: kill -INT of the CLI while a Datastore task runs reaches the provider as the engine's Cancel, which ends the create at once with partial state`, async () => {
            const installed = await installedProject({
                manager: "npm",
                pulumiVersion: versions[which],
                files: PROGRAM_FILES,
                ignoreScripts: true,
            });
            const stack = await CompatStack.open(cli, installed, ["Datastore"], { datastoreCreateTimeout: "60s" });
            try {
                stack.api.addFault({
                    match: { method: "POST", path: DATASTORES_PATH },
                    fault: { task: { durationMs: HOUR } },
                });
                const polls = () =>
                    stack.api.requests().filter((r) => r.method === "GET" && r.path.startsWith(ASYNC_OPERATIONS_PATH));
                const up = stack.project.spawn(["up", "--yes", "--skip-preview", "--non-interactive"]);
                await until(() => polls().length > 0, up);
                const interrupted = Date.now();
                process.kill(up.child.pid as number, "SIGINT");
                const { code, output } = await up.done;
                console.log(
                    `      ${versions[which]}: the up ended ${secondsSince(interrupted)} s after the interrupt`,
                );
                assert.notEqual(code, 0, output);
                const ds1 = (await stack.resources()).ds1;
                assert.ok(ds1, `the create is recorded:\n${output}`);
                assert.equal(
                    ds1.outputs?.tainted,
                    false,
                    `answered on the Cancel, not at the create's 60 s deadline: ${String(ds1.initErrors)}`,
                );
                assert.match(String(ds1.initErrors), /interrupted/);

                stack.api.advanceClock(HOUR);
                const destroyed = await stack.project.destroy();
                assert.ok(destroyed.ok, destroyed.stderr);
                assert.deepEqual(stack.api.datastores(), []);
                assert.equal(stack.api.stats().datastoresCreated, 1);
            } finally {
                await stack.close();
            }
        });
    }
});
