// The Pulumi CLI's stack state, read and written the supported way: `pulumi stack export` and
// `pulumi stack import`, run in the project directory with the user's environment (backend, passphrase,
// PULUMI_HOME), so secrets stay encrypted as the stack's secrets provider wrote them.

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Deployment } from "../hosts/logic/importState";
import { CliError } from "./cliError";

/** What `pulumi stack export` prints. */
export interface ExportedStack {
    version: number;
    deployment: Deployment;
}

/** Exports `stack` of the project in `cwd`. */
export async function exportStack(stack: string, cwd: string, env: NodeJS.ProcessEnv): Promise<ExportedStack> {
    const stdout = await pulumi(["stack", "export", "--stack", stack], cwd, env);
    const exported = JSON.parse(stdout) as ExportedStack;
    if (typeof exported.version !== "number" || typeof exported.deployment !== "object") {
        throw new CliError(`\`pulumi stack export --stack ${stack}\` printed no deployment; is it a Pulumi CLI?`, 1);
    }
    return exported;
}

/** Imports `exported` into `stack` of the project in `cwd`. */
export async function importStack(
    stack: string,
    exported: ExportedStack,
    cwd: string,
    env: NodeJS.ProcessEnv,
): Promise<void> {
    const directory = await mkdtemp(join(tmpdir(), "pulumi-lifecycle-import-"));
    const file = join(directory, "deployment.json");
    try {
        await writeFile(file, JSON.stringify(exported), { mode: 0o600 });
        await pulumi(["stack", "import", "--stack", stack, "--file", file], cwd, env);
    } finally {
        await rm(directory, { recursive: true, force: true });
    }
}

/** The project's name, from Pulumi.yaml in `cwd`. */
export async function projectName(cwd: string): Promise<string> {
    for (const name of ["Pulumi.yaml", "Pulumi.yml"]) {
        const text = await readFile(join(cwd, name), "utf8").catch(() => undefined);
        if (text === undefined) continue;
        const value = /^name:[ \t]*(.+?)[ \t]*$/m.exec(text)?.[1]?.replace(/^(["'])(.*)\1$/, "$2");
        if (value) return value;
        throw new CliError(`${join(cwd, name)} has no \`name:\`; is it a Pulumi project?`, 1);
    }
    throw new CliError("--stack needs the Pulumi project: run the command in its directory (no Pulumi.yaml here).", 1);
}

function pulumi(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
    return new Promise((resolve, reject) => {
        execFile("pulumi", args, { cwd, env, maxBuffer: 512 * 1024 * 1024 }, (error, stdout, stderr) => {
            if (!error) return resolve(stdout);
            const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
            reject(
                new CliError(
                    missing
                        ? "--stack runs the Pulumi CLI, and no `pulumi` is on PATH. Install it, or import without --stack."
                        : `\`pulumi ${args.join(" ")}\` failed: ${stderr.trim() || error.message}`,
                    1,
                ),
            );
        });
    });
}
