// Where the real Pulumi CLI is, and the environment it runs in for tests: a `pulumi` on PATH wins, else
// the binaries that test/tools/pulumi-cli/build.sh built into the per-user cache. The real-CLI suites
// skip with the reason when neither exists, except in CI (CI=true) with Go present, where a missing CLI
// fails the suite: there the CLI must have been built.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { makeProcessTempDir, REPO_ROOT } from "./projects";
import { skipBecause } from "./system";

const BUILD_SCRIPT = join(REPO_ROOT, "test", "tools", "pulumi-cli", "build.sh");

/** The CLI a real-CLI suite runs: its bin directory (pulumi, the language host, plugins) and where it came from. */
export interface PulumiCli {
    readonly binDir: string;
    readonly pulumi: string;
    readonly source: "PATH" | "built";
    /**
     * The PULUMI_HOME of this process's runs of a built CLI (see `processHome`); undefined for a CLI on
     * PATH, which uses its user's own home and plugins.
     */
    readonly home: string | undefined;
}

function onPath(): string | undefined {
    const found = spawnSync("sh", ["-c", "command -v pulumi"], { encoding: "utf8" });
    return found.status === 0 ? found.stdout.trim() || undefined : undefined;
}

function locate(): PulumiCli | string {
    const fromPath = onPath();
    if (fromPath) return { binDir: dirname(fromPath), pulumi: fromPath, source: "PATH", home: undefined };
    const where = spawnSync("bash", [BUILD_SCRIPT, "--where"], { encoding: "utf8" });
    const binDir = where.stdout.trim();
    // A missing plugin (random) fails only the programs that need it, saying so; the CLI and the language
    // host are what every suite needs.
    if (existsSync(join(binDir, "pulumi")) && existsSync(join(binDir, "pulumi-language-nodejs"))) {
        return {
            binDir,
            pulumi: join(binDir, "pulumi"),
            source: "built",
            home: processHome(join(binDir, "..", "home")),
        };
    }
    return `the Pulumi CLI is neither on PATH nor built (${where.stderr.trim() || "not built"}): run \`npm run cli\``;
}

/**
 * A PULUMI_HOME for this process's CLI runs, removed when it exits: the plugins built beside the CLI
 * (`built`'s, linked), and logs and workspaces of its own. The CLI (3.259) writes a log file into
 * PULUMI_HOME/logs at every start, and lists and stats that whole directory at every start to rotate it
 * (7 days, 500 MB): the shared home had gathered 10,418 of them, which cost each start 80 ms of CPU
 * (`pulumi version`: 0.27 CPU-s against 0.19 with an empty one), about 500 starts per `npm test`.
 */
function processHome(built: string): string {
    const home = makeProcessTempDir("pulumi-lifecycle-cli-home-");
    // Without the plugins (random was not built), the programs that need one fail saying so, as before.
    if (existsSync(join(built, "plugins"))) symlinkSync(join(built, "plugins"), join(home, "plugins"), "junction");
    mkdirSync(join(home, "logs"));
    return home;
}

let located: PulumiCli | string | undefined;

/** The CLI, or the reason it is missing (computed once per test run). */
export function pulumiCli(): PulumiCli | string {
    located ??= locate();
    return located;
}

function hasGo(): boolean {
    return spawnSync("go", ["version"], { stdio: "ignore" }).status === 0;
}

/**
 * The CLI for a real-CLI suite's `before` hook. Skips the suite with the reason when the CLI is missing,
 * but fails it in CI where Go is present: CI builds the CLI first, so a missing one is a broken build.
 */
export function requirePulumiCli(context: Mocha.Context): PulumiCli {
    const cli = pulumiCli();
    if (typeof cli !== "string") return cli;
    if (process.env.CI === "true" && hasGo()) {
        throw new Error(`CI must run the real-CLI suites, but ${cli}`);
    }
    skipBecause(context, cli);
}

/**
 * The environment for running the CLI offline against a local file backend: the CLI's PULUMI_HOME (the
 * one holding its plugins), no update checks, no plugin downloads (a missing plugin fails at once), and
 * the CLI's bin directory first on PATH so the engine finds the language host beside it.
 *
 * And no NODE_EXTRA_CA_CERTS: Node.js parses that bundle as every process starts, whether or not it
 * ever opens a TLS connection (0.08 CPU-s a process here, where the machine's environment names the
 * system bundle of 144 certificates; 0.02 without it). Each operation starts four Node.js processes
 * (the program, its provider, and the two `node -e require.resolve(...)` the language host and the
 * provider's launcher run), and every one of them talks to the engine and to local servers only; an
 * npm run under the CLI (`pulumi install`) takes its `cafile` from npm's own configuration.
 */
export function cliEnv(cli: PulumiCli, options: { backend: string }): Record<string, string> {
    const home = cli.home ?? process.env.PULUMI_HOME;
    return {
        NODE_EXTRA_CA_CERTS: "",
        PATH: `${cli.binDir}${delimiter}${process.env.PATH ?? ""}`,
        ...(home ? { PULUMI_HOME: home } : {}),
        PULUMI_BACKEND_URL: `file://${options.backend}`,
        PULUMI_CONFIG_PASSPHRASE: "test passphrase",
        PULUMI_SKIP_UPDATE_CHECK: "true",
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
        PULUMI_SKIP_CONFIRMATIONS: "true",
        PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
    };
}

/** `pulumi version` of the CLI, for suite titles and notes. */
export function cliVersion(cli: PulumiCli): string {
    return execFileSync(cli.pulumi, ["version"], { encoding: "utf8" }).trim();
}
