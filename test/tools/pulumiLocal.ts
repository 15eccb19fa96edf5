// `npm run up` and `npm run pulumi -- <command>`: the real Pulumi CLI on the repository's root project,
// with a local file backend inside the project (.pulumi-local/): no login, no cloud account, and an empty
// passphrase unless PULUMI_CONFIG_PASSPHRASE is set. The stack "dev" is created when missing.

import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(__dirname, "..", "..");
const INSTALL = "curl -fsSL https://get.pulumi.com | sh   (or see https://www.pulumi.com/docs/install/)";

function pulumi(args: string[], env: NodeJS.ProcessEnv, quiet = false): number {
    const result = spawnSync("pulumi", args, { cwd: ROOT, env, stdio: quiet ? "ignore" : "inherit" });
    if (result.error) {
        const missing = (result.error as NodeJS.ErrnoException).code === "ENOENT";
        console.error(
            missing ? `The Pulumi CLI is not installed. Install it with:\n  ${INSTALL}` : result.error.message,
        );
        process.exit(missing ? 127 : 1);
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
        PULUMI_BACKEND_URL: `file://${backend}`,
        PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE ?? "",
    };
    pulumi(["version"], env, true);
    if (pulumi(["stack", "select", "--create", "dev"], env) !== 0) process.exit(1);
    process.exit(pulumi(args, env));
}

main();
