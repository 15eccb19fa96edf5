// What a dynamic resource of this package serializes into `__provider`.
//
// The engine stores `__provider` in the state of every resource and runs it in the provider process.
// Serializing the real provider would copy our code by value, with paths of the machine that built it.
// This shim captures nothing but a kind string; at run time it loads the package by name from the
// Pulumi project (`require("pulumi-lifecycle/runtime")`), which works under npm and pnpm layouts, on
// another machine, and after an upgrade. Its text is about 2 KB and the same for every build.

import type * as dynamic from "@pulumi/pulumi/dynamic";

/** The resource kinds the runtime can serve. */
export type ProviderKind = "hosts:HostEntry" | "tasks:Datastore";

const shims = new Map<ProviderKind, dynamic.ResourceProvider>();

/**
 * The ResourceProvider that forwards every operation to the package's runtime provider for `kind`. One
 * object per kind: the SDK caches `__provider` by provider object, so a program serializes it once per
 * kind instead of once per resource, and resources register in the order the program declares them.
 */
export function providerShim(kind: ProviderKind): dynamic.ResourceProvider {
    let shim = shims.get(kind);
    if (!shim) {
        shim = createShim(kind);
        shims.set(kind, shim);
    }
    return shim;
}

function createShim(kind: ProviderKind): dynamic.ResourceProvider {
    // Resolved by name in the provider process, from the Pulumi project; the type import is erased.
    const load = () =>
        (require("pulumi-lifecycle/runtime") as typeof import("../runtime")).providerFor(
            kind,
        ) as Required<dynamic.ResourceProvider>;
    return {
        configure: (request) => load().configure(request),
        check: (olds, news) => load().check(olds, news),
        diff: (id, olds, news) => load().diff(id, olds, news),
        create: (inputs) => load().create(inputs),
        read: (id, props) => load().read(id, props),
        update: (id, olds, news) => load().update(id, olds, news),
        delete: (id, props) => load().delete(id, props),
    };
}
