// The ResourceProvider behind every resource of a kind: it captures nothing but the kind and, at run time
// in the provider process, loads the package by name from the Pulumi project
// (`require("pulumi-lifecycle/runtime")`), which works under npm and pnpm layouts, on another machine and
// after an upgrade.

import type * as dynamic from "@pulumi/pulumi/dynamic";

/** The resource kinds the runtime can serve. */
export type ProviderKind = "hosts:HostEntry" | "tasks:Datastore" | "tasks:AsyncResource";

/** What `pulumi-lifecycle/runtime` offers the forwarding provider (see runtime.ts). */
interface Runtime {
    providerFor(kind: ProviderKind): Required<dynamic.ResourceProvider>;
}

/** A provider that forwards every operation to the package's runtime provider for `kind`. */
export function forwardingProvider(kind: ProviderKind): dynamic.ResourceProvider {
    // Resolved by name in the provider process, from the Pulumi project; the type import is erased.
    const load = () => (require("pulumi-lifecycle/runtime") as Runtime).providerFor(kind);
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
