// Runs a real Pulumi TypeScript program without the CLI: in-process under pulumi.runtime.setMocks, with
// every dynamic resource forwarded to the real dynamic-provider server process (started as the engine
// starts it: working directory = the project, PULUMI_NODEJS_PROJECT set) through the step rules of
// engine.ts. State lives in a JSON file between runs, so a scenario is a sequence of runs like a stack's.
//
// The program is mocked through its own project's @pulumi/pulumi (resolved from the project directory),
// so a project with its own node_modules (a fresh install of the packed package) runs as it would under
// the CLI. Differs from the engine: the program runs in this process (the engine runs it in a language
// host), so runs cannot overlap; and a provider process serves consecutive runs with the same settings
// (the engine starts one per operation; see `parked` below). See engine.ts for the step-level differences.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import * as yaml from "js-yaml";
import { ProviderServer } from "../support/providerServer";
import { Deployment, destroy, type ProviderCall, type ResourceOptionsByName, refresh, type Step } from "./engine";
import { formatPlan } from "./plan";
import { loadState, type StackState, saveState } from "./state";

/** A stack config value; secrets reach the program as secrets and the provider as plain values. */
export type ConfigValue = string | { secret: string };

/** How to run a project. */
export interface HarnessOptions {
    /** The Pulumi project: holds Pulumi.yaml; the provider server runs here. */
    readonly projectDir: string;
    /** Where the stack's state is kept between runs. */
    readonly stateFile: string;
    readonly stack?: string;
    /** An inline program instead of the project's main module. */
    readonly program?: () => unknown;
    /** Stack config, keys namespaced (`pulumi-lifecycle:hostsFile`, `<project>:key`). */
    readonly config?: Record<string, ConfigValue>;
    /** Extra environment for the provider process. */
    readonly env?: NodeJS.ProcessEnv;
    readonly options?: ResourceOptionsByName;
    /** Called with the provider process once it runs, e.g. to kill it mid-operation as a crash would. */
    readonly onProvider?: (provider: ProviderServer) => void;
    /** The engine's address given to the provider process (a test's Log service), if any. */
    readonly engineAddress?: string;
    /** Runs the provider process exactly as a user's (ProviderServer's `asInstalled`): for an installed package. */
    readonly asInstalled?: boolean;
}

/** What a run did. */
export interface RunResult {
    readonly ok: boolean;
    readonly errors: Error[];
    /** Every provider call, in order. */
    readonly calls: ProviderCall[];
    readonly steps: Step[];
    readonly state: StackState;
    /** Stack outputs (the program's exports), resolved. */
    readonly outputs: Record<string, unknown>;
    /** The plan or summary, printed like Pulumi's. */
    readonly plan: string;
}

type Operation = "up" | "up --refresh" | "preview" | "refresh" | "destroy";

/** What a run may change for itself and the runs after it. */
export type RunChanges = Partial<Pick<HarnessOptions, "program" | "config" | "options" | "env" | "onProvider">>;

/** Runs one Pulumi project as a stack, operation after operation. */
export class Harness {
    private readonly stack: string;
    private readonly project: string;
    /** The options with the latest program and config changes applied. */
    private current: HarnessOptions;

    constructor(private readonly options: HarnessOptions) {
        this.stack = options.stack ?? "dev";
        this.project = projectSettings(options.projectDir).name;
        this.current = options;
    }

    /**
     * `pulumi up`; with `refresh: true`, `pulumi up --refresh` (refresh steps first, in the same
     * deployment, which is what Terraform's apply does by default); with `continueOnError: true`,
     * `pulumi up --continue-on-error`. `changes` replaces the program, config or options for this and
     * later runs.
     */
    up(changes?: RunChanges & { refresh?: boolean; continueOnError?: boolean }): Promise<RunResult> {
        const { refresh: refreshFirst, continueOnError, ...rest } = changes ?? {};
        return this.run(refreshFirst ? "up --refresh" : "up", rest, continueOnError);
    }

    /** `pulumi preview`: Check and Diff only; nothing is written. */
    preview(changes?: RunChanges): Promise<RunResult> {
        return this.run("preview", changes);
    }

    /** `pulumi refresh`. */
    refresh(): Promise<RunResult> {
        return this.run("refresh");
    }

    /** `pulumi destroy`. */
    destroy(): Promise<RunResult> {
        return this.run("destroy");
    }

    /** The state as last saved. */
    state(): Promise<StackState> {
        return loadState(this.options.stateFile);
    }

    private async run(
        operation: Operation,
        changes?: Partial<HarnessOptions>,
        continueOnError = false,
    ): Promise<RunResult> {
        if (changes) this.current = { ...this.current, ...changes };
        const old = await loadState(this.options.stateFile);
        const calls: ProviderCall[] = [];
        const steps: Step[] = [];
        const settings = projectSettings(this.options.projectDir);
        // Precedence as in the CLI: project defaults, then the stack's config file, then this run's.
        const config: Record<string, ConfigValue> = {
            ...settings.config,
            ...stackConfig(this.options.projectDir, this.project, this.stack),
            ...this.current.config,
        };
        // A run handed its process (to kill it, or signal it) neither takes a parked one nor leaves its own.
        const handedOut = this.current.onProvider !== undefined;
        const key = JSON.stringify([
            this.options.projectDir,
            this.project,
            this.current.env ?? {},
            this.options.engineAddress ?? "",
            this.options.asInstalled ?? false,
            plainConfig(config),
        ]);
        // After a run whose process was handed out (and perhaps killed), the engine's next one is new too.
        let provider = takeParked(handedOut ? "" : key);
        if (!provider) {
            provider = await ProviderServer.start({
                projectDir: this.options.projectDir,
                projectName: this.project,
                ...(this.current.env ? { env: this.current.env } : {}),
                ...(this.options.engineAddress ? { engineAddress: this.options.engineAddress } : {}),
                ...(this.options.asInstalled ? { asInstalled: true } : {}),
            });
            this.current.onProvider?.(provider);
            // The engine configures the provider with the whole stack config, namespaces kept, secrets plain.
            await provider.configure(plainConfig(config));
        }
        let parks = !handedOut;
        try {
            const context = { stack: this.stack, project: this.project, provider, calls, steps };
            let state: StackState = old;
            let errors: Error[] = [];
            let outputs: Record<string, unknown> = {};
            if (operation === "refresh" || operation === "up --refresh") {
                ({ state, errors } = await refresh(old, context));
            } else if (operation === "destroy") {
                ({ state, errors } = await destroy(old, context));
            }
            // A failed refresh stops `up --refresh` before the program runs, as the engine does.
            if (
                (operation === "up" || operation === "up --refresh" || operation === "preview") &&
                errors.length === 0
            ) {
                const preview = operation === "preview";
                const deployment = new Deployment(state, {
                    ...context,
                    preview,
                    continueOnError,
                    options: this.current.options ?? {},
                });
                const program = await this.runProgram(deployment, config, preview);
                state = await deployment.finish();
                errors = [...program.errors, ...deployment.errors];
                outputs = program.outputs;
            }
            if (operation !== "preview") await saveState(this.options.stateFile, state);
            const ok = errors.length === 0;
            const plan = formatPlan(operation === "up --refresh" ? "up" : operation, this.stack, steps, errors);
            return { ok, errors, calls, steps, state, outputs, plan };
        } catch (error) {
            parks = false;
            throw error;
        } finally {
            if (parks && provider.running) await park(key, provider);
            else await provider.stop();
        }
    }

    private async runProgram(
        deployment: Deployment,
        config: Record<string, ConfigValue>,
        preview: boolean,
    ): Promise<{ errors: Error[]; outputs: Record<string, unknown> }> {
        const sdk = projectSdk(this.options.projectDir);
        sdk.pulumi.runtime.setAllConfig(
            plainConfig(config),
            Object.keys(config).filter((key) => typeof config[key] !== "string"),
        );
        await sdk.pulumi.runtime.setMocks(
            {
                newResource: (args) =>
                    deployment.register({
                        type: args.type,
                        name: args.name,
                        inputs: args.inputs,
                        custom: args.custom ?? true,
                        id: args.id || undefined,
                    }),
                call: (args) => {
                    throw new Error(`the harness does not implement invoke ${args.token}`);
                },
            },
            this.project,
            this.stack,
            preview,
        );
        const errors: Error[] = [];
        let exported: unknown;
        try {
            exported = this.current.program ? await this.current.program() : await this.loadMain();
            if (typeof exported === "function") exported = await exported();
        } catch (error) {
            errors.push(error as Error);
        }
        await sdk.waitForRPCs();
        const outputs: Record<string, unknown> = {};
        for (const [key, value] of Object.entries((exported as Record<string, unknown> | undefined) ?? {})) {
            try {
                // As the stack exports them: nested outputs in arrays and objects are resolved too.
                outputs[key] = await resolveOutput(sdk.pulumi.output(value));
            } catch {
                // An output of a failed resource: the run already carries that error.
            }
        }
        return { errors, outputs };
    }

    /** Requires the project's main module afresh, as a new language-host process would. */
    private loadMain(): unknown {
        const main = require.resolve(
            resolve(this.options.projectDir, projectSettings(this.options.projectDir).main ?? "."),
        );
        // Forget the program's own modules (its folder, not its dependencies) so they run again.
        const programDir = dirname(main);
        for (const key of Object.keys(require.cache)) {
            if (key.startsWith(programDir) && !key.includes("node_modules")) delete require.cache[key];
        }
        return require(main);
    }
}

/**
 * The provider process the last run left running, for the next run that would start an identical one
 * (the same project, environment, engine and config). The engine starts one per operation; here a
 * process serves consecutive runs, as one serves every resource of an operation, because starting one
 * (loading the SDK, 0.8 CPU-s) was most of what the harness cost. What a process keeps in memory
 * between operations is the real CLI's suites' to judge (they start one per operation). At most one
 * waits, in each test process: stopped after each test file (stopParked), or killed when the process exits.
 */
let parked: { readonly key: string; readonly provider: ProviderServer } | undefined;

process.on("exit", () => {
    if (parked?.provider.running) parked.provider.kill("SIGKILL");
});

/**
 * Stops the parked process, if any. Mocha ends its parallel workers without running their exit
 * handlers, so its root-hook plugin (test/tools/mocha/parkedProviders.js) calls this after each file.
 */
async function stopParked(): Promise<void> {
    const waiting = parked;
    parked = undefined;
    await waiting?.provider.stop();
}
(globalThis as Record<symbol, unknown>)[Symbol.for("pulumi-lifecycle.test.stopParkedProvider")] = stopParked;

/** The parked process started as `key` describes, woken; undefined (and any other parked one stopped) otherwise. */
function takeParked(key: string): ProviderServer | undefined {
    const waiting = parked;
    parked = undefined;
    if (waiting?.key === key && waiting.provider.running) {
        waiting.provider.wake();
        return waiting.provider;
    }
    if (waiting) void waiting.provider.stop();
    return undefined;
}

async function park(key: string, provider: ProviderServer): Promise<void> {
    const previous = parked;
    provider.park();
    parked = { key, provider };
    if (previous) await previous.provider.stop();
}

/** What the harness needs from a project's Pulumi.yaml. */
export interface ProjectSettings {
    readonly name: string;
    /** The program entry, relative to the project (Pulumi.yaml `main`), if set. */
    readonly main: string | undefined;
    /** Project-level config defaults, keys namespaced (`<project>:key` for bare keys). */
    readonly config: Record<string, string>;
}

/** Reads Pulumi.yaml: name, main, and project-level config (v3.44+), as the CLI does. */
export function projectSettings(projectDir: string): ProjectSettings {
    const file = join(projectDir, "Pulumi.yaml");
    const project = yaml.load(readFileSync(file, "utf8")) as { name?: string; main?: string; config?: unknown };
    if (!project?.name) throw new Error(`${file} has no name`);
    return { name: project.name, main: project.main, config: configValues(project.config, project.name, file) };
}

/** Stack config from Pulumi.<stack>.yaml when the project has one (secure values cannot be decrypted here). */
function stackConfig(projectDir: string, project: string, stack: string): Record<string, string> {
    const file = join(projectDir, `Pulumi.${stack}.yaml`);
    if (!existsSync(file)) return {};
    return configValues(
        (yaml.load(readFileSync(file, "utf8")) as { config?: unknown } | undefined)?.config,
        project,
        file,
    );
}

/** Config entries as namespaced strings; a `{ value }` or `{ default }` object holds the value. */
function configValues(config: unknown, project: string, file: string): Record<string, string> {
    const values: Record<string, string> = {};
    for (const [key, raw] of Object.entries((config as Record<string, unknown> | undefined) ?? {})) {
        const value =
            typeof raw === "object" && raw !== null
                ? ((raw as { value?: unknown; default?: unknown }).value ?? (raw as { default?: unknown }).default)
                : raw;
        if (typeof raw === "object" && raw !== null && "secure" in raw) {
            throw new Error(`${file}: ${key} is encrypted; pass secrets to the harness in HarnessOptions.config`);
        }
        if (value === undefined) continue;
        values[key.includes(":") ? key : `${project}:${key}`] =
            typeof value === "string" ? value : JSON.stringify(value);
    }
    return values;
}

/**
 * The @pulumi/pulumi a project's program loads: its own install when it has one, else this repository's.
 * `waitForRPCs` resolves once every registration the program started has been answered (SDK-internal,
 * not in the .d.ts).
 */
function projectSdk(projectDir: string): { pulumi: typeof pulumi; waitForRPCs(): Promise<void> } {
    const entry = require.resolve("@pulumi/pulumi", { paths: [projectDir, __dirname] });
    const settings = require(join(entry, "..", "runtime", "settings")) as { waitForRPCs(): Promise<void> };
    return { pulumi: require(entry) as typeof pulumi, waitForRPCs: () => settings.waitForRPCs() };
}

function plainConfig(config: Record<string, ConfigValue>): Record<string, string> {
    return Object.fromEntries(Object.entries(config).map(([k, v]) => [k, typeof v === "string" ? v : v.secret]));
}

async function resolveOutput(output: pulumi.Output<unknown>): Promise<unknown> {
    // Output.promise() is the SDK's own way to read an output's value (internal, stable for years).
    return await (output as unknown as { promise(): Promise<unknown> }).promise();
}
