// The `__provider` text of a resource kind, serialized by the SDK exactly as dynamic.Resource does it.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { serializeFunction } from "@pulumi/pulumi/runtime/closure/serializeClosure";

import hostEntryShim = require("../../provider/hosts/hostEntryShim");
import asyncResourceShim = require("../../provider/tasks/asyncResourceShim");
import datastoreShim = require("../../provider/tasks/datastoreShim");

import type { ResourceKind } from "../../provider/runtime";

/** What each kind's resource class passes to dynamic.Resource as its provider. */
const SHIMS: Record<ResourceKind, dynamic.ResourceProvider> = {
    "hosts:HostEntry": hostEntryShim,
    "tasks:Datastore": datastoreShim,
    "tasks:AsyncResource": asyncResourceShim,
};

const cache = new Map<ResourceKind, Promise<string>>();

/** The serialized provider that the program side stores in `__provider` for `kind`. */
export function serializedProvider(kind: ResourceKind): Promise<string> {
    let text = cache.get(kind);
    if (!text) {
        const provider = SHIMS[kind];
        text = serializeFunction(() => provider, { allowSecrets: true }).then((result) => result.text);
        cache.set(kind, text);
    }
    return text;
}
