// The `__provider` text of a resource kind, as its resource class records it (provider/shared/providerShim.ts).

import { HOST_ENTRY_SHIM } from "../../provider/hosts/hostEntrySchema";
import type { ResourceKind } from "../../provider/runtime";
import { providerText } from "../../provider/shared/providerShim";
import { ASYNC_RESOURCE_SHIM } from "../../provider/tasks/asyncResourceSchema";
import { DATASTORE_SHIM } from "../../provider/tasks/datastoreSchema";

/** The package subpath of each kind's shim. */
const SHIMS: Record<ResourceKind, string> = {
    "hosts:HostEntry": HOST_ENTRY_SHIM,
    "tasks:Datastore": DATASTORE_SHIM,
    "tasks:AsyncResource": ASYNC_RESOURCE_SHIM,
};

/** The `__provider` that the program side stores for `kind`. */
export function providerTextOf(kind: ResourceKind): string {
    return providerText(SHIMS[kind]);
}
