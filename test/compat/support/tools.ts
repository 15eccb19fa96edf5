// The tools of the compatibility matrix: Node.js 22 and 24, pnpm and yarn, installed from the npm
// registry into the per-user cache by test/tools/compat/install.sh (a stage of .ci/run), and the real
// Pulumi CLI run with a chosen `node` first on PATH. Locally a missing tool skips the suite, naming it
// and the command that installs it; in CI (CI=true) it fails the suite instead.

import { spawnSync } from "node:child_process";
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "../../support/projects";
import type { PulumiCli } from "../../support/pulumiCli";
import { skipBecause } from "../../support/system";

const INSTALL_SCRIPT = join(REPO_ROOT, "test", "tools", "compat", "install.sh");

/** A tool of the matrix, by the name install.sh gives it. */
export type CompatTool = "node22" | "node24" | "pnpm" | "yarn";

let located: { paths: Partial<Record<CompatTool, string>>; missing: string } | undefined;

function locate(): { paths: Partial<Record<CompatTool, string>>; missing: string } {
    const where = spawnSync("bash", [INSTALL_SCRIPT, "--where"], { encoding: "utf8" });
    const paths: Partial<Record<CompatTool, string>> = {};
    for (const line of where.stdout.split("\n")) {
        const [name, path] = line.split(" ");
        if (name && path) paths[name as CompatTool] = path;
    }
    return { paths, missing: where.stderr.trim() || `bash ${INSTALL_SCRIPT} --where failed (${where.status})` };
}

/**
 * The path of each tool in `names` (a node binary, or the JavaScript entry of pnpm or yarn). Skips the
 * suite when one is missing, except in CI, where .ci/run installs them first: there it fails.
 */
export function requireCompatTools<T extends CompatTool>(
    context: Mocha.Context,
    names: readonly T[],
): Record<T, string> {
    located ??= locate();
    const found = located.paths;
    const absent = names.filter((name) => !found[name]);
    if (absent.length === 0) return Object.fromEntries(names.map((name) => [name, found[name]])) as Record<T, string>;
    const why = `${absent.join(", ")} not installed (${located.missing})`;
    if (process.env.CI === "true") throw new Error(`CI must run the compatibility matrix, but ${why}`);
    skipBecause(context, why);
}

/**
 * The CLI `cli` with `node` first on PATH: a bin directory (under `dir`) of links to the CLI, its
 * language host, the dynamic-provider launcher and that node. The Automation API puts the directory of
 * the `pulumi` it runs first on PATH, and the engine hands its PATH to the language host and to the
 * provider processes, which both run `node` from PATH.
 */
export async function cliWithNode(cli: PulumiCli, node: string, dir: string): Promise<PulumiCli> {
    const binDir = join(dir, "bin");
    await mkdir(binDir, { recursive: true });
    for (const tool of ["pulumi", "pulumi-language-nodejs", "pulumi-resource-pulumi-nodejs"]) {
        await symlink(join(cli.binDir, tool), join(binDir, tool));
    }
    await symlink(node, join(binDir, "node"));
    return { binDir, pulumi: join(binDir, "pulumi"), source: cli.source, home: cli.home };
}
