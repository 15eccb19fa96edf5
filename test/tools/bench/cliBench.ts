// Real-CLI benchmark: `pulumi up` and `pulumi refresh` of N HostEntry resources, beside the same program
// with N resources of a minimal dynamic provider that does nothing, each with the real `pulumi` binary on
// a local file backend. The package is installed as users install it (the packed tarball unpacked into
// node_modules), so its state holds the `__provider` users get. Reports wall times, their ratio and the
// size of the stack's checkpoint.

import { execFile } from "node:child_process";
import { mkdir, readdir, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { makeTempDir, REPO_ROOT } from "../../support/projects";
import { cliEnv, pulumiCli } from "../../support/pulumiCli";
import { median } from "./median";
import { providerCodeCpu } from "./providerCode";
import { type ReplayCpu, replayRefresh } from "./refreshReplay";

const run = promisify(execFile);

/** One program's figures. */
export interface CliBenchRun {
    readonly upSeconds: number;
    readonly refreshSeconds: number;
    /** The provider process's CPU for a refresh's Reads and Diffs, replayed without the CLI (refreshReplay.ts). */
    readonly replayCpuSeconds: number | undefined;
    /** The lowest and highest of those replays' CPU seconds: their spread. */
    readonly replayCpuRange: readonly [number, number] | undefined;
    /** The same RPCs replayed again in that process, warm (refreshReplay.ts). */
    readonly warmReplayCpuSeconds: number | undefined;
    /** The replay's first pass without the SDK: the provider's own code, called directly (providerCode.ts). */
    readonly codeCpuSeconds: number;
    readonly stateBytes: number;
}

const HOSTS_PROGRAM = (n: number) => `const { hosts } = require("pulumi-lifecycle");
for (let i = 0; i < ${n}; i++) {
    new hosts.HostEntry("e" + i, { address: "10.8." + (i >> 8) + "." + (i & 255), names: ["cli-" + i + ".internal"], file: "./hosts" });
}
`;

/**
 * The smallest dynamic resource, given the HostEntry program's arguments exactly: its provider creates
 * nothing and reads back what it was given. What a refresh costs beyond it is our provider's work and
 * the fields our state adds (`line`, `stateVersion`, `adopt`, the owning stack).
 */
const NOOP_PROGRAM = (n: number) => `const pulumi = require("@pulumi/pulumi");
const provider = {
    async create(inputs) { return { id: inputs.names[0], outs: inputs }; },
    async read(id, props) { return { id, props }; },
};
class Noop extends pulumi.dynamic.Resource {
    constructor(name, args) { super(provider, name, args, {}); }
}
for (let i = 0; i < ${n}; i++) {
    new Noop("e" + i, { address: "10.8." + (i >> 8) + "." + (i & 255), names: ["cli-" + i + ".internal"], file: "./hosts" });
}
`;

async function project(root: string, name: string, program: string, tarball: string): Promise<string> {
    const dir = join(root, name);
    await mkdir(join(dir, "node_modules", "@pulumi"), { recursive: true });
    await writeFile(join(dir, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\nmain: index.js\n`);
    await writeFile(join(dir, "package.json"), JSON.stringify({ name, private: true, main: "index.js" }));
    await writeFile(join(dir, "index.js"), program);
    await writeFile(join(dir, "hosts"), "127.0.0.1\tlocalhost\n");
    // As npm installs it: the tarball's contents under node_modules (not a link), so the SDK stores the
    // package's `__provider` by name, with the peer @pulumi/pulumi beside it.
    const target = join(dir, "node_modules", "pulumi-lifecycle");
    await mkdir(target);
    await run("tar", ["-xzf", tarball, "-C", target, "--strip-components=1"]);
    await symlink(join(REPO_ROOT, "node_modules", "@pulumi", "pulumi"), join(dir, "node_modules", "@pulumi", "pulumi"));
    return dir;
}

/** Refreshes per program, alternated with the other's; the table shows their median. */
export const REFRESHES = 15;
/** Replays of a refresh's RPCs per program, alternated with the other's; the table shows their median. */
export const REPLAYS = 7;

/** One program's stack, and the CLI run on it. */
interface BenchStack {
    readonly dir: string;
    readonly backend: string;
    pulumi(args: string[]): Promise<unknown>;
}

function benchStack(dir: string, env: Record<string, string>, backend: string): BenchStack {
    const pulumi = (args: string[]) =>
        run("pulumi", args, { cwd: dir, env: { ...process.env, ...env }, maxBuffer: 64 << 20 }).catch(
            (error: { stdout?: string; stderr?: string; message?: string }) => {
                const output = `${error.stdout ?? ""}${error.stderr ?? ""}`.split("\n").slice(-30).join("\n");
                throw new Error(`pulumi ${args.join(" ")} failed in ${dir}:\n${output}`);
            },
        );
    return { dir, backend, pulumi };
}

async function timed(stack: BenchStack, args: string[]): Promise<number> {
    const started = performance.now();
    await stack.pulumi(args);
    return (performance.now() - started) / 1000;
}

/**
 * Each program's `up`, then their refreshes alternated (a refresh takes 2-5 s, where one run's noise is
 * 10% or more and the machine drifts over minutes: the median of several, each beside the other's), then
 * the replays of a refresh's RPCs into the provider alone, each checkpoint's size and a destroy.
 */
async function measure(stacks: readonly BenchStack[]): Promise<CliBenchRun[]> {
    const ups: number[] = [];
    for (const stack of stacks) {
        await stack.pulumi(["stack", "init", "bench"]);
        ups.push(await timed(stack, ["up", "--yes", "--skip-preview", "--non-interactive"]));
    }
    const refreshes: number[][] = stacks.map(() => []);
    for (let i = 0; i < REFRESHES; i++) {
        for (const [at, stack] of stacks.entries()) {
            refreshes[at]?.push(await timed(stack, ["refresh", "--yes", "--skip-preview", "--non-interactive"]));
        }
    }
    const checkpoints: string[] = [];
    for (const stack of stacks) {
        const states = join(stack.backend, ".pulumi", "stacks");
        const [projectDir] = await readdir(states);
        checkpoints.push(join(states, projectDir as string, "bench.json"));
    }
    const replays: ReplayCpu[][] = stacks.map(() => []);
    const codeRuns: number[][] = stacks.map(() => []);
    for (let i = 0; i < REPLAYS; i++) {
        for (const [at, stack] of stacks.entries()) {
            const cpu = await replayRefresh(stack.dir, checkpoints[at] as string);
            if (cpu !== undefined) replays[at]?.push(cpu);
            codeRuns[at]?.push(await providerCodeCpu(stack.dir, checkpoints[at] as string));
        }
    }
    const medianOf = (values: number[]) => (values.length > 0 ? median(values) : undefined);
    const rangeOf = (values: number[]) =>
        values.length > 0 ? ([Math.min(...values), Math.max(...values)] as const) : undefined;
    const runs: CliBenchRun[] = [];
    for (const [at, stack] of stacks.entries()) {
        const stateBytes = (await stat(checkpoints[at] as string)).size;
        await stack.pulumi(["destroy", "--yes", "--skip-preview", "--non-interactive"]);
        const replayed = replays[at] ?? [];
        runs.push({
            upSeconds: ups[at] as number,
            refreshSeconds: median(refreshes[at] ?? []),
            replayCpuSeconds: medianOf(replayed.map((cpu) => cpu.first)),
            replayCpuRange: rangeOf(replayed.map((cpu) => cpu.first)),
            warmReplayCpuSeconds: medianOf(replayed.flatMap((cpu) => cpu.warm)),
            codeCpuSeconds: median(codeRuns[at] ?? []),
            stateBytes,
        });
    }
    return runs;
}

/** Runs both programs with N resources; throws when the CLI is not there (`npm run cli` builds it). */
export async function benchCli(n: number): Promise<{ hostEntry: CliBenchRun; noop: CliBenchRun; cli: string }> {
    const cli = pulumiCli();
    if (typeof cli === "string") throw new Error(cli);
    const temp = await makeTempDir("pulumi-lifecycle-cli-bench-");
    try {
        const packed = await run("npm", ["pack", "--pack-destination", temp.dir, "--json"], { cwd: REPO_ROOT });
        const tarball = join(temp.dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]?.filename ?? "");
        const stacks: BenchStack[] = [];
        for (const [name, program] of [
            ["hosts", HOSTS_PROGRAM(n)],
            ["noop", NOOP_PROGRAM(n)],
        ] as const) {
            const backend = join(temp.dir, `backend-${name}`);
            await mkdir(backend);
            const dir = await project(temp.dir, name, program, tarball);
            stacks.push(benchStack(dir, cliEnv(cli, { backend }), backend));
        }
        const results = await measure(stacks);
        const version = (await run(cli.pulumi, ["version"])).stdout.trim();
        return { hostEntry: results[0] as CliBenchRun, noop: results[1] as CliBenchRun, cli: version };
    } finally {
        await temp.cleanup();
    }
}
