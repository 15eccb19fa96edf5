// The provider of every Datastore. This module's exports ARE the provider object, and every stack's
// `__provider` names it by its subpath, `require("pulumi-lifecycle/provider/datastore")` (DATASTORE_SHIM;
// the SDK's closure serializer wrote the same reference before the resource classes wrote it
// themselves). The subpath is part of every stack's state: it must keep resolving in every future version.

import { providerShim } from "../shared/providerShim";

export = providerShim("tasks:Datastore");
