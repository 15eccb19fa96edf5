// TypeScript programs that the real CLI has already type-checked in this test process. The SDK's
// `cmd/run` type-checks a TypeScript program (through ts-node) on every operation unless
// PULUMI_NODEJS_TRANSPILE_ONLY is "true"; for the same program text against the same installed packages
// that check proves nothing the first one did not, and it cost about 1.3 CPU-s an operation (the real-CLI
// examples: 66 CPU-s with it on every operation, 47 without). So the first operation of each program is
// type-checked, as every user's is, and the later operations of that same program are not: a changed
// program, or the same text against another install, is checked again.

import { createHash } from "node:crypto";
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The programs (by `programKey`) an operation of this process has type-checked and run to the end. */
const checked = new Set<string>();

/** The packages whose types a program is checked against: which install of each it resolves to counts. */
const TYPED_PACKAGES = ["pulumi-lifecycle", "@pulumi/pulumi", "@pulumi/random", "typescript"];

/**
 * What identifies the TypeScript program of the project in `dir` for its type-check: the top-level .ts
 * files of its program's directory (Pulumi.yaml's `main`, else the project's), the tsconfig, Pulumi.yaml
 * and package.json of both, and the installs its typed packages resolve to; undefined when the program
 * has no TypeScript file (a JavaScript program is never type-checked).
 */
export function programKey(dir: string): string | undefined {
    const programDir = mainDirectory(dir);
    const names = readdirSync(programDir).filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"));
    if (names.length === 0) return undefined;
    const hash = createHash("sha256");
    const manifests = ["tsconfig.json", "Pulumi.yaml", "package.json"];
    const files = [...names.sort(), ...manifests].map((name): [string, string] => [name, join(programDir, name)]);
    if (programDir !== dir)
        files.push(...manifests.map((name): [string, string] => [`project:${name}`, join(dir, name)]));
    for (const [name, file] of files) {
        hash.update(`${name}\0`);
        try {
            hash.update(readFileSync(file));
        } catch {
            hash.update("(none)");
        }
    }
    for (const name of TYPED_PACKAGES) hash.update(`${name}\0${installOf(programDir, name)}\0`);
    return hash.digest("hex");
}

/**
 * The directory of the project's program: where Pulumi.yaml's top-level `main` points (the root
 * Pulumi.yaml runs examples/hosts/index.ts), the file's directory when it names a file; else the project.
 */
function mainDirectory(dir: string): string {
    let manifest = "";
    try {
        manifest = readFileSync(join(dir, "Pulumi.yaml"), "utf8");
    } catch {
        return dir;
    }
    const main = /^main:[ \t]*["']?([^"'\r\n#]+?)["']?[ \t]*(?:#.*)?$/m.exec(manifest)?.[1];
    if (main === undefined) return dir;
    const target = resolve(dir, main);
    return /\.[cm]?[jt]s$/.test(target) ? dirname(target) : target;
}

/**
 * Runs one operation on the program of the project in `dir`: `operation` gets the environment to add to
 * the CLI's (PULUMI_NODEJS_TRANSPILE_ONLY once this process has seen the same program type-checked), and
 * an operation that `succeeded` records the program as checked. The program's key is taken before the
 * operation, so an operation that edits the program does not vouch for the edit.
 */
export async function typeCheckedOnce<T>(
    dir: string,
    operation: (env: Record<string, string>) => Promise<T>,
    succeeded: (result: T) => boolean,
): Promise<T> {
    const key = programKey(dir);
    const result = await operation(
        key !== undefined && checked.has(key) ? { PULUMI_NODEJS_TRANSPILE_ONLY: "true" } : {},
    );
    if (key !== undefined && succeeded(result)) checked.add(key);
    return result;
}

/** The real directory of the install of `name` that `dir` resolves to, or "" when there is none. */
function installOf(dir: string, name: string): string {
    try {
        return realpathSync(dirname(require.resolve(`${name}/package.json`, { paths: [dir] })));
    } catch {
        return "";
    }
}
