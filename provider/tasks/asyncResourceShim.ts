// The `__provider` of every AsyncResource (see datastoreShim.ts): the subpath
// `pulumi-lifecycle/provider/async-resource` is part of every stack's state and must keep resolving.

import { forwardingProvider } from "../shared/forwardingProvider";

export = forwardingProvider("tasks:AsyncResource");
