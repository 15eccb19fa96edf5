// The compatibility matrix, package managers: the packed package installed from its tarball by pnpm
// (its isolated layout: only direct dependencies at the project's root, the rest under node_modules/.pnpm)
// and by yarn classic (hoisted, like npm, which the Node.js suites use), each from the npm registry
// (test/tools/compat/install.sh), into a fresh project next to the @pulumi/pulumi this repository
// develops against; then a TypeScript program of a HostEntry (whose state refers to its provider by the
// package's name, resolved by the provider process from that layout) and a Datastore through `pulumi up`
// and `pulumi destroy` by the real CLI under Node.js 24.
//
// Yarn berry is left out: by default it installs Plug'n'Play (no node_modules), which Pulumi's Node.js
// SDK does not support (the dynamic-provider launcher resolves @pulumi/pulumi with plain `node`, without
// the .pnp.cjs loader); with `nodeLinker: node-modules` it lays packages out as npm and yarn classic do.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { PROGRAM_FILES, runCase } from "./support/compatStack";
import { devPulumiVersion, installedProject, runPath } from "./support/installs";
import { cliWithNode, requireCompatTools } from "./support/tools";

const run = promisify(execFile);

/**
 * What a user adds for each manager. pnpm 10+ runs no dependency's install script unless allowed, and
 * pnpm 12 fails the install (ERR_PNPM_IGNORED_BUILDS) on one it was not told about: @pulumi/pulumi
 * brings protobufjs (through @grpc/proto-loader), whose postinstall only checks its own CLI's
 * dependencies, so it is denied. Yarn classic needs nothing; it installs here with `--ignore-scripts`
 * (installs.ts says why), the npm suites having run those scripts.
 */
const EXTRA_FILES = {
    pnpm: { "pnpm-workspace.yaml": "allowBuilds:\n  protobufjs: false\n  ssh2: false\n  cpu-features: false\n" },
    yarn: {},
};

describe("compatibility: pnpm and yarn classic (Node.js 24, @pulumi/pulumi as developed against)", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let node: string;
    let nodeVersion: string;
    let managers: { pnpm: string; yarn: string };

    before(async function () {
        const pulumi = requirePulumiCli(this);
        const { node24, ...entries } = requireCompatTools(this, ["node24", "pnpm", "yarn"]);
        managers = entries;
        node = node24;
        nodeVersion = (await run(node24, ["--version"])).stdout.trim();
        cli = await cliWithNode(pulumi, node24, runPath("cli-managers-node24"));
    });

    for (const manager of ["pnpm", "yarn"] as const) {
        it(`${manager}: the tarball installed, a program of a HostEntry and a Datastore through up and destroy`, async () => {
            const installed = await installedProject({
                manager,
                pulumiVersion: devPulumiVersion(),
                files: { ...PROGRAM_FILES, ...EXTRA_FILES[manager] },
                entry: managers[manager],
                node,
                ignoreScripts: manager === "yarn",
            });
            const modules = join(installed.dir, "node_modules");
            if (manager === "pnpm") {
                assert.ok(existsSync(join(modules, ".pnpm")), "pnpm's isolated layout");
                assert.ok(!existsSync(join(modules, "aws4")), "the package's own dependency is not hoisted");
            } else {
                assert.ok(existsSync(join(modules, ".yarn-integrity")), "yarn classic's layout");
            }
            const { timings } = await runCase(cli, installed, ["HostEntry", "Datastore"], {
                node: nodeVersion,
                refresh: false,
                checkLog: true,
            });
            console.log(
                `      installed in ${installed.installSeconds.toFixed(1)} s; seconds ${JSON.stringify(timings)}`,
            );
        });
    }
});
