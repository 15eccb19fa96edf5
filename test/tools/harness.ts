// `npm run harness -- <project> <up|preview|refresh|destroy> [key=value ...]`: runs a Pulumi project
// (an examples/ name, "." for the root, or a path) through the test harness, without the Pulumi CLI,
// against the real dynamic-provider process, and prints the plan as Pulumi would. State is kept in
// .pulumi-local/harness/<project>.json; key=value pairs are stack config for this run.

import { existsSync, mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { type ConfigValue, Harness } from "../harness/harness";

const ROOT = resolve(__dirname, "..", "..");
const OPERATIONS = ["up", "preview", "refresh", "destroy"] as const;
type Operation = (typeof OPERATIONS)[number];

function projectDir(name: string): string {
    const candidates = [resolve(name), join(ROOT, "examples", name), join(ROOT, name)];
    const found = candidates.find((dir) => existsSync(join(dir, "Pulumi.yaml")));
    if (!found) throw new Error(`no Pulumi.yaml in ${candidates.join(", ")}`);
    return found;
}

async function main(): Promise<void> {
    const [project, operation, ...pairs] = process.argv.slice(2);
    if (!project || !OPERATIONS.includes(operation as Operation)) {
        throw new Error(`usage: npm run harness -- <project> <${OPERATIONS.join("|")}> [key=value ...]`);
    }
    const dir = projectDir(project);
    const stateDir = join(ROOT, ".pulumi-local", "harness");
    mkdirSync(stateDir, { recursive: true });
    const config: Record<string, ConfigValue> = {};
    for (const pair of pairs) {
        const at = pair.indexOf("=");
        if (at <= 0) throw new Error(`config must be key=value, got ${JSON.stringify(pair)}`);
        config[pair.slice(0, at)] = pair.slice(at + 1);
    }
    const stateName = dir === ROOT ? "root" : basename(dir);
    const harness = new Harness({ projectDir: dir, stateFile: join(stateDir, `${stateName}.json`), config });
    const result = await harness[operation as Operation]();
    console.log(result.plan);
    if (Object.keys(result.outputs).length > 0) console.log(`\nOutputs:\n${JSON.stringify(result.outputs, null, 4)}`);
    console.log(
        `\nProvider calls: ${result.calls.map((c) => `${c.method} ${c.name}${c.outcome === "ok" ? "" : ` (${c.outcome})`}`).join(", ") || "none"}`,
    );
    if (!result.ok) process.exitCode = 1;
}

main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
});
