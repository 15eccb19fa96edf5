// The provider of every AsyncResource (see datastoreShim.ts): the subpath
// `pulumi-lifecycle/provider/async-resource` is part of every stack's state and must keep resolving.

import { providerShim } from "../shared/providerShim";

export = providerShim("tasks:AsyncResource");
