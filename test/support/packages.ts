// This package as npm packs it: the checkout as it is now, and the checkout at a commit of its history
// (for upgrade tests: "a stack made with the package as it was"). A commit is built from `git archive`
// in a temporary directory, never touching the work tree, and its tarball is cached outside the
// repository, keyed by the commit, so only the first run builds it.

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, symlink } from "node:fs/promises";
import { homedir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { makeTempDir, REPO_ROOT } from "./projects";
import { registryEnv } from "./registry";

const run = promisify(execFile);

/** Where packed tarballs of past commits are kept: the per-user cache the Pulumi CLI build uses too. */
export const PACKAGE_CACHE = join(
    process.env.PULUMI_LIFECYCLE_CACHE ??
        join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "pulumi-lifecycle"),
    "packages",
);

/** The full hash of `ref` in this repository, or undefined when the clone does not have it (a shallow clone). */
export async function commitOf(ref: string): Promise<string | undefined> {
    try {
        const { stdout } = await run("git", ["-C", REPO_ROOT, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
        return stdout.trim() || undefined;
    } catch {
        return undefined;
    }
}

/** `npm pack` of the package in `dir` (its prepack/prepare script builds it) into `destination`; the tarball's path. */
export async function packDirectory(dir: string, destination: string): Promise<string> {
    const { stdout } = await run("npm", ["pack", "--pack-destination", destination, "--json", "--loglevel=error"], {
        cwd: dir,
        maxBuffer: 64 * 1024 * 1024,
    }).catch((error: Error & { stdout?: string }) => {
        // The build's own errors (tsc's) are on stdout.
        throw new Error(`npm pack in ${dir} failed: ${error.message}\n${error.stdout ?? ""}`);
    });
    const filename = (JSON.parse(stdout) as { filename: string }[])[0]?.filename;
    if (!filename) throw new Error(`npm pack in ${dir} named no tarball: ${stdout.slice(0, 500)}`);
    return join(destination, filename);
}

/** Packs this checkout (built by its prepack script) into `destination`. */
export function packCurrent(destination: string): Promise<string> {
    return packDirectory(REPO_ROOT, destination);
}

async function exists(path: string): Promise<boolean> {
    return stat(path).then(
        () => true,
        () => false,
    );
}

/**
 * The tarball of the package at `commit` (a full hash): from the cache, or built now from `git archive`
 * with this checkout's node_modules linked in for the compiler (`npm ci` of the commit's own lock file
 * when that build fails) and cached.
 */
export async function packCommit(commit: string): Promise<string> {
    const cached = join(PACKAGE_CACHE, `pulumi-lifecycle-${commit}.tgz`);
    if (await exists(cached)) return cached;
    await mkdir(PACKAGE_CACHE, { recursive: true });
    const temp = await makeTempDir("pulumi-lifecycle-at-commit-");
    try {
        const source = join(temp.dir, "source");
        await mkdir(source);
        await run("bash", [
            "-o",
            "pipefail",
            "-c",
            'git -C "$1" archive --format=tar "$2" | tar -x -C "$3"',
            "bash",
            REPO_ROOT,
            commit,
            source,
        ]);
        await symlink(join(REPO_ROOT, "node_modules"), join(source, "node_modules"), "junction");
        let packed: string;
        try {
            packed = await packDirectory(source, temp.dir);
        } catch (linked) {
            // The commit's dependencies differ from today's: install its own, once.
            await rm(join(source, "node_modules"));
            await run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
                cwd: source,
                env: registryEnv(),
                maxBuffer: 64 * 1024 * 1024,
            }).catch((error: Error) => {
                throw new Error(
                    `cannot build pulumi-lifecycle at ${commit}: with today's node_modules (${(linked as Error).message}), nor after npm ci (${error.message})`,
                );
            });
            packed = await packDirectory(source, temp.dir);
        }
        // A rename is atomic: a concurrent run sees the whole tarball or none.
        await rename(packed, cached);
        return cached;
    } finally {
        await temp.cleanup();
    }
}

/** The package.json a tarball holds, as bytes (text). */
export async function packedManifest(tarball: string): Promise<string> {
    const { stdout } = await run("tar", ["-xzOf", tarball, "package/package.json"], { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
}

/** A digest of every file under `dir` (paths and bytes), following no links. */
export async function treeDigest(dir: string): Promise<string> {
    const hash = createHash("sha256");
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    const files = entries
        .filter((entry) => entry.isFile())
        .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
        .sort();
    for (const file of files)
        hash.update(`${file}\0`)
            .update(await readFile(join(dir, file)))
            .update("\0");
    return hash.digest("hex");
}

/** The digest (as `treeDigest`) of what a tarball unpacks to, for "this install is that tarball". */
export async function tarballDigest(tarball: string): Promise<string> {
    const temp = await makeTempDir("pulumi-lifecycle-unpacked-");
    try {
        await run("tar", ["-xzf", tarball, "-C", temp.dir]);
        return await treeDigest(join(temp.dir, "package"));
    } finally {
        await temp.cleanup();
    }
}
