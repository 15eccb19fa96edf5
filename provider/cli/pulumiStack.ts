// The Pulumi CLI's stack state, read and written the supported way: `pulumi stack export` and
// `pulumi stack import`, run in the project directory with the user's environment (backend, passphrase,
// PULUMI_HOME), so secrets stay encrypted as the stack's secrets provider wrote them.
//
// The deployment goes to `pulumi stack import` on its standard input, which it reads when no --file is
// given (pkg/cmd/pulumi/stack/stack_import.go at v3.259.0: `reader := cmd.InOrStdin()`): no copy of the
// state is ever written to disk, so none can be left behind by a killed helper.

import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { lstat, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Deployment } from "../hosts/logic/importState";
import { codeOf } from "../shared/files/errno";
import { CliError } from "./cliError";

/** What `pulumi stack export` prints. */
export interface ExportedStack {
    version: number;
    deployment: Deployment;
    [field: string]: unknown;
}

/** Where the CLI runs: the project directory and the user's environment. */
export interface PulumiPlace {
    readonly cwd: string;
    readonly env: NodeJS.ProcessEnv;
}

/** Exports `stack` of the project in `cwd`. */
export async function exportStack(stack: string, place: PulumiPlace): Promise<ExportedStack> {
    const stdout = await pulumi(["stack", "export", "--stack", stack], place);
    let exported: ExportedStack;
    try {
        exported = JSON.parse(stdout) as ExportedStack;
    } catch {
        throw new CliError(`\`pulumi stack export --stack ${stack}\` printed no JSON; is it a Pulumi CLI?`, 1);
    }
    if (typeof exported?.version !== "number" || typeof exported.deployment !== "object" || !exported.deployment) {
        throw new CliError(`\`pulumi stack export --stack ${stack}\` printed no deployment; is it a Pulumi CLI?`, 1);
    }
    return exported;
}

/**
 * The URL of the backend the CLI uses in `cwd`, as the user configured it: `pulumi whoami --json`, or
 * the `Backend URL:` line of `pulumi whoami --verbose` for a CLI without --json.
 */
export async function backendUrl(place: PulumiPlace): Promise<string> {
    let url: unknown;
    try {
        url = (JSON.parse(await pulumi(["whoami", "--json"], place)) as { url?: unknown }).url;
    } catch (error) {
        if (error instanceof CliError && /no `pulumi` is on PATH/.test(error.message)) throw error;
        url = /^Backend URL:\s*(\S+)\s*$/m.exec(await pulumi(["whoami", "--verbose"], place))?.[1];
    }
    if (typeof url !== "string" || url === "") {
        throw new CliError("`pulumi whoami` named no backend URL; is it a Pulumi CLI?", 1);
    }
    return url;
}

/**
 * A `pulumi stack import` started ahead of time: it loads the stack and then waits for the deployment on
 * its standard input, so that the import follows the last check of the state as closely as it can.
 */
export interface PendingImport {
    /** Sends the deployment and resolves when the CLI has imported it; rejects with the CLI's error. */
    commit(exported: ExportedStack): Promise<void>;
    /** Ends the import without a deployment: the CLI fails reading its input and writes nothing. */
    abandon(): Promise<void>;
}

/** Starts `pulumi stack import --stack STACK`, which waits for the deployment on its standard input. */
export function startImport(stack: string, place: PulumiPlace): PendingImport {
    const args = ["stack", "import", "--stack", stack];
    const child = spawn("pulumi", args, { cwd: place.cwd, env: place.env, stdio: "pipe" });
    const output = collect(child);
    const exited = once(child, "close").then(
        ([code]) => ({ code: code as number | null, error: undefined }),
        (error: unknown) => ({ code: null, error }),
    );
    // A CLI that exits before reading its input makes the write fail with EPIPE: the exit says why.
    child.stdin.on("error", () => undefined);
    const spawnFailed = once(child, "error").then(([error]) => error as Error);
    let settled = false;
    return {
        async commit(exported) {
            settled = true;
            child.stdin.end(JSON.stringify(exported));
            const outcome = await Promise.race([exited, spawnFailed.then((error) => ({ code: null, error }))]);
            if (outcome.code === 0) return;
            throw failure(args, outcome.error, output());
        },
        async abandon() {
            if (settled) return;
            settled = true;
            child.stdin.end();
            await Promise.race([exited, spawnFailed]);
        },
    };
}

/** Copies older than this are no longer in use by the version that wrote them. */
const LEFTOVER_AGE_MS = 10 * 60_000;

/**
 * Removes the copies of a stack's state that versions of this helper before it piped the deployment
 * left in $TMPDIR when killed during an import (`pulumi-lifecycle-import-*` directories holding a
 * `deployment.json`, the whole state): this user's, and older than any import that could still be
 * reading one. Answers the directories removed.
 */
export async function sweepLeftoverCopies(now: number = Date.now()): Promise<string[]> {
    const removed: string[] = [];
    const directory = tmpdir();
    const names = await readdir(directory).catch(() => [] as string[]);
    for (const name of names.filter((entry) => entry.startsWith("pulumi-lifecycle-import-"))) {
        const path = join(directory, name);
        const info = await lstat(path).catch(() => undefined);
        if (!info?.isDirectory() || info.uid !== process.getuid?.() || now - info.mtimeMs < LEFTOVER_AGE_MS) continue;
        const inside = await readdir(path).catch(() => undefined);
        if (!inside || inside.some((entry) => entry !== "deployment.json")) continue;
        await rm(path, { recursive: true, force: true });
        removed.push(path);
    }
    return removed;
}

/** The project's name, from Pulumi.yaml in `cwd`. */
export async function projectName(cwd: string): Promise<string> {
    for (const name of ["Pulumi.yaml", "Pulumi.yml"]) {
        const text = await readFile(join(cwd, name), "utf8").catch(() => undefined);
        if (text === undefined) continue;
        const value = /^name:[ \t]*(.+?)[ \t]*$/m.exec(text)?.[1]?.replace(/^(["'])(.*)\1$/, "$2");
        if (value) return value;
        throw new CliError(`${join(cwd, name)} has no \`name:\`; is it a Pulumi project?`, 1);
    }
    throw new CliError("--stack needs the Pulumi project: run the command in its directory (no Pulumi.yaml here).", 1);
}

function pulumi(args: string[], place: PulumiPlace): Promise<string> {
    return new Promise((resolve, reject) => {
        execFile(
            "pulumi",
            args,
            { cwd: place.cwd, env: place.env, maxBuffer: 512 * 1024 * 1024 },
            (error, stdout, stderr) => {
                if (!error) return resolve(stdout);
                reject(failure(args, error, stderr));
            },
        );
    });
}

/** What the CLI printed on stderr (and stdout, which `stack import` uses for its progress). */
function collect(child: ChildProcessWithoutNullStreams): () => string {
    let text = "";
    for (const stream of [child.stdout, child.stderr]) {
        stream.setEncoding("utf8").on("data", (chunk: string) => {
            if (text.length < 64 * 1024) text += chunk;
        });
    }
    return () => text;
}

function failure(args: readonly string[], error: unknown, output: string): CliError {
    const missing = codeOf(error) === "ENOENT";
    return new CliError(
        missing
            ? "--stack runs the Pulumi CLI, and no `pulumi` is on PATH. Install it, or import without --stack."
            : `\`pulumi ${args.join(" ")}\` failed: ${output.trim() || (error as Error | undefined)?.message || "it exited with an error"}`,
        1,
    );
}
