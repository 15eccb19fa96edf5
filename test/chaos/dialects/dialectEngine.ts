// What the Pulumi engine records, emulated for the dialect chaos suite with tasks.AsyncResource's
// provider (the rules of test/chaos/engine.ts, which emulates them for the Datastore; see
// /work/shared/REFERENCE.md, "The dynamic-provider server", "Partial state" and "Engine behaviour"):
//
//   create ok -> state = outs; an error with an id (PartialStateError) -> state = its properties with
//   init errors, so the next up calls Update even when Diff says no change; any other error -> nothing.
//   update ok -> outs; an error with an id -> its properties (init errors again); others -> old state.
//   delete ok -> removed; error -> kept.  read: no id -> removed; ok -> its properties; error -> kept.
//   A killed provider process answers nothing: its creates stay pending creates in the checkpoint
//   (listed until `pulumi refresh --import-pending-creates` or `--clear-pending-creates`), its updates
//   and deletes leave the state as it was.
//
// An up checks and diffs each resource, creates, updates or replaces it (create first, the old one then
// pending deletion; or, when the diff asks, delete first), then deletes what the program no longer has
// and what was replaced. Resources left pending deletion by an earlier up are deleted at the start of the
// next (the engine's pending deletes). One after another, the first failure or interruption stops the
// command; in parallel, every step starts before any fails.

import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import type { AsyncResourceProvider } from "../../../provider/tasks/asyncResourceProvider";
import type { AsyncResourceInputs, AsyncResourceOutputs } from "../../../provider/tasks/asyncResourceSchema";
import { partialOf } from "../engine";

/** What the SDK puts into every resource's inputs and state. */
export const PROVIDER_TEXT =
    'exports.handler = () => require("pulumi-lifecycle/runtime").providerFor("tasks:AsyncResource");';

export type Props = Record<string, unknown>;

/** One resource as the engine has it. */
export interface Entry {
    readonly urn: string;
    /** The Pulumi id: the natural key. */
    readonly id: string;
    readonly inputs: Props;
    readonly outputs: Props;
    readonly initErrors: readonly string[];
}

/** A create the engine started and never heard back from (its provider process was killed). */
export interface PendingCreate {
    readonly urn: string;
    readonly name: string;
    readonly inputs: Props;
}

/** A resource as an up declares it: its URN, natural key and raw inputs. */
export interface Declared {
    readonly urn: string;
    readonly name: string;
    readonly args: Props;
}

export type OpKind = "create" | "update" | "delete" | "read";

export interface Operation {
    readonly kind: OpKind;
    readonly urn: string;
    /** The natural key it is about. */
    readonly name: string;
    /** Its timeouts, as the inputs (create, update) or the state (delete, read) have them. */
    readonly timeouts: unknown;
    /** Whether the resource has a createToken (in the inputs, or the state). */
    readonly tokened: boolean;
}

export type Outcome<T> =
    | { readonly ok: true; readonly value: T }
    | { readonly ok: false; readonly error: unknown }
    | { readonly ok: false; readonly killed: true };

/** Runs operations (with their hazards) and tells the engine whether the command must stop. */
export interface Runner {
    run<T>(operation: Operation, work: () => Promise<T>): Promise<Outcome<T>>;
    /** Interrupted (Ctrl-C) or killed: no step starts any more. */
    stopped(): boolean;
    /** An answer the SDK could not have sent to the engine. */
    unencodable(operation: Operation, what: string, error: unknown): void;
}

export interface CommandResult {
    readonly ok: boolean;
    readonly failures: readonly string[];
}

type Provider = AsyncResourceProvider;

/** The engine's checkpoint of one stack, and the commands that change it. */
export class DialectEngine {
    readonly state = new Map<string, Entry>();
    /** Replaced resources pending deletion (the engine's `delete: true`). */
    condemned: Entry[] = [];
    pendingCreates: PendingCreate[] = [];
    private runner: Runner | undefined;
    private failures: string[] = [];

    /** Every resource the checkpoint holds, pending deletions included. */
    entries(): Entry[] {
        return [...this.state.values(), ...this.condemned];
    }

    /** `pulumi up` of `program` with a fresh provider process. */
    async up(program: readonly Declared[], provider: Provider, runner: Runner, parallel: boolean) {
        this.begin(runner);
        await this.deleteCondemned(provider, parallel);
        const replaced: Entry[] = [];
        if (!this.stopped()) await this.each(program, parallel, (resource) => this.steps(resource, provider, replaced));
        if (!this.stopped()) {
            const wanted = new Set(program.map((resource) => resource.urn));
            const removed = [...this.state.values()].reverse().filter((entry) => !wanted.has(entry.urn));
            await this.each(removed, parallel, async (entry) => {
                if (await this.delete(entry, provider)) this.state.delete(entry.urn);
            });
        }
        this.condemned.push(...replaced);
        if (!this.stopped()) await this.deleteCondemned(provider, parallel);
        return this.end();
    }

    /** `pulumi refresh`; with `importPending`, `--import-pending-creates` for each pending create, by its natural key. */
    async refresh(provider: Provider, runner: Runner, parallel: boolean, importPending = false) {
        this.begin(runner);
        const refreshOne = async (entry: Entry, condemned: boolean) => {
            const read: Operation = {
                kind: "read",
                urn: entry.urn,
                name: entry.id,
                timeouts: entry.outputs.timeouts,
                tokened: entry.outputs.createToken !== undefined,
            };
            const outcome = await this.run(read, () =>
                provider.read(entry.id, entry.outputs as unknown as AsyncResourceOutputs),
            );
            if (!outcome.ok) return;
            const id = outcome.value.id;
            let next: Entry | undefined;
            if (id) {
                const outputs = this.encode(read, "read properties", {
                    ...(outcome.value.props ?? {}),
                    __provider: PROVIDER_TEXT,
                });
                if (!outputs) return;
                next = { ...entry, id, outputs, initErrors: [] };
            }
            if (condemned) {
                this.condemned = this.condemned.flatMap((other) => (other === entry ? (next ? [next] : []) : [other]));
            } else if (next) this.state.set(entry.urn, next);
            else this.state.delete(entry.urn);
        };
        await this.each([...this.state.values()], parallel, (entry) => refreshOne(entry, false));
        await this.each([...this.condemned], parallel, (entry) => refreshOne(entry, true));
        if (importPending) await this.importPendingCreates(provider);
        return this.end();
    }

    /**
     * `--import-pending-creates URN ID` for each pending create, as a careful user runs it: the engine
     * reads the id (the natural key) with the create's inputs. Found, it joins the state (waiting for
     * deletion when its URN already has a resource, as a replacement's create does); already in the
     * state under its natural key, there is nothing to import; not found, it stays listed. Resolves
     * how many it imported.
     */
    private async importPendingCreates(provider: Provider): Promise<number> {
        let imported = 0;
        const pending = this.pendingCreates;
        this.pendingCreates = [];
        for (const create of pending) {
            if (this.entries().some((entry) => entry.id === create.name)) continue;
            // The user imports only what may be theirs: never a name they know to be someone else's.
            if (!this.importable(create.name)) {
                this.pendingCreates.push(create);
                continue;
            }
            const read: Operation = {
                kind: "read",
                urn: create.urn,
                name: create.name,
                timeouts: undefined,
                tokened: create.inputs.createToken !== undefined,
            };
            const outcome = await this.run(read, () =>
                provider.read(create.name, create.inputs as unknown as AsyncResourceOutputs),
            );
            const outputs =
                outcome.ok && outcome.value.id
                    ? this.encode(read, "read properties", {
                          ...(outcome.value.props ?? {}),
                          __provider: PROVIDER_TEXT,
                      })
                    : undefined;
            if (!outcome.ok || !outcome.value.id || !outputs) {
                this.pendingCreates.push(create);
                continue;
            }
            const entry: Entry = {
                urn: create.urn,
                id: outcome.value.id,
                inputs: create.inputs,
                outputs,
                initErrors: [],
            };
            if (this.state.has(create.urn)) this.condemned.push(entry);
            else this.state.set(create.urn, entry);
            imported++;
        }
        this.imported = imported;
        return imported;
    }

    /** How many pending creates the last `--import-pending-creates` imported. */
    imported = 0;

    /** Whether the user would import a pending create of this natural key (not someone else's). */
    importable: (name: string) => boolean = () => true;

    /** `pulumi refresh --clear-pending-creates`: the ones never found are forgotten. */
    clearPendingCreates(): PendingCreate[] {
        const cleared = this.pendingCreates;
        this.pendingCreates = [];
        return cleared;
    }

    /** `pulumi destroy`. */
    async destroy(provider: Provider, runner: Runner, parallel: boolean) {
        this.begin(runner);
        await this.deleteCondemned(provider, parallel);
        if (!this.stopped()) {
            await this.each([...this.state.values()].reverse(), parallel, async (entry) => {
                if (await this.delete(entry, provider)) this.state.delete(entry.urn);
            });
        }
        return this.end();
    }

    /** The steps of one resource of an up. */
    private async steps(resource: Declared, provider: Provider, replaced: Entry[]): Promise<void> {
        const old = this.state.get(resource.urn);
        const raw = { ...resource.args, __provider: PROVIDER_TEXT };
        const checked = await provider.check(
            (old?.inputs ?? {}) as unknown as AsyncResourceInputs,
            raw as unknown as AsyncResourceInputs,
        );
        if (checked.failures && checked.failures.length > 0) {
            this.failures.push(`check ${resource.name}: ${checked.failures.map((f) => f.reason).join("; ")}`);
            return;
        }
        // The inputs reach the provider through protobuf, as the engine stores them (undefined dropped).
        const news = this.encode(
            { kind: "create", urn: resource.urn, name: resource.name, timeouts: undefined, tokened: false },
            "checked inputs",
            { ...(checked.inputs as unknown as Props), __provider: PROVIDER_TEXT },
        );
        if (!news) return;
        const operation = (kind: OpKind): Operation => ({
            kind,
            urn: resource.urn,
            name: resource.name,
            timeouts: news.timeouts,
            tokened: news.createToken !== undefined,
        });
        if (!old) {
            await this.create(operation("create"), resource.name, news, provider);
            return;
        }
        const diff = await provider.diff(
            old.id,
            old.outputs as unknown as AsyncResourceOutputs,
            news as unknown as AsyncResourceInputs,
        );
        if (diff.replaces && diff.replaces.length > 0) {
            if (diff.deleteBeforeReplace) {
                if (!(await this.delete(old, provider))) return;
                this.state.delete(old.urn);
                if (this.stopped()) return;
                await this.create(operation("create"), resource.name, news, provider);
                return;
            }
            // Create first; the old one is deleted once the new one is recorded (later in this up, or the next).
            if (await this.create(operation("create"), resource.name, news, provider)) replaced.push(old);
            return;
        }
        if (diff.changes || old.initErrors.length > 0) await this.update(operation("update"), old, news, provider);
    }

    /** Runs a create; resolves whether the engine recorded a resource. */
    private async create(operation: Operation, name: string, news: Props, provider: Provider): Promise<boolean> {
        const pending: PendingCreate = { urn: operation.urn, name, inputs: news };
        this.pendingCreates.push(pending);
        const outcome = await this.run(operation, () => provider.create(news as unknown as AsyncResourceInputs));
        if (!outcome.ok && "killed" in outcome) return false;
        const recorded = outcome.ok
            ? {
                  id: outcome.value.id,
                  props: { ...outcome.value.outs, __provider: PROVIDER_TEXT },
                  reasons: [] as string[],
                  what: "create outputs",
              }
            : recordedPartial(outcome.error);
        this.pendingCreates = this.pendingCreates.filter((other) => other !== pending);
        if (!recorded) return false;
        // The state now has this natural key: earlier pending creates of it are resolved by it.
        this.pendingCreates = this.pendingCreates.filter((other) => other.urn !== operation.urn || other.name !== name);
        const outputs = this.encode(operation, recorded.what, recorded.props);
        if (!outputs) return false;
        this.state.set(operation.urn, {
            urn: operation.urn,
            id: recorded.id,
            inputs: news,
            outputs,
            initErrors: recorded.reasons,
        });
        return true;
    }

    private async update(operation: Operation, old: Entry, news: Props, provider: Provider): Promise<void> {
        const outcome = await this.run(operation, () =>
            provider.update(
                old.id,
                old.outputs as unknown as AsyncResourceOutputs,
                news as unknown as AsyncResourceInputs,
            ),
        );
        if (!outcome.ok && "killed" in outcome) return;
        const recorded = outcome.ok
            ? {
                  props: { ...(outcome.value.outs ?? {}), __provider: PROVIDER_TEXT },
                  reasons: [] as string[],
                  what: "update outputs",
              }
            : recordedPartial(outcome.error);
        // Any other failure keeps the old state.
        const outputs = recorded && this.encode(operation, recorded.what, recorded.props);
        if (recorded && outputs)
            this.state.set(old.urn, { ...old, inputs: news, outputs, initErrors: recorded.reasons });
    }

    /** Deletes `entry` at the provider; resolves whether it succeeded (the caller forgets it). */
    private async delete(entry: Entry, provider: Provider): Promise<boolean> {
        const operation: Operation = {
            kind: "delete",
            urn: entry.urn,
            name: entry.id,
            timeouts: entry.outputs.timeouts,
            tokened: entry.outputs.createToken !== undefined,
        };
        const outcome = await this.run(operation, () =>
            provider.delete(entry.id, entry.outputs as unknown as AsyncResourceOutputs),
        );
        return outcome.ok;
    }

    private async deleteCondemned(provider: Provider, parallel: boolean): Promise<void> {
        await this.each([...this.condemned], parallel, async (entry) => {
            if (await this.delete(entry, provider)) this.condemned = this.condemned.filter((other) => other !== entry);
        });
    }

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

    private begin(runner: Runner): void {
        this.runner = runner;
        this.failures = [];
    }

    private end(): CommandResult {
        const stopped = this.runner?.stopped() ?? false;
        return { ok: this.failures.length === 0 && !stopped, failures: this.failures };
    }

    private stopped(): boolean {
        return this.failures.length > 0 || (this.runner?.stopped() ?? false);
    }

    private async run<T>(operation: Operation, work: () => Promise<T>): Promise<Outcome<T>> {
        const outcome = await (this.runner as Runner).run(operation, work);
        if (!outcome.ok) this.failures.push(`${operation.kind} ${operation.name}: ${describeOutcome(outcome)}`);
        return outcome;
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

export function describeOutcome(outcome: Outcome<unknown>): string {
    if (outcome.ok) return "ok";
    if ("killed" in outcome) return "killed with its provider process";
    const error = outcome.error;
    const partial = partialOf(error) ? "partial state: " : "";
    return `${partial}${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`.slice(0, 500);
}
