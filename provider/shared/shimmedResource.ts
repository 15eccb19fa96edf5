// The base of every resource class of this package: a dynamic resource, as pulumi.dynamic.Resource
// declares one (the type token `pulumi-nodejs:dynamic/<module>:<type>`, served by the engine's Node.js
// dynamic-provider process), whose `__provider` is its kind's shim named by package subpath
// (providerShim.ts). pulumi.dynamic.Resource would run the SDK's closure serializer on every program
// run to write the same reference.

import * as pulumi from "@pulumi/pulumi";
import { providerText } from "./providerShim";

/** A resource kind as the engine and the dynamic-provider process know it. */
export interface ShimmedKind {
    /** The token's module ("hosts"). */
    readonly module: string;
    /** The token's type ("HostEntry"). */
    readonly type: string;
    /** The package subpath whose export is the kind's shim ("pulumi-lifecycle/provider/hostEntry"). */
    readonly shim: string;
    /**
     * Whether the resource's `customTimeouts` option is recorded among its inputs: the engine passes a
     * provider no timeouts, and a kind whose writes wait on a remote operation bounds them by these
     * (a destroy's first delete too, from the state; README, Timeouts).
     */
    readonly recordsCustomTimeouts?: boolean;
}

/** A dynamic resource whose provider is its kind's shim. */
export abstract class ShimmedResource extends pulumi.CustomResource {
    protected constructor(kind: ShimmedKind, name: string, props: pulumi.Inputs, opts?: pulumi.CustomResourceOptions) {
        super(
            `pulumi-nodejs:dynamic/${kind.module}:${kind.type}`,
            name,
            {
                ...props,
                ...(kind.recordsCustomTimeouts && opts?.customTimeouts ? { customTimeouts: opts.customTimeouts } : {}),
                __provider: providerText(kind.shim),
            },
            opts,
        );
    }
}
