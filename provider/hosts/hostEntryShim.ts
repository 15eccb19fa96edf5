// The provider of every HostEntry. This module's exports ARE the provider object, and every stack's
// `__provider` names it by its subpath, `require("pulumi-lifecycle/provider/hostEntry")` (HOST_ENTRY_SHIM;
// the SDK's closure serializer wrote the same reference before 0.1's resource classes wrote it
// themselves). The subpath is part of every stack's state: it must keep resolving in every future version.

import { providerShim } from "../shared/providerShim";

export = providerShim("hosts:HostEntry");
