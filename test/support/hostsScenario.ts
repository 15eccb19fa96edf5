// A hosts-file scenario for the harness: a temporary project with the package installed, a hosts file in
// it, a state file, and programs declaring HostEntry resources by name, as a user's program would.

import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { hosts } from "pulumi-lifecycle";
import type { ProviderCall } from "../harness/engine";
import { type ConfigValue, Harness, type RunResult } from "../harness/harness";
import { makeProject, type TempDir } from "./projects";

/** A HostEntry as a scenario declares it: the resource name plus its arguments (file defaults to the scenario's). */
export interface EntrySpec {
    readonly name: string;
    readonly address: string;
    readonly names: string[];
    readonly comment?: string;
    readonly file?: string;
    readonly adopt?: boolean;
}

/** A scenario: the project, its hosts file and a harness running programs against them. */
export interface HostsScenario {
    readonly project: TempDir;
    readonly file: string;
    readonly harness: Harness;
    /** `pulumi up` with a program declaring `entries`. */
    up(entries: readonly EntrySpec[], options?: { deleteBeforeReplace?: string[] }): Promise<RunResult>;
    /** `pulumi up --refresh` with a program declaring `entries`. */
    upWithRefresh(entries: readonly EntrySpec[]): Promise<RunResult>;
    preview(entries: readonly EntrySpec[]): Promise<RunResult>;
    refresh(): Promise<RunResult>;
    destroy(): Promise<RunResult>;
    text(): Promise<string>;
    write(text: string): Promise<void>;
    /**
     * A copy of the scenario as it is now: the hosts file, its create journal and the state (every file of
     * the project but its node_modules). `restore` puts it back, so that a suite sets a scenario up once with
     * real runs and starts each test from there.
     */
    snapshot(): Promise<ScenarioSnapshot>;
    restore(snapshot: ScenarioSnapshot): Promise<void>;
    cleanup(): Promise<void>;
}

/** A scenario's files at one moment (see `HostsScenario.snapshot`). */
export interface ScenarioSnapshot {
    readonly at: string;
}

/** Creates a scenario whose hosts file starts with `initial`. */
export async function hostsScenario(initial: string, config: Record<string, ConfigValue> = {}): Promise<HostsScenario> {
    const project = await makeProject("hosts-scenario");
    const file = join(project.dir, "hosts");
    await writeFile(file, initial);
    const harness = new Harness({ projectDir: project.dir, stateFile: join(project.dir, "state.json"), config });
    const snapshots: string[] = [];
    /** The project's own files: everything but the installed packages. */
    const stateFiles = async () => (await readdir(project.dir)).filter((name) => name !== "node_modules");
    const program = (entries: readonly EntrySpec[]) => () => {
        for (const { name, ...args } of entries) new hosts.HostEntry(name, { file, ...args });
    };
    return {
        project,
        file,
        harness,
        up: (entries, options) => harness.up({ program: program(entries), options: options ?? {} }),
        upWithRefresh: (entries) => harness.up({ program: program(entries), refresh: true }),
        preview: (entries) => harness.preview({ program: program(entries) }),
        refresh: () => harness.refresh(),
        destroy: () => harness.destroy(),
        text: () => readFile(file, "utf8"),
        write: (text) => writeFile(file, text),
        snapshot: async () => {
            const at = await mkdtemp(join(project.dir, "..", `${basename(project.dir)}-snapshot-`));
            snapshots.push(at);
            for (const name of await stateFiles())
                await cp(join(project.dir, name), join(at, name), { recursive: true });
            return { at };
        },
        restore: async ({ at }) => {
            for (const name of await stateFiles()) await rm(join(project.dir, name), { recursive: true, force: true });
            for (const name of await readdir(at))
                await cp(join(at, name), join(project.dir, name), { recursive: true });
        },
        cleanup: async () => {
            for (const at of snapshots) await rm(at, { recursive: true, force: true });
            await project.cleanup();
        },
    };
}

/** Calls as compact `Method name` strings, for asserting the order of provider calls. */
export function callsOf(result: RunResult): string[] {
    return result.calls.map(
        (call: ProviderCall) => `${call.method} ${call.name}${call.outcome === "ok" ? "" : ` (${call.outcome})`}`,
    );
}

/** The state's resources as `name id line`, for asserting what the stack holds. */
export function stateOf(result: RunResult): string[] {
    return result.state.resources.map(
        (r) => `${r.name} ${r.id} line ${String(r.outputs.line)}${r.delete ? " (pending delete)" : ""}`,
    );
}
