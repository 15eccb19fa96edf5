// The `__provider` of every Datastore. This module's exports ARE the provider object, so when the package
// is installed under node_modules the SDK stores the reference `require("pulumi-lifecycle/provider/datastore")`
// (about 250 bytes, the same for every version and path) instead of the code by value. The subpath is
// part of every stack's state: it must keep resolving in every future version.

import { providerShim } from "../shared/providerShim";

export = providerShim("tasks:Datastore");
