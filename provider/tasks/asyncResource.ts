// `tasks.AsyncResource`: any REST resource whose writes are long-running operations, declared by where
// it lives, its body, its natural key and its API's dialect, with the whole lifecycle of a Datastore:
// tainted and partial state, untaint, Ctrl-C, natural keys and create tokens (see asyncResourceProvider.ts).
//
// Type token: pulumi-nodejs:dynamic/tasks:AsyncResource. Id: the natural key (the value at `naturalKey`
// in the body), known before the create ends; `resourceId` is the API's id.

import type * as pulumi from "@pulumi/pulumi";

import { ShimmedResource } from "../shared/shimmedResource";
import {
    ASYNC_RESOURCE_MODULE,
    ASYNC_RESOURCE_SHIM,
    ASYNC_RESOURCE_TYPE_NAME,
    type GenericDialectInputs,
    type PendingOperation,
} from "./asyncResourceSchema";
import type { DialectName } from "./protocol/dialects/dialect";
import type { OperationTimeoutsArgs } from "./timeoutsSchema";

/** Where an API is, how it follows writes, and where its token is found. */
export interface AsyncApiArgs {
    /** The API's origin, such as `https://api.example.com` (a base path goes in the path templates). Requests never leave that origin. */
    url: pulumi.Input<string>;
    /** generic, greenlake (HPE GreenLake data services), azure-arm, azure, google or aws-cloudcontrol. */
    dialect: pulumi.Input<DialectName>;
    /** The stack config key holding the bearer token, read by the provider (`widgets:token`); set it as a secret. */
    tokenConfig?: pulumi.Input<string>;
    /** The environment variable holding the token when the config key is not set (`WIDGETS_TOKEN`). */
    tokenEnv?: pulumi.Input<string>;
    /** The generic dialect's options: methods, where the monitor, status and resource are, the status words. */
    generic?: pulumi.Input<GenericDialectInputs>;
    /** Google: the version prefix operations are read under (default `/v1`). */
    versionPrefix?: pulumi.Input<string>;
    /** Google: the query parameter that sets the id on create (`widgetId`). */
    idParameter?: pulumi.Input<string>;
    /** AWS Cloud Control: the resource type name (`AWS::Logs::LogGroup`). */
    typeName?: pulumi.Input<string>;
    /**
     * AWS Cloud Control: the region requests are signed for (SigV4). The credentials are read by the
     * provider from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, never from inputs.
     */
    region?: pulumi.Input<string>;
}

/** The arguments of a `tasks.AsyncResource`. */
export interface AsyncResourceArgs {
    api: pulumi.Input<AsyncApiArgs>;
    /** The collection's path template, `{name}` placeholders filled from pathParameters: `/v1/projects/{project}/widgets`. */
    collectionPath: pulumi.Input<string>;
    /** The item's path template, with `{id}` for the API's id: `/v1/projects/{project}/widgets/{id}`. */
    itemPath: pulumi.Input<string>;
    /** Values of the templates' placeholders other than `{id}`. Changing one replaces the resource. */
    pathParameters?: pulumi.Input<Record<string, pulumi.Input<string>>>;
    /** The resource as the API takes it on create and update: a JSON object (or a JSON string of one). */
    body: pulumi.Input<Record<string, unknown> | string>;
    /** Where the natural key is in the body and in the API's records (`name`). It is the Pulumi id; changing it replaces. */
    naturalKey: pulumi.Input<string>;
    /** The natural key itself, when the body does not carry it (an Azure resource's name is in its URL). */
    key?: pulumi.Input<string>;
    /** Where the API's records carry their id when the API chooses it on create (`id`); omit when the natural key is the id. */
    idField?: pulumi.Input<string>;
    /** How to find the resource by its natural key in the collection when the API chooses the id. */
    lookup?: pulumi.Input<{
        /** A query added to the collection path; `{key}` stands for the natural key (`filter=name eq '{key}'`). */
        query?: pulumi.Input<string>;
        /** Where the list answer has its items (default: the answer when it is a list, else `items`, `value` or `data`). */
        items?: pulumi.Input<string>;
        /** Where a list answer has its next page's URL or path (default `nextLink`); every page is read, up to 50. */
        next?: pulumi.Input<string>;
    }>;
    /** Top-level body properties whose change replaces the resource (the others update it in place). */
    replaceOnChanges?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * Makes a retried or resumed create replay instead of making a second resource, where the dialect
     * has a create token (generic Idempotency-Key, Google requestId, Cloud Control ClientToken). Use a
     * value stable for the resource, such as `new random.RandomUuid(...).result`.
     */
    createToken?: pulumi.Input<string>;
    /** Longest time per operation ("30m", "1h30m"): 20m for create, update and delete, 5m for read. */
    timeouts?: OperationTimeoutsArgs;
    /** Take over an existing resource with the same natural key (the program's body is sent to it). */
    adopt?: pulumi.Input<boolean>;
    /** Keep a tainted resource instead of replacing it: the next `up` looks it up by its natural key. */
    untaint?: pulumi.Input<boolean>;
}

/** A resource of any REST API whose writes are long-running operations. */
export class AsyncResource extends ShimmedResource {
    /** The API's id of the resource, once known. */
    declare readonly resourceId: pulumi.Output<string | undefined>;
    /** The resource as the API last answered it. */
    declare readonly resource: pulumi.Output<unknown>;
    /** The body last sent. */
    declare readonly body: pulumi.Output<Record<string, unknown>>;
    /** An operation of ours whose end was not seen, which the next `up` follows. */
    declare readonly operation: pulumi.Output<PendingOperation | undefined>;
    /** True when its create did not finish: the next `up` replaces it unless `untaint` is set. */
    declare readonly tainted: pulumi.Output<boolean>;
    /** Why it is tainted. */
    declare readonly taintReason: pulumi.Output<string | undefined>;

    /** Declares a resource. */
    constructor(name: string, args: AsyncResourceArgs, opts?: pulumi.CustomResourceOptions) {
        const outputs = {
            resourceId: undefined,
            resource: undefined,
            operation: undefined,
            tainted: undefined,
            taintReason: undefined,
        };
        super(
            {
                module: ASYNC_RESOURCE_MODULE,
                type: ASYNC_RESOURCE_TYPE_NAME,
                shim: ASYNC_RESOURCE_SHIM,
                recordsCustomTimeouts: true,
            },
            name,
            { ...args, ...outputs },
            opts,
        );
    }

    /**
     * Reads an existing resource by its natural key without managing it. `definition` says where and
     * how it lives (the same arguments a declaration takes; the body need only carry the natural key).
     */
    static get(
        name: string,
        id: pulumi.Input<pulumi.ID>,
        definition: AsyncResourceArgs,
        opts?: pulumi.CustomResourceOptions,
    ): AsyncResource {
        return new AsyncResource(name, definition, { ...opts, id });
    }
}
