// Temporary Pulumi projects with this package "installed" the way npm installs a local path: a
// node_modules/pulumi-lifecycle link to the repository. The provider server runs in such a project,
// so `__provider` resolves the package by name exactly as in a user's project.

import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The repository root (the package under test, built into dist/). */
export const REPO_ROOT = resolve(__dirname, "..", "..");

/** A temporary directory removed by `cleanup`. */
export interface TempDir {
    readonly dir: string;
    cleanup(): Promise<void>;
}

/** Creates a temporary directory. */
export async function makeTempDir(prefix = "pulumi-lifecycle-test-"): Promise<TempDir> {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** This process's temporary directories (`makeProcessTempDir`), removed when it exits. */
const processTempDirs: string[] = [];

/**
 * Creates a temporary directory of this process's own, removed when the process exits: by a detached
 * process of its own, which outlives this one. Mocha ends a parallel worker that has not exited within
 * a second of being asked (workerpool's `workerTerminateTimeout`), and removing the compatibility
 * suites' installs (hundreds of megabytes) takes longer: removed in the exit handler, they and every
 * directory after them were left behind, about 0.4 GB each `npm test` (14 GB in two days here).
 */
export function makeProcessTempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    if (processTempDirs.length === 0) process.once("exit", () => removeDetached(processTempDirs));
    processTempDirs.push(dir);
    return dir;
}

/** Starts a process that removes `dirs` and does not wait for it, nor ends with this one. */
function removeDetached(dirs: readonly string[]): void {
    const remove =
        'for (const dir of process.argv.slice(1)) require("node:fs").rmSync(dir, { recursive: true, force: true });';
    spawn(process.execPath, ["-e", remove, ...dirs], { detached: true, stdio: "ignore", env: {} }).unref();
}

/** What `makeProject` writes; everything else in a project is a test's own. */
const PROJECT_FILES = new Set(["Pulumi.yaml", "package.json", "node_modules"]);

/** Creates a temporary Pulumi project that depends on this package. */
export async function makeProject(name = "test-project"): Promise<TempDir> {
    const project = await makeTempDir(`${name}-`);
    await writeFile(join(project.dir, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\n`);
    await writeFile(
        join(project.dir, "package.json"),
        JSON.stringify({ name, private: true, dependencies: { "pulumi-lifecycle": `file:${REPO_ROOT}` } }, null, 4),
    );
    await mkdir(join(project.dir, "node_modules"));
    await symlink(REPO_ROOT, join(project.dir, "node_modules", "pulumi-lifecycle"), "junction");
    return project;
}

/**
 * Removes what tests wrote into a project made by `makeProject` (state files, hosts files), so that a
 * suite's tests share one project, and with it the provider process the harness parks, each from a
 * clean start.
 */
export async function resetProject(project: TempDir): Promise<void> {
    for (const name of await readdir(project.dir)) {
        if (!PROJECT_FILES.has(name)) await rm(join(project.dir, name), { recursive: true, force: true });
    }
}
