// The package as the provider process sees it, and its composition root: `__provider` (see
// shared/providerShim.ts) loads this module by name and asks it for the provider of a resource
// kind. RESOURCE_KINDS is the one registry of the kinds there are; each feature's composition
// (hostsRuntime.ts, tasksRuntime.ts) builds its providers with what they work through (the hosts-file
// store, the task API client) and is loaded with the first resource of its kind, so a process serving
// only hosts entries never loads the task API client, nor the other way round. One provider per kind per
// process, so all the operations the engine runs at once share one store and its write coalescing, and
// one client.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { exitWhenEngineGone } from "./shared/engineWatch";
import { UnknownResourceKindError } from "./shared/errors/unknownResourceKindError";

const hostsRuntime = () => require("./hostsRuntime") as typeof import("./hostsRuntime");
const tasksRuntime = () => require("./tasksRuntime") as typeof import("./tasksRuntime");

/** Every resource kind of the package, by the name its shim forwards, and how its provider is built. */
const RESOURCE_KINDS = {
    "hosts:HostEntry": () => hostsRuntime().hostEntryProvider(),
    "tasks:Datastore": () => tasksRuntime().datastoreProvider(),
    "tasks:AsyncResource": () => tasksRuntime().asyncResourceProvider(),
} satisfies Record<string, () => dynamic.ResourceProvider>;

/** A resource kind this version of the package serves. */
export type ResourceKind = keyof typeof RESOURCE_KINDS;

const providers = new Map<string, dynamic.ResourceProvider>();

/**
 * The provider serving `kind` in this process; a kind this version does not know (state written by a
 * newer package) fails with UnknownResourceKindError.
 */
export function providerFor(kind: string): dynamic.ResourceProvider {
    let provider = providers.get(kind);
    if (!provider) {
        if (!Object.hasOwn(RESOURCE_KINDS, kind)) throw new UnknownResourceKindError(kind);
        // The engine starts the provider process with its own address as the first argument.
        exitWhenEngineGone(process.argv[2]);
        provider = RESOURCE_KINDS[kind as ResourceKind]();
        providers.set(kind, provider);
    }
    return provider;
}
