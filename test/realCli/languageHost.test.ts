// Our stand-in Node.js language host (test/tools/pulumi-cli/language-nodejs) launches programs as the
// official pulumi-language-nodejs of the pinned CLI does (pulumi/pulumi v3.259.0,
// sdk/nodejs/cmd/pulumi-language-nodejs/main.go: execRuntime, constructArguments, parseOptions), so
// what the real-CLI suites see is what users get. Proved through the real CLI: the node arguments
// (`nodeargs` split as a shell would, quotes included), the working directory, the environment and the
// arguments @pulumi/pulumi's cmd/run receives, a Ctrl-C reaching the program as SIGINT, and the official
// host's messages when the program fails: its exit code, death by a signal, running out of memory, a bad
// runtime option; and `pulumi install` (InstallDependencies).

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { CliProject, type CliRun } from "../support/cliProject";
import { until } from "../support/processes";
import { makeTempDir, REPO_ROOT, type TempDir } from "../support/projects";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { writeNodeProject } from "./nodeProject";

const NAME = "lang-host";

function pulumiYaml(options: Record<string, string | boolean>): string {
    // YAML accepts JSON: an empty options map stays a map.
    return `name: ${NAME}\nruntime:\n  name: nodejs\n  options: ${JSON.stringify(options)}\nmain: src/\n`;
}

/** What the CLI printed and the engine reported, for matching a failure's message. */
function said(run: CliRun): string {
    return [run.stdout, run.stderr, ...run.errors].join("\n");
}

const REPORT = `import * as v8 from "v8";
import * as pulumi from "@pulumi/pulumi";
const env = process.env;
export const cwd: string = process.cwd();
export const execArgv: string[] = process.execArgv;
export const heapLimitMiB: number = Math.round(v8.getHeapStatistics().heap_size_limit / 2 ** 20);
export const preloaded: boolean = (globalThis as { preloaded?: boolean }).preloaded === true;
export const typescript = env.PULUMI_NODEJS_TYPESCRIPT ?? "unset";
export const tsconfig = env.PULUMI_NODEJS_TSCONFIG_PATH ?? "unset";
export const configKeys: string[] = Object.keys(JSON.parse(env.PULUMI_CONFIG ?? "{}")).sort();
export const secretKeys: string[] = JSON.parse(env.PULUMI_CONFIG_SECRET_KEYS ?? "[]");
export const runEnv = {
    project: env.PULUMI_NODEJS_PROJECT,
    stack: env.PULUMI_NODEJS_STACK,
    organization: env.PULUMI_NODEJS_ORGANIZATION,
    rootDirectory: env.PULUMI_NODEJS_ROOT_DIRECTORY,
    parallel: env.PULUMI_NODEJS_PARALLEL,
    monitor: typeof env.PULUMI_NODEJS_MONITOR,
    engine: typeof env.PULUMI_NODEJS_ENGINE,
};
export const greeting = new pulumi.Config().require("greeting");
`;

describe("our Node.js language host launches programs as the official one does (real CLI)", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let temp: TempDir;
    let dir: string;
    let project: CliProject;

    before(async function () {
        cli = requirePulumiCli(this);
        temp = await makeTempDir("pulumi-lifecycle-langhost-");
        dir = join(temp.dir, "project");
        await writeNodeProject(dir, {
            "Pulumi.yaml": pulumiYaml({}),
            "package.json": JSON.stringify({ name: NAME, private: true }),
            "src/tsconfig.pulumi.json": JSON.stringify({ compilerOptions: { strict: true, target: "es2020" } }),
            "src/pre load.js": "globalThis.preloaded = true;\n",
        });
        project = await CliProject.open(cli, dir, { config: { greeting: "hi" }, secrets: { token: "s3cret" } });
    });
    after(async () => {
        await project?.cleanup();
        await temp?.cleanup();
    });

    /** Writes Pulumi.yaml with these runtime options and src/index.<language>, the other one removed. */
    async function writeProgram(
        options: Record<string, string | boolean>,
        program: string,
        language: "ts" | "js" = "ts",
    ): Promise<void> {
        await writeFile(join(dir, "Pulumi.yaml"), pulumiYaml(options));
        await rm(join(dir, "src", `index.${language === "ts" ? "js" : "ts"}`), { force: true });
        await writeFile(join(dir, "src", `index.${language}`), program);
    }

    async function upWith(
        options: Record<string, string | boolean>,
        program: string,
        language: "ts" | "js" = "ts",
    ): Promise<CliRun> {
        await writeProgram(options, program, language);
        return project.up();
    }

    it("passes nodeargs split as a shell would, starts node in the program directory, sets cmd/run's env", async () => {
        const run = await upWith(
            { tsconfig: "tsconfig.pulumi.json", nodeargs: `--max-old-space-size=200 --require "./pre load.js"` },
            REPORT,
        );
        assert.ok(run.ok, said(run));
        const out = await project.outputs();
        assert.deepEqual(out.execArgv, ["--max-old-space-size=200", "--require", "./pre load.js"]);
        assert.equal(out.preloaded, true, "the quoted --require path, relative to node's starting directory, loaded");
        assert.ok((out.heapLimitMiB as number) < 400, `heap limit ${out.heapLimitMiB} MiB follows nodeargs`);
        assert.equal(out.cwd, join(dir, "src"), "the program runs in the directory `main` names");
        assert.equal(out.typescript, "true", "typescript defaults to true");
        assert.equal(out.tsconfig, "tsconfig.pulumi.json", "the tsconfig option, as given");
        assert.deepEqual(out.configKeys, [`${NAME}:config:greeting`, `${NAME}:config:token`]);
        assert.deepEqual(out.secretKeys, [`${NAME}:token`]);
        assert.equal(out.greeting, "hi");
        const { parallel, ...runEnv } = out.runEnv as Record<string, string>;
        assert.deepEqual(runEnv, {
            project: NAME,
            stack: project.stack.name,
            organization: "organization",
            rootDirectory: dir,
            monitor: "string",
            engine: "string",
        });
        assert.match(parallel ?? "", /^[1-9]\d*$/, "--parallel");
    });

    it("the update's metadata names node, npm and TypeScript as the official host's probes do, every time", async () => {
        // The host remembers the versions of executables and resolves TypeScript itself (probes.go); what
        // the engine records must still be what the official host's processes would have answered.
        await symlink(join(REPO_ROOT, "node_modules", "typescript"), join(dir, "node_modules", "typescript"));
        const inProject = (file: string, args: string[], cwd = dir) =>
            promisify(execFile)(file, args, { cwd, env: { ...process.env, ...project.env } }).then(({ stdout }) =>
                stdout.trim(),
            );
        const expected = {
            "runtime.version": await inProject("node", ["--version"]),
            "runtime.metadata.packagemanager": "npm",
            "runtime.metadata.packagemanagerVersion": await inProject("npm", ["--version"]),
            "runtime.metadata.typescriptVersion": await inProject(
                "node",
                ["-e", "console.log(require('typescript/package.json').version)"],
                join(dir, "src"),
            ),
        };
        for (const attempt of ["first", "second"]) {
            await writeProgram({}, "export const n = 1;\n");
            const up = await project.up();
            assert.ok(up.ok, said(up));
            const [latest] = await project.stack.history(1);
            const environment = latest?.environment ?? {};
            const reported = Object.fromEntries(Object.keys(expected).map((key) => [key, environment[key]]));
            assert.deepEqual(reported, expected, `the ${attempt} update's metadata`);
        }
    });

    it("a non-zero exit code: `Program exited with non-zero exit code: 3`", async () => {
        const run = await upWith({}, "process.exit(3);\n");
        assert.equal(run.ok, false);
        assert.match(said(run), /Program exited with non-zero exit code: 3\b/);
    });

    it("death by a signal is reported as the official host does (exit code -1)", async () => {
        const run = await upWith({}, `process.kill(process.pid, "SIGKILL");\n`);
        assert.equal(run.ok, false);
        assert.match(said(run), /Program exited with non-zero exit code: -1\b/);
    });

    it("running out of memory adds the official hint about nodeargs --max-old-space-size", async () => {
        // 400 MB at most: far over the limit, and bounded should the limit not apply.
        const program = "const kept = [];\nfor (let i = 0; i < 500; i++) kept.push(new Array(1e5).fill(1.5));\n";
        const run = await upWith({ typescript: false, nodeargs: "--max-old-space-size=32" }, program, "js");
        assert.equal(run.ok, false);
        assert.match(said(run), /Detected a possible out of memory error\. .*`nodeargs: --max-old-space-size=<size>`/);
    });

    it("Ctrl-C (SIGINT to the CLI alone, as `kill -INT` sends it) reaches the program as SIGINT", async () => {
        const marker = join(temp.dir, "signals");
        await writeProgram(
            {},
            `import * as fs from "fs";
const marker = process.env.SIGNAL_MARKER as string;
process.on("SIGINT", () => {
    fs.appendFileSync(marker, "SIGINT\\n");
    process.exit(0);
});
fs.writeFileSync(marker, "ready\\n");
export const never = new Promise<void>(() => setInterval(() => undefined, 1000));
`,
        );
        const run = project.spawn(["up", "--yes", "--skip-preview", "--non-interactive", "-s", project.stack.name], {
            SIGNAL_MARKER: marker,
        });
        await until(() => existsSync(marker), run);
        process.kill(run.child.pid as number, "SIGINT");
        const { code, output } = await run.done;
        assert.notEqual(code, 0, output);
        assert.match(output, /update canceled/);
        assert.equal(await readFile(marker, "utf8"), "ready\nSIGINT\n", "the program heard SIGINT and ended");
    });

    it("`pulumi install` installs the program's dependencies with its package manager", async () => {
        const installed = join(temp.dir, "install");
        await mkdir(join(installed, "tiny"), { recursive: true });
        await writeFile(join(installed, "Pulumi.yaml"), "name: install-test\nruntime: nodejs\n");
        await writeFile(join(installed, "tiny", "package.json"), JSON.stringify({ name: "tiny", version: "1.0.0" }));
        const dependencies = { tiny: "file:./tiny" }; // a local package: npm needs no registry
        await writeFile(join(installed, "package.json"), JSON.stringify({ name: "install-test", dependencies }));
        const { stdout } = await promisify(execFile)(cli.pulumi, ["install"], {
            cwd: installed,
            env: { ...process.env, ...project.env },
        });
        assert.match(stdout, /Installing dependencies\.\.\.[\s\S]*Finished installing dependencies/);
        assert.equal(
            JSON.parse(await readFile(join(installed, "node_modules", "tiny", "package.json"), "utf8")).name,
            "tiny",
        );
    });

    it("rejects an unknown packagemanager with the official message", async () => {
        const run = await upWith({ packagemanager: "pnpmx" }, "export const ok = true;\n");
        assert.equal(run.ok, false);
        assert.match(said(run), /packagemanager option must be one of auto, npm, yarn, pnpm or bun, got "pnpmx"/);
    });
});
