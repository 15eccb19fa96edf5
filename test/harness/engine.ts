// The engine's step rules for dynamic resources, imitated closely enough to prove a provider's lifecycle
// without the Pulumi CLI. Each rule names where pulumi/pulumi does the same (pkg/resource/deploy/
// step_generator.go "sg", step.go, step_executor.go). Where the harness cannot match the engine, the
// code says so in a "Differs from the engine" note.

import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { type Props, ProviderCallError, type ProviderServer } from "../support/providerServer";
import { isDynamic, type ResourceState, type StackState, urnOf } from "./state";

/** One provider call, in the order made. */
export interface ProviderCall {
    readonly method: "Check" | "Diff" | "Create" | "Read" | "Update" | "Delete";
    readonly name: string;
    readonly id?: string;
    readonly outcome: "ok" | "failed" | "partial";
    /** For Diff: what the provider answered ("some", "none" or "unknown" changes). */
    readonly changes?: string;
    /** For a call that failed (or answered partial state): the provider's message. */
    readonly error?: string;
}

/** What `up` or `preview` decided for a resource. */
export type StepKind = "create" | "update" | "replace" | "delete" | "same" | "read" | "refresh" | "forget";

/** One planned or executed step. */
export interface Step {
    readonly kind: StepKind;
    readonly type: string;
    readonly name: string;
    /** Properties that forced a replacement, or "deleteBeforeReplace" ordering. */
    readonly detail?: string;
}

/** A resource registration coming from the program. */
export interface Goal {
    readonly type: string;
    readonly name: string;
    readonly inputs: Props;
    readonly custom: boolean;
    /** Set for `Resource.get(name, id)`: a read of an existing resource (ReadStep). */
    readonly id?: string | undefined;
}

/** Options the program would set with resource options, which mocks cannot see. */
export interface ResourceOptionsByName {
    /** Names of resources with the `deleteBeforeReplace: true` resource option. */
    readonly deleteBeforeReplace?: readonly string[];
}

/** Everything a deployment needs. */
export interface DeploymentContext {
    readonly stack: string;
    readonly project: string;
    readonly provider: ProviderServer;
    readonly preview: boolean;
    readonly options: ResourceOptionsByName;
    readonly calls: ProviderCall[];
    readonly steps: Step[];
    /**
     * `--continue-on-error`: a failed step does not stop the steps after it. Differs from the engine: the
     * deletes after the program are still skipped when a step failed (the engine runs those that do not
     * depend on the failure); mocks cannot tell dependents apart.
     */
    readonly continueOnError?: boolean;
}

/** A step failure: the engine stops scheduling new steps and the run fails (step_executor.go). */
export class StepError extends Error {
    override readonly name = "StepError";
}

/**
 * One `up` or `preview`: registrations arrive from the program, each becomes steps against the provider,
 * and `finish` runs the deletes once the program is done.
 *
 * Differs from the engine: steps run one at a time in registration order (the engine runs independent
 * chains in parallel, GOMAXPROCS*4 workers by default, see newStepExecutor); and resource options other
 * than deleteBeforeReplace are not seen, since mocks do not receive them.
 */
export class Deployment {
    /** The new state being built, in registration order. */
    private readonly registered: ResourceState[] = [];
    /** Old resources the program re-registered (or that were replaced), by URN. */
    private readonly operatedOn = new Set<string>();
    /** Old halves of create-before-delete replacements. */
    private readonly pendingDeletes: ResourceState[] = [];
    /** Resources whose Delete succeeded during this run. */
    private readonly deleted = new Set<string>();
    private queue: Promise<unknown> = Promise.resolve();
    readonly errors: Error[] = [];

    constructor(
        private readonly old: StackState,
        private readonly context: DeploymentContext,
    ) {}

    /** Handles one registration; resolves with what the program sees (id and outputs). */
    register(goal: Goal): Promise<{ id: string | undefined; state: Props }> {
        const run = this.queue.then(() => this.step(goal));
        this.queue = run.catch(() => undefined);
        return run;
    }

    private async step(goal: Goal): Promise<{ id: string | undefined; state: Props }> {
        // step_executor.go cancelDueToError: after a failed step no new step starts (unless --continue-on-error).
        if (this.errors.length > 0 && !this.context.continueOnError) {
            throw new StepError("update canceled: an earlier step failed");
        }
        try {
            return await this.stepFor(goal);
        } catch (error) {
            this.errors.push(error as Error);
            throw error;
        }
    }

    private async stepFor(goal: Goal): Promise<{ id: string | undefined; state: Props }> {
        const urn = urnOf(this.context.stack, this.context.project, goal.type, goal.name);
        if (goal.id) return await this.read(urn, goal);
        const old = this.old.resources.find((r) => r.urn === urn && !r.delete);
        if (old) this.operatedOn.add(urn);
        if (!servedByProvider(goal)) return this.plain(urn, goal, old);

        // sg generateSteps: Check gets the old *inputs* as olds (none for a new, external or tainted one).
        const olds = old && !old.external && !old.taint ? old.inputs : {};
        const inputs = await this.check(urn, goal, olds);
        if (!old || old.external) return await this.create(urn, goal, inputs);
        // Taint (pulumi state taint) replaces like `up --replace`: sg diff answers replace ["id"].
        if (old.taint) return await this.replace(urn, goal, old, "id", this.optionDeleteBeforeReplace(goal));

        // sg diffResource: Diff gets the old *outputs* and the checked inputs.
        const diff = await this.call(
            "Diff",
            goal.name,
            old.id,
            () => this.context.provider.diff(urn, old.id ?? "", old.outputs, inputs),
            (answer) => answer.changes,
        );
        // sg diffResource: DIFF_UNKNOWN falls back to comparing old and new inputs.
        const changed = diff.changes === "unknown" ? !isDeepStrictEqual(old.inputs, inputs) : diff.changes === "some";
        if (changed && diff.replaces.length > 0) {
            // sg continueStepsFromDiff: the resource option overrides the provider's answer either way.
            const deleteFirst = this.optionDeleteBeforeReplace(goal) ?? diff.deleteBeforeReplace;
            return await this.replace(urn, goal, old, diff.replaces.join(","), deleteFirst);
        }
        // sg continueStepsFromDiff: a resource with init errors is updated even when Diff says none.
        if (changed || old.initErrors?.length) return await this.update(urn, goal, old, inputs);
        // SameStep: new inputs, old outputs.
        this.record({ kind: "same", type: goal.type, name: goal.name });
        const same: ResourceState = { ...old, inputs };
        this.registered.push(same);
        return { id: same.id, state: same.outputs };
    }

    private async check(urn: string, goal: Goal, olds: Props): Promise<Props> {
        const checked = await this.call("Check", goal.name, undefined, () =>
            this.context.provider.check(urn, olds, goal.inputs),
        );
        if (checked.failures.length > 0) {
            // sg generateSteps: BailErrorf("resource %s is invalid") after reporting each failure.
            const detail = checked.failures.map((f) => `  ${f.property}: ${f.reason}`).join("\n");
            throw new StepError(`resource ${urn} is invalid:\n${detail}`);
        }
        return checked.inputs;
    }

    private async create(urn: string, goal: Goal, inputs: Props): Promise<{ id: string | undefined; state: Props }> {
        this.record({ kind: "create", type: goal.type, name: goal.name });
        // Preview: the plugin answers Create with the inputs as outputs and never calls the provider.
        if (this.context.preview) return { id: undefined, state: inputs };
        const created = await this.createOrRecordPartial(urn, goal, inputs);
        return { id: created.id, state: created.outputs };
    }

    /** CreateStep.Apply: on a partial failure the resource is recorded with its init errors, then the step fails. */
    private async createOrRecordPartial(urn: string, goal: Goal, inputs: Props): Promise<ResourceState> {
        try {
            const created = await this.call("Create", goal.name, undefined, () =>
                this.context.provider.create(urn, inputs),
            );
            const state: ResourceState = { ...base(urn, goal), id: created.id, inputs, outputs: created.properties };
            this.registered.push(state);
            return state;
        } catch (error) {
            const partial = partialStateOf(error);
            if (partial) {
                this.registered.push({
                    ...base(urn, goal),
                    id: partial.id,
                    inputs,
                    outputs: partial.properties,
                    initErrors: partial.reasons,
                });
            }
            throw error;
        }
    }

    private async update(
        urn: string,
        goal: Goal,
        old: ResourceState,
        inputs: Props,
    ): Promise<{ id: string | undefined; state: Props }> {
        this.record({ kind: "update", type: goal.type, name: goal.name });
        if (this.context.preview) return { id: old.id, state: { ...old.outputs, ...inputs } };
        try {
            const updated = await this.call("Update", goal.name, old.id, () =>
                this.context.provider.update(urn, old.id ?? "", old.outputs, inputs),
            );
            const state: ResourceState = { ...old, inputs, outputs: updated.properties };
            delete state.initErrors;
            this.registered.push(state);
            return { id: state.id, state: state.outputs };
        } catch (error) {
            const partial = partialStateOf(error);
            // engine updateActions.OnResourceStepPost: a partially failed update keeps the old inputs.
            this.registered.push(partial ? { ...old, outputs: partial.properties, initErrors: partial.reasons } : old);
            throw error;
        }
    }

    private async replace(
        urn: string,
        goal: Goal,
        old: ResourceState,
        keys: string,
        deleteFirst: boolean | undefined,
    ): Promise<{ id: string | undefined; state: Props }> {
        this.record({
            kind: "replace",
            type: goal.type,
            name: goal.name,
            detail: `${keys}${deleteFirst ? "; delete before replace" : ""}`,
        });
        // sg: a replacement is checked again with no olds; that result is what gets created.
        const inputs = await this.check(urn, goal, {});
        if (this.context.preview) return { id: undefined, state: inputs };
        if (deleteFirst) {
            // Delete-before-replace: DeleteReplacementStep for old, then CreateReplacement.
            // Differs from the engine: dependents that would be replaced (calculateDependentReplacements)
            // are not computed; mocks do not tell the harness which resources depend on which.
            await this.deleteResource(old);
            const created = await this.createOrRecordPartial(urn, goal, inputs);
            return { id: created.id, state: created.outputs };
        }
        // Create-before-delete: CreateReplacement(pendingDelete); the old one is deleted after the program
        // finishes (sg GenerateDeletes, `if res.Delete`), and stays in state with Delete until then.
        try {
            const created = await this.createOrRecordPartial(urn, goal, inputs);
            this.pendingDeletes.push({ ...old, delete: true });
            return { id: created.id, state: created.outputs };
        } catch (error) {
            if (!this.registered.some((r) => r.urn === urn)) this.registered.push(old);
            else this.pendingDeletes.push({ ...old, delete: true });
            throw error;
        }
    }

    /** ReadStep (GenerateReadSteps): Read with the given properties as inputs and state; stored External. */
    private async read(urn: string, goal: Goal): Promise<{ id: string | undefined; state: Props }> {
        this.record({ kind: "read", type: goal.type, name: goal.name });
        const read = await this.call("Read", goal.name, goal.id, () =>
            this.context.provider.read(urn, goal.id ?? "", goal.inputs, goal.inputs),
        );
        // As ReadStep.Apply: only an answer without properties means "does not exist"; an empty id keeps
        // the requested one. (The SDK's provider server always sends properties, so the real engine records
        // a get that found nothing unless the provider fails it.)
        if (Object.keys(read.properties).length === 0) throw new StepError(`resource '${goal.id}' does not exist`);
        const id = read.id || (goal.id ?? "");
        this.registered.push({
            ...base(urn, goal),
            id,
            inputs: goal.inputs,
            outputs: read.properties,
            external: true,
        });
        return { id, state: read.properties };
    }

    /** Resources other providers serve (e.g. @pulumi/random): a plain mock that keeps state like the engine. */
    private plain(urn: string, goal: Goal, old: ResourceState | undefined): { id: string | undefined; state: Props } {
        if (old && isDeepStrictEqual(old.inputs, goal.inputs)) {
            this.record({ kind: "same", type: goal.type, name: goal.name });
            this.registered.push(old);
            return { id: old.id, state: old.outputs };
        }
        this.record({ kind: old ? "replace" : "create", type: goal.type, name: goal.name });
        const state: ResourceState = {
            ...base(urn, goal),
            id: goal.custom ? randomUUID() : "",
            inputs: goal.inputs,
            outputs: { ...goal.inputs, ...plainOutputs(goal.type) },
        };
        this.registered.push(state);
        return { id: state.id, state: state.outputs };
    }

    /**
     * After the program: create-before-delete leftovers and resources the program no longer registers are
     * deleted, dependents first (sg GenerateDeletes + ScheduleDeletes reverses the dependency order; the
     * harness uses reverse registration order, which is one). Skipped entirely when a step failed
     * (step_executor.go: performDeletes never runs).
     */
    async finish(): Promise<StackState> {
        await this.queue;
        if (this.errors.length === 0) {
            const leftovers = this.old.resources.filter((r) => !this.operatedOn.has(r.urn) || r.delete);
            for (const resource of [...this.pendingDeletes, ...leftovers].reverse()) {
                this.record({ kind: "delete", type: resource.type, name: resource.name });
                if (this.context.preview) continue;
                try {
                    await this.deleteResource(resource);
                } catch (error) {
                    this.errors.push(error as Error);
                    this.registered.push(resource);
                }
            }
            return { version: 1, resources: this.context.preview ? this.old.resources : this.registered };
        }
        // A failed run keeps everything that still exists: what this run recorded, old halves awaiting
        // deletion, and every old resource it neither re-recorded nor deleted.
        const recorded = new Set(this.registered.map((r) => `${r.urn}|${r.delete ?? false}`));
        const untouched = this.old.resources.filter(
            (r) => !recorded.has(`${r.urn}|${r.delete ?? false}`) && !this.deleted.has(deletionKey(r)),
        );
        const pending = this.pendingDeletes.filter((r) => !this.deleted.has(deletionKey(r)));
        return {
            version: 1,
            resources: [
                ...this.registered,
                ...pending,
                ...untouched.filter((r) => !pending.some((p) => p.urn === r.urn)),
            ],
        };
    }

    /** DeleteStep.Apply: External resources and non-dynamic mocks are only forgotten. */
    private async deleteResource(resource: ResourceState): Promise<void> {
        if (!resource.external && servedByProvider(resource)) {
            await this.call("Delete", resource.name, resource.id, () =>
                this.context.provider.delete(resource.urn, resource.id ?? "", resource.outputs),
            );
        }
        this.deleted.add(deletionKey(resource));
    }

    private optionDeleteBeforeReplace(goal: Goal): boolean | undefined {
        return this.context.options.deleteBeforeReplace?.includes(goal.name) ? true : undefined;
    }

    private record(step: Step): void {
        this.context.steps.push(step);
    }

    private call<T>(
        method: ProviderCall["method"],
        name: string,
        id: string | undefined,
        invoke: () => Promise<T>,
        changesOf?: (result: T) => string,
    ): Promise<T> {
        return recordCall(this.context.calls, method, name, id, invoke, changesOf);
    }
}

/**
 * `refresh` (RefreshStep.Apply): Read every resource in state with its id, old inputs and old outputs.
 * An empty id means gone (the plugin turns it into empty outputs) and the resource leaves the state;
 * otherwise outputs, id and (if returned) inputs are updated and init errors cleared. A failing Read
 * fails the refresh but the other resources are still read.
 */
export async function refresh(
    state: StackState,
    context: Pick<DeploymentContext, "stack" | "project" | "provider" | "calls" | "steps">,
): Promise<{ state: StackState; errors: Error[] }> {
    const errors: Error[] = [];
    const resources: ResourceState[] = [];
    for (const resource of state.resources) {
        if (!servedByProvider(resource)) {
            resources.push(resource);
            continue;
        }
        try {
            const read = await recordCall(context.calls, "Read", resource.name, resource.id, () =>
                context.provider.read(resource.urn, resource.id ?? "", resource.outputs, resource.inputs),
            );
            if (!read.id) {
                context.steps.push({ kind: "forget", type: resource.type, name: resource.name });
                continue;
            }
            context.steps.push({ kind: "refresh", type: resource.type, name: resource.name });
            const refreshed: ResourceState = {
                ...resource,
                id: read.id,
                outputs: read.properties,
                inputs: read.inputs ?? resource.inputs,
            };
            delete refreshed.initErrors;
            resources.push(refreshed);
        } catch (error) {
            errors.push(error as Error);
            resources.push(resource);
        }
    }
    return { state: { version: 1, resources }, errors };
}

/** `destroy`: Delete everything, dependents first (reverse registration order); a failed delete stays. */
export async function destroy(
    state: StackState,
    context: Pick<DeploymentContext, "provider" | "calls" | "steps">,
): Promise<{ state: StackState; errors: Error[] }> {
    const errors: Error[] = [];
    const kept: ResourceState[] = [];
    for (const resource of [...state.resources].reverse()) {
        context.steps.push({ kind: "delete", type: resource.type, name: resource.name });
        if (resource.external || !servedByProvider(resource)) continue;
        try {
            await recordCall(context.calls, "Delete", resource.name, resource.id, () =>
                context.provider.delete(resource.urn, resource.id ?? "", resource.outputs),
            );
        } catch (error) {
            errors.push(error as Error);
            kept.unshift(resource);
        }
    }
    return { state: { version: 1, resources: kept }, errors };
}

/** Makes a provider call and records it, with its outcome, in `calls`. */
async function recordCall<T>(
    calls: ProviderCall[],
    method: ProviderCall["method"],
    name: string,
    id: string | undefined,
    invoke: () => Promise<T>,
    changesOf?: (result: T) => string,
): Promise<T> {
    try {
        const result = await invoke();
        const changes = changesOf?.(result);
        calls.push({ method, name, ...(id ? { id } : {}), outcome: "ok", ...(changes ? { changes } : {}) });
        return result;
    } catch (error) {
        const partial = error instanceof ProviderCallError && error.initFailure !== undefined;
        const message = error instanceof Error ? error.message : String(error);
        calls.push({ method, name, ...(id ? { id } : {}), outcome: partial ? "partial" : "failed", error: message });
        throw error;
    }
}

/** Dynamic custom resources go to the provider process; components and other packages' resources do not. */
function servedByProvider(resource: { readonly custom: boolean; readonly type: string }): boolean {
    return resource.custom && isDynamic(resource.type);
}

/** The partial state of an ErrorResourceInitFailed answer, with at least one init error. */
function partialStateOf(error: unknown): { id: string; properties: Props; reasons: string[] } | undefined {
    if (!(error instanceof ProviderCallError) || !error.initFailure) return undefined;
    const { id, properties, reasons } = error.initFailure;
    return { id, properties, reasons: reasons.length > 0 ? reasons : [error.details] };
}

function deletionKey(resource: ResourceState): string {
    return `${resource.urn}|${resource.id ?? ""}`;
}

function base(urn: string, goal: Goal): Pick<ResourceState, "urn" | "type" | "name" | "custom"> {
    return { urn, type: goal.type, name: goal.name, custom: goal.custom };
}

/** Outputs a few @pulumi/random resources compute, enough for programs that use them. */
function plainOutputs(type: string): Props {
    if (type === "random:index/randomUuid:RandomUuid") return { result: randomUUID() };
    if (type.startsWith("random:index/")) return { result: randomUUID().replace(/-/g, "") };
    return {};
}
