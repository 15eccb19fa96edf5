// The package as a stranger installs it: packed once per test run (`npm pack`, which builds through
// prepack), and installed by name from that tarball into fresh projects, one per package manager and
// @pulumi/pulumi version, each made once and shared by every suite and case that asks for it. All of
// it lives in one temporary directory, removed when the test run ends.

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { makeProcessTempDir, REPO_ROOT } from "../../support/projects";
import { registryEnv } from "../../support/registry";

const run = promisify(execFile);

let root: string | undefined;

/** The run's directory for tarball and projects, removed when the process exits. */
function runDir(): string {
    root ??= makeProcessTempDir("pulumi-lifecycle-compat-");
    return root;
}

/** A path in the run's directory (for what a suite makes besides projects: the CLI's links). */
export function runPath(name: string): string {
    return join(runDir(), name);
}

let packed: Promise<string> | undefined;

/** The path of this package packed by `npm pack` (once per test run). */
export function packedTarball(): Promise<string> {
    packed ??= (async () => {
        const out = join(runDir(), "pack");
        await mkdir(out, { recursive: true });
        const { stdout } = await run("npm", ["pack", "--pack-destination", out, "--json", "--loglevel=error"], {
            cwd: REPO_ROOT,
        });
        const [entry] = JSON.parse(stdout) as { filename: string }[];
        if (!entry) throw new Error(`npm pack printed no file: ${stdout}`);
        return join(out, entry.filename);
    })();
    return packed;
}

/** What this repository's package.json says. */
export function manifest(): {
    version: string;
    engines: Record<string, string>;
    peerDependencies: Record<string, string>;
    devDependencies: Record<string, string>;
} {
    return JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
}

/** The @pulumi/pulumi this repository develops against (its devDependency). */
export function devPulumiVersion(): string {
    return manifest().devDependencies["@pulumi/pulumi"] as string;
}

/** The oldest @pulumi/pulumi the declared peer range admits: the version in `^x.y.z` or `>=x.y.z`. */
export function oldestPulumiVersion(): string {
    const range = manifest().peerDependencies["@pulumi/pulumi"] ?? "";
    const floor = /^(?:\^|>=\s*)(\d+\.\d+\.\d+)$/.exec(range.trim())?.[1];
    if (!floor) throw new Error(`the peer range of @pulumi/pulumi (${range}) has no single floor version`);
    return floor;
}

let newest: Promise<string> | undefined;

/** The newest @pulumi/pulumi on the registry (`npm view`), or COMPAT_PULUMI_NEWEST when set. */
export function newestPulumiVersion(): Promise<string> {
    newest ??= process.env.COMPAT_PULUMI_NEWEST
        ? Promise.resolve(process.env.COMPAT_PULUMI_NEWEST)
        : run("npm", ["view", "@pulumi/pulumi", "version", "--loglevel=error"], { env: registryEnv() }).then(
              ({ stdout }) => stdout.trim(),
          );
    return newest;
}

export type PackageManager = "npm" | "pnpm" | "yarn";

/**
 * `npm install`'s arguments for the tests' fresh projects. With `ignoreScripts`, the dependencies'
 * install scripts do not run, as the README offers: they are ssh2's optional native modules
 * (cpu-features compiles C++, about 7 CPU-s) and protobufjs's version check, and none is needed, as
 * pnpm's default refusal of them shows. One project of the run (the Node.js matrix's) installs with
 * npm's default, running them, as most users do.
 */
export function npmInstallArgs({ ignoreScripts }: { ignoreScripts: boolean }): string[] {
    const args = ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];
    return ignoreScripts ? [...args, "--ignore-scripts"] : args;
}

/** A fresh project with the packed package installed. */
export interface InstalledProject {
    readonly dir: string;
    readonly manager: PackageManager;
    readonly pulumiVersion: string;
    /** How long its install (and the pack, for the first project of a run) took. */
    readonly installSeconds: number;
}

/**
 * What a user's TypeScript project has besides the two packages: the compiler and ts-node, which the
 * SDK runs a TypeScript program with (both optional peers of @pulumi/pulumi), and Node's types. The
 * versions this repository uses.
 */
const TYPESCRIPT = { typescript: "5.9.3", "ts-node": "10.9.2", "@types/node": "^20.19.0" };

/** Pulumi's TypeScript template's tsconfig.json (`pulumi new typescript`). */
const TSCONFIG = {
    compilerOptions: {
        strict: true,
        outDir: "bin",
        target: "es2020",
        module: "commonjs",
        moduleResolution: "node",
        sourceMap: true,
        experimentalDecorators: true,
        pretty: true,
        noFallthroughCasesInSwitch: true,
        noImplicitReturns: true,
        forceConsistentCasingInFileNames: true,
    },
    files: ["index.ts"],
};

const projects = new Map<string, Promise<InstalledProject>>();

/** How to make a project: `entry` is pnpm's or yarn's JavaScript entry, run with `node` (a user's Node.js). */
export interface ProjectSpec {
    readonly manager: PackageManager;
    readonly pulumiVersion: string;
    /** Files written into the project before the install (name: text). */
    readonly files: Record<string, string>;
    readonly entry?: string;
    readonly node?: string;
    /** npm and yarn: install with `--ignore-scripts` (see `npmInstallArgs`; pnpm refuses them unless allowed). */
    readonly ignoreScripts?: boolean;
}

/**
 * The project `spec` describes, made on first use: package.json naming the tarball, @pulumi/pulumi and
 * the TypeScript tools; its files; then the manager's install. Made once per manager and SDK version.
 */
export function installedProject(spec: ProjectSpec): Promise<InstalledProject> {
    const key = `${spec.manager}@${spec.pulumiVersion}${spec.ignoreScripts ? " --ignore-scripts" : ""}`;
    let made = projects.get(key);
    if (!made) {
        made = install(spec);
        projects.set(key, made);
    }
    return made;
}

async function install(spec: ProjectSpec): Promise<InstalledProject> {
    const { manager, pulumiVersion } = spec;
    const started = Date.now();
    const tarball = await packedTarball();
    const dir = join(runDir(), `${manager}-pulumi-${pulumiVersion}${spec.ignoreScripts ? "-no-scripts" : ""}`);
    await mkdir(dir, { recursive: true });
    const dependencies = { "pulumi-lifecycle": `file:${tarball}`, "@pulumi/pulumi": pulumiVersion };
    const pkg = { name: "compat-app", private: true, dependencies, devDependencies: TYPESCRIPT };
    await writeFile(join(dir, "package.json"), JSON.stringify(pkg, null, 4));
    await writeFile(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 4));
    for (const [name, text] of Object.entries(spec.files)) await writeFile(join(dir, name), text);
    const options = { cwd: dir, maxBuffer: 16 * 1024 * 1024, env: registryEnv() };
    const args = {
        npm: npmInstallArgs({ ignoreScripts: spec.ignoreScripts === true }),
        pnpm: ["install", "--prefer-offline", "--reporter=silent"],
        yarn: [
            "install",
            "--prefer-offline",
            "--non-interactive",
            "--no-progress",
            "--silent",
            ...(spec.ignoreScripts ? ["--ignore-scripts"] : []),
        ],
    }[manager];
    try {
        if (manager === "npm") await run("npm", args, options);
        else if (!spec.entry) throw new Error(`no ${manager} to install with`);
        else await run(spec.node ?? process.execPath, [spec.entry, ...args], options);
    } catch (error) {
        const e = error as { stdout?: string; stderr?: string; message?: string };
        throw new Error(`${manager} install in ${dir} failed: ${e.stderr || e.stdout || e.message}`);
    }
    return { dir, manager, pulumiVersion, installSeconds: (Date.now() - started) / 1000 };
}
