// Adds imported entries to a stack's state exactly as the provider's create would have recorded them,
// so that the generated program's first `pulumi preview` shows no change and its first `pulumi up`
// writes nothing: what `pulumi import` does for real providers, which the engine cannot do for dynamic
// ones. Pure: works on the `deployment` of `pulumi stack export`; the command line runs the CLI.
//
// Each entry becomes a custom resource under the stack, served by the stack's default `pulumi-nodejs`
// provider (added when the stack has none yet: the engine fills in its inputs on the next `up`, without
// reporting a change), with the checked inputs plus `__provider` as inputs, and those plus the line
// number as outputs.

import { randomUUID } from "node:crypto";
import { canonicalJson } from "../../shared/canonicalJson";
import { ImportRefusedError } from "../errors/importRefusedError";
import { HOST_ENTRY_MODULE, HOST_ENTRY_TYPE, type HostEntryInputs, type HostEntryOutputs } from "../hostEntrySchema";
import { formatId, identityOf } from "./entries";
import type { ImportedEntry, ImportPlan } from "./importer";

/** A resource as `pulumi stack export` writes it (only the fields this module reads or writes). */
export interface DeploymentResource {
    urn: string;
    type: string;
    custom?: boolean;
    id?: string;
    parent?: string;
    provider?: string;
    protect?: boolean;
    inputs?: Record<string, unknown>;
    outputs?: Record<string, unknown>;
    [field: string]: unknown;
}

/** The `deployment` of `pulumi stack export`; fields this module does not know are kept as they are. */
export interface Deployment {
    resources?: DeploymentResource[];
    pending_operations?: unknown[];
    [field: string]: unknown;
}

/** Where the entries go and what they carry. */
export interface StateImportOptions {
    /** The Pulumi project's name (Pulumi.yaml). */
    readonly project: string;
    /** The stack's name, as in its URNs (the last part of `org/project/stack`). */
    readonly stack: string;
    /** The serialized shim a HostEntry of this package stores as `__provider`. */
    readonly serializedShim: string;
    readonly protect: boolean;
}

/** What was added: the URN and id of each entry. */
export interface StateImport {
    readonly deployment: Deployment;
    readonly added: { readonly urn: string; readonly id: string; readonly entry: ImportedEntry }[];
}

const ENTRY_TYPE = `pulumi-nodejs:dynamic/${HOST_ENTRY_MODULE}:${HOST_ENTRY_TYPE}`;
const PROVIDER_TYPE = "pulumi:providers:pulumi-nodejs";

/**
 * Returns the deployment with the plan's entries added. Throws ImportRefusedError, changing nothing,
 * when the state holds resources of another project or stack, when the stack has an interrupted update
 * pending, when a resource of the same name exists, or when an entry is already managed in the stack
 * (the same family and canonical name in the same file).
 */
export function addEntriesToState(deployment: Deployment, plan: ImportPlan, options: StateImportOptions): StateImport {
    const { project, stack } = options;
    refuseForeignResources(deployment, options);
    if ((deployment.pending_operations ?? []).length > 0) {
        throw new ImportRefusedError(
            `stack ${stack} has operations that an interrupted update left pending. Run \`pulumi refresh\` ` +
                "(or `pulumi cancel` if an update is still marked as running), then import again",
        );
    }
    const resources = [...(deployment.resources ?? [])];
    const stackUrn = `urn:pulumi:${stack}::${project}::pulumi:pulumi:Stack::${project}-${stack}`;
    if (!resources.some((r) => r.urn === stackUrn)) resources.unshift({ urn: stackUrn, type: "pulumi:pulumi:Stack" });
    const providerUrn = `urn:pulumi:${stack}::${project}::${PROVIDER_TYPE}::default`;
    let provider = resources.find((r) => r.urn === providerUrn);
    if (!provider) {
        provider = { urn: providerUrn, custom: true, id: randomUUID(), type: PROVIDER_TYPE };
        resources.splice(resources.findIndex((r) => r.urn === stackUrn) + 1, 0, provider);
    }
    const providerReference = `${providerUrn}::${provider.id}`;
    const added = plan.entries.map((entry) => {
        const urn = `urn:pulumi:${stack}::${project}::${ENTRY_TYPE}::${entry.resourceName}`;
        const id = idOf(entry);
        const managed = resources.find(
            (r) => r.type === ENTRY_TYPE && r.id === id && r.outputs?.file === entry.args.file,
        );
        if (managed) {
            throw new ImportRefusedError(
                `line ${entry.lineNumber} (${id}) is already managed in stack ${stack} as ${managed.urn}; ` +
                    "nothing was imported. Import the other lines with --match, or use the program as it is",
            );
        }
        if (resources.some((r) => r.urn === urn)) {
            throw new ImportRefusedError(
                `stack ${stack} already has a resource named ${entry.resourceName} (${urn}); nothing was imported. ` +
                    "Remove it from the program and the stack, or import without this line (--match)",
            );
        }
        const args: HostEntryInputs = entry.args;
        const inputs = { __provider: options.serializedShim, ...args };
        const outputs = { ...inputs, line: entry.lineNumber } satisfies HostEntryOutputs;
        resources.push({
            urn,
            custom: true,
            id,
            type: ENTRY_TYPE,
            inputs,
            outputs,
            parent: stackUrn,
            provider: providerReference,
            ...(options.protect ? { protect: true } : {}),
        });
        return { urn, id, entry };
    });
    return { deployment: { ...deployment, resources }, added };
}

/**
 * Whether two exports of a stack hold the same state: everything but the manifest (which records when
 * and by which CLI the state was written, and changes on every write).
 */
export function sameState(a: Deployment, b: Deployment): boolean {
    const { manifest: _a, ...restA } = a;
    const { manifest: _b, ...restB } = b;
    return canonicalJson(restA) === canonicalJson(restB);
}

/**
 * Refuses a state with a resource of another project or stack: entries recorded there would carry this
 * project's URNs beside another project's Stack root, which neither project's `up` can then manage.
 */
function refuseForeignResources(deployment: Deployment, options: StateImportOptions): void {
    const pending = (deployment.pending_operations ?? []).map(
        (operation) => (operation as { resource?: unknown }).resource,
    );
    for (const resource of [...(deployment.resources ?? []), ...pending]) {
        const urn = (resource as { urn?: unknown } | undefined)?.urn;
        if (typeof urn !== "string") continue;
        const [stack, project] = urn.replace(/^urn:pulumi:/, "").split("::");
        if (project !== options.project) {
            throw new ImportRefusedError(
                `the state of stack ${options.stack} belongs to project ${JSON.stringify(project)} (${urn}), and ` +
                    `this is project ${JSON.stringify(options.project)}; nothing was imported. Run the command in the ` +
                    `directory of project ${JSON.stringify(project)}, or name a stack of ${JSON.stringify(options.project)}`,
            );
        }
        if (stack !== options.stack) {
            throw new ImportRefusedError(
                `the state of stack ${options.stack} holds a resource of stack ${JSON.stringify(stack)} (${urn}); ` +
                    "nothing was imported. Repair the stack's state first (`pulumi stack export`, `pulumi stack import`)",
            );
        }
    }
}

/** The resource id the provider gives an entry. */
function idOf(entry: ImportedEntry): string {
    return formatId(identityOf(entry.args));
}
