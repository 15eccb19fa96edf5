// What the Pulumi engine records, emulated for the chaos suite (see /work/shared/REFERENCE.md, "The
// dynamic-provider server" and "Partial state"; the refresh rules are pkg/resource/deploy/step.go's
// RefreshStep): answers pass through protobuf Structs as the SDK's server sends them, and
//
//   create ok -> state = outs; an error with an id -> state = its properties, with init errors, so the
//   next up sends Update; any other error -> nothing recorded.
//   update ok -> outs; an error with an id -> its properties (init errors again); other errors -> the
//   old state stays.
//   delete ok -> removed; error -> kept.
//   read with no id -> removed; ok -> its properties, init errors cleared; error -> kept.
//
// An up checks and diffs each resource of the program, then deletes what the program no longer has; a
// replacement that keeps the natural key deletes first. One after another, the first failure or
// interruption ends the command, as `pulumi up` without --continue-on-error stops starting steps; in
// parallel (independent resources, as the engine runs them), every step has started before any fails.

import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import type { DatastoreProvider } from "../../provider/tasks/datastoreProvider";
import type { DatastoreInputs, DatastoreOutputs, NaturalKey } from "../../provider/tasks/datastoreSchema";
import type { ResourceSpec } from "./program";

/** What the SDK puts into every resource's inputs and state. */
export const PROVIDER_TEXT =
    'exports.handler = () => require("pulumi-lifecycle/runtime").providerFor("tasks:Datastore");';

type Props = Record<string, unknown>;

/** One resource as the engine has it. */
export interface StateEntry {
    readonly urn: string;
    readonly id: string;
    readonly key: NaturalKey;
    readonly inputs: Props;
    readonly outputs: Props;
    /** Set when the last create or update ended in partial state: the next up updates it. */
    readonly initErrors: readonly string[];
}

export type OpKind = "create" | "update" | "delete" | "read";

/** One provider operation, for the runner that drives it. */
export interface Operation {
    readonly kind: OpKind;
    readonly urn: string;
    readonly key: NaturalKey;
    /** The `timeouts` the operation runs under (the new inputs', or the state's for delete and read). */
    readonly timeouts: DatastoreInputs["timeouts"];
}

/** How an operation ended, as the runner saw it. */
export type OpOutcome<T> =
    | { readonly ok: true; readonly value: T }
    | { readonly ok: false; readonly error: unknown }
    | { readonly ok: false; readonly abandoned: string };

/** Runs operations on virtual time, checking each; tells the engine whether the command was interrupted. */
export interface OperationRunner {
    run<T>(operation: Operation, work: () => Promise<T>): Promise<OpOutcome<T>>;
    /** Whether the command was interrupted (its signal aborted). */
    interrupted(): boolean;
    /** An answer the SDK could not have sent the engine. */
    unencodable(operation: Operation, what: string, error: unknown): void;
    /** The engine has recorded what the operation answered. */
    recorded(operation: Operation): void;
}

/** How a command ended. */
export interface CommandResult {
    readonly ok: boolean;
    readonly operations: number;
    readonly failures: readonly string[];
}

/** The engine's state of one stack, and the commands that change it. */
export class Engine {
    readonly state = new Map<string, StateEntry>();
    private runner: OperationRunner | undefined;
    private failures: string[] = [];
    private operations = 0;

    /**
     * `pulumi up` of `program` with `provider` (a fresh provider process). In `parallel`, every resource's
     * steps start at once and every delete after them, as the engine runs independent steps (up to 16
     * at a time); otherwise one after another, stopping at the first failure.
     */
    async up(
        program: readonly ResourceSpec[],
        provider: DatastoreProvider,
        runner: OperationRunner,
        parallel = false,
    ): Promise<CommandResult> {
        this.begin(runner);
        await this.each(program, parallel, (resource) => this.steps(resource, provider));
        if (!this.stopped()) {
            const wanted = new Set(program.map((resource) => resource.urn));
            const removed = [...this.state.values()].reverse().filter((entry) => !wanted.has(entry.urn));
            await this.each(removed, parallel, async (entry) => {
                await this.delete(entry, provider);
            });
        }
        return this.end();
    }

    /** The steps of one resource of an up: check, then create, or diff and update or replace. */
    private async steps(resource: ResourceSpec, provider: DatastoreProvider): Promise<void> {
        const old = this.state.get(resource.urn);
        const raw = { ...programInputs(resource), __provider: PROVIDER_TEXT };
        const checked = await provider.check(
            (old?.inputs ?? {}) as unknown as DatastoreInputs,
            raw as unknown as DatastoreInputs,
        );
        if (checked.failures && checked.failures.length > 0) {
            this.failures.push(`check ${resource.key.name}: ${checked.failures.map((f) => f.reason).join("; ")}`);
            return;
        }
        const news: Props = { ...(checked.inputs as unknown as Props), __provider: PROVIDER_TEXT };
        const operation = (kind: OpKind): Operation => ({
            kind,
            urn: resource.urn,
            key: resource.key,
            timeouts: resource.timeouts,
        });
        if (!old) {
            await this.create(operation("create"), news, provider);
            return;
        }
        const diff = await provider.diff(
            old.id,
            old.outputs as unknown as DatastoreOutputs,
            news as unknown as DatastoreInputs,
        );
        if (diff.replaces && diff.replaces.length > 0) {
            // The natural key stays, so the diff asks to delete first.
            if (!(await this.delete(old, provider)) || this.stopped()) return;
            await this.create(operation("create"), news, provider);
            return;
        }
        if (diff.changes || old.initErrors.length > 0) await this.update(operation("update"), old, news, provider);
    }

    /** Runs `step` for each item: all at once, or one after another until the command stops. */
    private async each<T>(items: readonly T[], parallel: boolean, step: (item: T) => Promise<void>): Promise<void> {
        if (parallel) {
            await Promise.all(items.map(step));
            return;
        }
        for (const item of items) {
            if (this.stopped()) break;
            await step(item);
        }
    }

    /** `pulumi refresh`. */
    async refresh(provider: DatastoreProvider, runner: OperationRunner, parallel = false): Promise<CommandResult> {
        this.begin(runner);
        await this.each([...this.state.values()], parallel, async (entry) => {
            const read: Operation = { kind: "read", urn: entry.urn, key: entry.key, timeouts: timeoutsOf(entry) };
            const outcome = await this.run(read, () =>
                provider.read(entry.id, entry.outputs as unknown as DatastoreOutputs),
            );
            const id = outcome.ok ? outcome.value.id : undefined;
            if (outcome.ok && !id) this.state.delete(entry.urn);
            else if (outcome.ok && id) {
                const outputs = this.encode(read, "read properties", {
                    ...(outcome.value.props ?? {}),
                    __provider: entry.outputs.__provider,
                });
                if (outputs) this.state.set(entry.urn, { ...entry, id, outputs, initErrors: [] });
            }
            this.runner?.recorded(read);
        });
        return this.end();
    }

    /** `pulumi destroy`. */
    async destroy(provider: DatastoreProvider, runner: OperationRunner, parallel = false): Promise<CommandResult> {
        this.begin(runner);
        await this.each([...this.state.values()].reverse(), parallel, async (entry) => {
            await this.delete(entry, provider);
        });
        return this.end();
    }

    private begin(runner: OperationRunner): void {
        this.runner = runner;
        this.failures = [];
        this.operations = 0;
    }

    private end(): CommandResult {
        const interrupted = this.runner?.interrupted() ?? false;
        return { ok: this.failures.length === 0 && !interrupted, operations: this.operations, failures: this.failures };
    }

    private stopped(): boolean {
        return this.failures.length > 0 || (this.runner?.interrupted() ?? false);
    }

    private async run<T>(operation: Operation, work: () => Promise<T>): Promise<OpOutcome<T>> {
        this.operations++;
        const outcome = await (this.runner as OperationRunner).run(operation, work);
        if (!outcome.ok) this.failures.push(`${operation.kind} ${operation.key.name}: ${describe(outcome)}`);
        return outcome;
    }

    private async create(operation: Operation, news: Props, provider: DatastoreProvider): Promise<void> {
        await this.record(operation, news, provider);
        this.runner?.recorded(operation);
    }

    private async record(operation: Operation, news: Props, provider: DatastoreProvider): Promise<void> {
        const outcome = await this.run(operation, () => provider.create(news as unknown as DatastoreInputs));
        const recorded = outcome.ok
            ? {
                  id: outcome.value.id,
                  props: { ...outcome.value.outs, __provider: PROVIDER_TEXT },
                  reasons: [] as string[],
                  what: "create outputs",
              }
            : "error" in outcome
              ? recordedPartial(outcome.error)
              : undefined;
        if (!recorded) return;
        const outputs = this.encode(operation, recorded.what, recorded.props);
        if (!outputs) return;
        this.state.set(operation.urn, {
            urn: operation.urn,
            id: recorded.id,
            key: operation.key,
            inputs: news,
            outputs,
            initErrors: recorded.reasons,
        });
    }

    private async update(
        operation: Operation,
        old: StateEntry,
        news: Props,
        provider: DatastoreProvider,
    ): Promise<void> {
        const outcome = await this.run(operation, () =>
            provider.update(old.id, old.outputs as unknown as DatastoreOutputs, news as unknown as DatastoreInputs),
        );
        const recorded = outcome.ok
            ? {
                  props: { ...(outcome.value.outs ?? {}), __provider: PROVIDER_TEXT },
                  reasons: [] as string[],
                  what: "update outputs",
              }
            : "error" in outcome
              ? recordedPartial(outcome.error)
              : undefined;
        // Any other failure keeps the old state.
        const outputs = recorded && this.encode(operation, recorded.what, recorded.props);
        if (recorded && outputs)
            this.state.set(old.urn, { ...old, inputs: news, outputs, initErrors: recorded.reasons });
        this.runner?.recorded(operation);
    }

    /** Deletes `entry`; resolves whether it is gone from state. */
    private async delete(entry: StateEntry, provider: DatastoreProvider): Promise<boolean> {
        const operation: Operation = { kind: "delete", urn: entry.urn, key: entry.key, timeouts: timeoutsOf(entry) };
        const outcome = await this.run(operation, () =>
            provider.delete(entry.id, entry.outputs as unknown as DatastoreOutputs),
        );
        if (outcome.ok) this.state.delete(entry.urn);
        this.runner?.recorded(operation);
        return outcome.ok;
    }

    /** Props through a protobuf Struct, as the SDK's server sends them; undefined when that cannot be done. */
    private encode(operation: Operation, what: string, props: Props): Props | undefined {
        try {
            return Struct.fromJavaScript(props as Parameters<typeof Struct.fromJavaScript>[0]).toJavaScript() as Props;
        } catch (error) {
            this.runner?.unencodable(operation, what, error);
            return undefined;
        }
    }
}

function recordedPartial(error: unknown): { id: string; props: Props; reasons: string[]; what: string } | undefined {
    const partial = partialOf(error);
    return partial && { id: partial.id, props: partial.properties, reasons: partial.reasons, what: "partial state" };
}

function timeoutsOf(entry: StateEntry): DatastoreInputs["timeouts"] {
    return entry.outputs.timeouts as DatastoreInputs["timeouts"];
}

/** The partial state an error carries, as the SDK's server reads it (`if (e.id)`). */
export function partialOf(error: unknown): { id: string; properties: Props; reasons: string[] } | undefined {
    const candidate = error as { id?: unknown; properties?: unknown; reasons?: unknown } | undefined;
    if (!candidate || typeof candidate !== "object" || !candidate.id) return undefined;
    return {
        id: String(candidate.id),
        properties: (candidate.properties as Props | undefined) ?? {},
        reasons: Array.isArray(candidate.reasons) ? candidate.reasons.map(String) : [],
    };
}

/** The inputs a program gives the resource. */
export function programInputs(resource: ResourceSpec): Props {
    return {
        hciClusterUuid: resource.key.hciClusterUuid,
        clusterId: resource.key.clusterId,
        name: resource.key.name,
        sizeInBytes: resource.sizeInBytes,
        datastoreType: "VMFS",
        adopt: resource.adopt,
        untaint: resource.untaint,
        ...(resource.createToken !== undefined ? { createToken: resource.createToken } : {}),
        ...(resource.timeouts !== undefined ? { timeouts: resource.timeouts } : {}),
    };
}

function describe(outcome: OpOutcome<unknown>): string {
    if (outcome.ok) return "ok";
    if ("abandoned" in outcome) return `abandoned (${outcome.abandoned})`;
    const error = outcome.error;
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
