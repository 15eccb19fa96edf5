// `npm run up` and `npm run pulumi -- <command>`: the real Pulumi CLI on the repository's root project,
// with a local file backend inside the project (.pulumi-local/): no login, no cloud account, and an empty
// passphrase unless PULUMI_CONFIG_PASSPHRASE is set. The stack "dev" is created when missing.
// The CLI is the `pulumi` on PATH, else the one test/tools/pulumi-cli/build.sh builds (once) from Go modules.

import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";

const ROOT = resolve(__dirname, "..", "..");
const BUILD = join(ROOT, "test", "tools", "pulumi-cli", "build.sh");

/** The directory holding `pulumi`: the build script prints it (building first if needed). */
function cliBinDir(): string {
    const result = spawnSync("bash", [BUILD], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
    if (result.status !== 0) {
        console.error("The Pulumi CLI is not available (see above). Install it, or install Go and run `npm run cli`.");
        process.exit(result.status ?? 1);
    }
    return result.stdout.trim().split("\n").pop() ?? "";
}

function pulumi(args: string[], env: NodeJS.ProcessEnv): number {
    const result = spawnSync("pulumi", args, { cwd: ROOT, env, stdio: "inherit" });
    if (result.error) {
        console.error(result.error.message);
        process.exit(1);
    }
    return result.status ?? 1;
}

function main(): void {
    const args = process.argv.slice(2);
    if (args.length === 0) {
        console.error("usage: npm run pulumi -- <pulumi command> [args]   (npm run up = pulumi up --yes)");
        process.exit(2);
    }
    const backend = join(ROOT, ".pulumi-local");
    mkdirSync(backend, { recursive: true });
    const env = {
        ...process.env,
        PATH: `${cliBinDir()}${delimiter}${process.env.PATH ?? ""}`,
        PULUMI_BACKEND_URL: `file://${backend}`,
        PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE ?? "",
        PULUMI_SKIP_UPDATE_CHECK: "true",
    };
    const select = spawnSync("pulumi", ["stack", "select", "--create", "dev"], { cwd: ROOT, env, stdio: "ignore" });
    if (select.status !== 0 && pulumi(["stack", "select", "--create", "dev"], env) !== 0) process.exit(1);
    process.exit(pulumi(args, env));
}

main();
