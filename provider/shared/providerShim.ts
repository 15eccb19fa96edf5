// The provider shim: the ResourceProvider behind every resource of a kind, and the one name for the
// mechanism (each kind's module exporting it is that kind's shim; `__provider` names it). It captures
// nothing but the kind and, at run time in the provider process, loads the package by name from the
// Pulumi project (`require("pulumi-lifecycle/runtime")`), which works under npm and pnpm layouts, on
// another machine and after an upgrade.
//
// The engine stores `__provider` in the state of every resource (in its inputs and its outputs) and runs
// it in the provider process. Each kind's shim is the whole export of a module of its own
// (hosts/hostEntryShim.ts, tasks/datastoreShim.ts, tasks/asyncResourceShim.ts), exported by the package
// under a subpath (`pulumi-lifecycle/provider/hostEntry`), and `__provider` is a fixed text that requires
// that subpath (providerText, written by shimmedResource.ts): no code and no path of the machine that
// built it. State written before the resource classes wrote that text themselves holds what the SDK's
// closure serializer wrote: the same subpath; where the SDK could not resolve the package from its own
// location (hoisted in a monorepo) the file's path in the package
// (`pulumi-lifecycle/dist/hosts/hostEntryShim.js`), exported too; and for a linked checkout the shim's
// code, which loads the package by name. Every one of these must keep resolving in every future version.
// Which kinds exist is the runtime's business (runtime.ts): this module knows none.

import type * as dynamic from "@pulumi/pulumi/dynamic";

/** What `pulumi-lifecycle/runtime` offers the shim (see runtime.ts). */
interface Runtime {
    providerFor(kind: string): Required<dynamic.ResourceProvider>;
}

/**
 * The `__provider` text a resource of this package records: the dynamic-provider process runs it
 * (`require-from-string(text).handler()` answers the provider), and it answers the shim at `subpath`
 * ("pulumi-lifecycle/provider/hostEntry") by name. It is, byte for byte, what the SDK's closure
 * serializer writes for `pulumi.dynamic.Resource` with that shim installed under node_modules, so the
 * state of a stack written by an earlier version does not change; a program run does not pay the
 * serializer (about 0.25 CPU-s: it attaches a V8 inspector session).
 */
export function providerText(subpath: string): string {
    return [
        "exports.handler = __f0;",
        `const provider = require(${JSON.stringify(subpath)});`,
        "",
        "function __f0() {",
        "  return (function() {",
        "    with({ this: undefined, arguments: undefined }) {",
        "",
        "return () => provider;",
        "",
        "    }",
        "  }).apply(undefined, undefined).apply(this, arguments);",
        "}",
        "",
    ].join("\n");
}

/** A provider that forwards every operation to the package's runtime provider for `kind`. */
export function providerShim(kind: string): dynamic.ResourceProvider {
    // Resolved by name in the provider process, from the Pulumi project, once; the type import is erased.
    let provider: Required<dynamic.ResourceProvider> | undefined;
    const load = () => {
        provider ??= (require("pulumi-lifecycle/runtime") as Runtime).providerFor(kind);
        return provider;
    };
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
