// The provider shim: the ResourceProvider behind every resource of a kind, and the one name for the
// mechanism (each kind's module exporting it is that kind's shim; the SDK stores it as `__provider`).
// It captures nothing but the kind and, at run time in the provider process, loads the package by name
// from the Pulumi project (`require("pulumi-lifecycle/runtime")`), which works under npm and pnpm
// layouts, on another machine and after an upgrade.
//
// The engine stores `__provider` in the state of every resource (in its inputs and its outputs) and runs
// it in the provider process. Serializing the real provider would copy our code by value, with paths of
// the machine that built it. The SDK stores a module's exports as `require("<package>/<subpath>")` when
// the module is installed under node_modules and its file is a package export; so each kind's shim is the
// whole export of a module of its own (hosts/hostEntryShim.ts, tasks/datastoreShim.ts,
// tasks/asyncResourceShim.ts), one object per kind, which the SDK serializes once per kind. Where the SDK
// cannot resolve the package from its own location (it is installed elsewhere, e.g. hoisted in a
// monorepo), it stores the file's path in the package instead
// (`pulumi-lifecycle/dist/hosts/hostEntryShim.js`), which is exported too so that it resolves; both paths
// must keep resolving in every future version. Where the package is not under node_modules (a linked
// checkout), the SDK copies the shim's code (~2 KB), which loads the package by name just the same. Which
// kinds exist is the runtime's business (runtime.ts): this module knows none.

import type * as dynamic from "@pulumi/pulumi/dynamic";

/** What `pulumi-lifecycle/runtime` offers the shim (see runtime.ts). */
interface Runtime {
    providerFor(kind: string): Required<dynamic.ResourceProvider>;
}

/** A provider that forwards every operation to the package's runtime provider for `kind`. */
export function providerShim(kind: string): dynamic.ResourceProvider {
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
