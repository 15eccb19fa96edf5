// What a dynamic resource of this package serializes into `__provider`.
//
// The engine stores `__provider` in the state of every resource (in its inputs and its outputs) and runs
// it in the provider process. Serializing the real provider would copy our code by value, with paths of
// the machine that built it. The SDK stores a module's exports as `require("<package>/<subpath>")` when
// the module is installed under node_modules and its file is a package export; so each kind's provider
// object is the whole export of its own module (hostEntryShim.ts, datastoreShim.ts). Where the SDK cannot
// resolve the package from its own location (it is installed elsewhere, e.g. hoisted in a monorepo), it
// stores the file's path in the package instead (`pulumi-lifecycle/dist/hosts/hostEntryShim.js`), which
// is exported too so that it resolves; both paths must keep resolving in every future version. Where the
// package is not under node_modules (a linked checkout), the SDK copies the forwarding code (~2 KB),
// which loads the package by name just the same.

import type * as dynamic from "@pulumi/pulumi/dynamic";

import hostEntryShim = require("../hosts/hostEntryShim");
import asyncResourceShim = require("../tasks/asyncResourceShim");
import datastoreShim = require("../tasks/datastoreShim");

import type { ProviderKind } from "./forwardingProvider";

export type { ProviderKind } from "./forwardingProvider";

/**
 * The ResourceProvider of `kind`: one object per kind, so the SDK serializes `__provider` once per kind
 * instead of once per resource, and resources register in the order the program declares them.
 */
export function providerShim(kind: ProviderKind): dynamic.ResourceProvider {
    switch (kind) {
        case "hosts:HostEntry":
            return hostEntryShim;
        case "tasks:Datastore":
            return datastoreShim;
        case "tasks:AsyncResource":
            return asyncResourceShim;
    }
}
