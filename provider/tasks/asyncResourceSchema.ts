// The resolved shapes of a tasks.AsyncResource, shared by the program side and the provider side.

import type { ListsEvery } from "../shared/stateShape";
import type { DialectName, WriteKind } from "./protocol/dialects/dialect";
import type { CustomTimeouts, OperationTimeouts } from "./timeoutsSchema";

/** Resource type token module and name: `pulumi-nodejs:dynamic/tasks:AsyncResource`. */
export const ASYNC_RESOURCE_MODULE = "tasks";
export const ASYNC_RESOURCE_TYPE_NAME = "AsyncResource";
/** The package subpath of the AsyncResource shim (asyncResourceShim.ts), which every stack's state names. */
export const ASYNC_RESOURCE_SHIM = "pulumi-lifecycle/provider/async-resource";

/** How the generic dialect follows writes (see protocol/dialects/generic.ts); every field has a default. */
export interface GenericDialectInputs {
    /** POST to the collection (default), or PUT to the item path named by the natural key. */
    createMethod?: "POST" | "PUT";
    /** PATCH (default), PUT or POST to the item path. */
    updateMethod?: "PATCH" | "PUT" | "POST";
    /** Where a 202 names its status monitor: `header.<Name>` or `body.<path>` (default `header.Location`). */
    monitor?: string;
    /** Where a monitor's answer has the status: `code`, `header.<Name>` or `body.<path>` (default `body.status`). */
    status?: string;
    /** Status words that mean success, pending and canceled (case-insensitive); any other is failure. */
    success?: string[];
    pending?: string[];
    canceled?: string[];
    /** Where the final answer names the resource, a URL or path (default `header.Location`). */
    resource?: string;
    /** The header that carries the create token (default `Idempotency-Key`). */
    idempotencyHeader?: string;
}

/** Where the API is, how it speaks, and where its token is found (never the token itself). */
export interface ApiInputs {
    /** The API's origin, such as `https://api.example.com` (a base path goes in the path templates). Requests never leave it. */
    url: string;
    /** How writes are followed: generic, greenlake, azure-arm, azure, google or aws-cloudcontrol. */
    dialect: DialectName;
    /** The stack config key that holds the bearer token (`widgets:token`); read in the provider process. */
    tokenConfig?: string;
    /** The environment variable that holds the token when the config key is not set (`WIDGETS_TOKEN`). */
    tokenEnv?: string;
    /** The generic dialect's options. */
    generic?: GenericDialectInputs;
    /** Google: the version prefix operations are read under (default `/v1`). */
    versionPrefix?: string;
    /** Google: the query parameter that sets the resource's id on create (`widgetId`); required. */
    idParameter?: string;
    /** AWS Cloud Control: the resource type name (`AWS::Logs::LogGroup`). */
    typeName?: string;
    /** AWS Cloud Control: the region requests are signed for (`us-east-1`); credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. */
    region?: string;
}

/** How a resource is found by its natural key when the API chooses its id. */
export interface LookupInputs {
    /** A query added to the collection path; `{key}` stands for the natural key (`filter=name eq '{key}'`). */
    query?: string;
    /** Where the list answer has its items (default: the answer itself when it is a list, else `items`, `value` or `data`). */
    items?: string;
    /**
     * Where a list answer has the URL (or path) of its next page, when there is one: a selector such as
     * `links.next` (default `nextLink`, as Azure and OData page). Every page is read, up to 50.
     */
    next?: string;
}

/** Resolved inputs of a `tasks.AsyncResource`, as `check` returns them. */
export interface AsyncResourceInputs {
    api: ApiInputs;
    /** The collection's path template: `/v1/projects/{project}/widgets`. */
    collectionPath: string;
    /** The item's path template, with `{id}` for the API's id: `/v1/projects/{project}/widgets/{id}`. */
    itemPath: string;
    /** Values of the templates' other placeholders. Changing one replaces the resource. */
    pathParameters: Record<string, string>;
    /** The request body of the create, and of every update. A JSON object. */
    body: Record<string, unknown>;
    /** Where in the body (and in the API's records) the natural key is: a selector such as `name`. */
    naturalKey: string;
    /** The natural key itself, when the body does not carry it (an Azure resource's name is in its URL). */
    key?: string;
    /**
     * Where the API's id is in its records, when the API chooses it (`id`); absent when the natural key
     * is the id (a PUT to the item path, Google's `{resource}Id`, Cloud Control's primary identifier).
     */
    idField?: string;
    lookup?: LookupInputs;
    /** Body properties (top-level names) whose change replaces the resource; the others update it. */
    replaceOnChanges: string[];
    createToken?: string;
    timeouts?: OperationTimeouts;
    /** The resource's customTimeouts option, recorded by the resource class; never a change. */
    customTimeouts?: CustomTimeouts;
    adopt: boolean;
    untaint: boolean;
}

/** Every input field, in the order a refresh records them (the type check keeps the list whole). */
export const ASYNC_RESOURCE_INPUT_KEYS = [
    "api",
    "collectionPath",
    "itemPath",
    "pathParameters",
    "body",
    "naturalKey",
    "key",
    "idField",
    "lookup",
    "replaceOnChanges",
    "createToken",
    "timeouts",
    "customTimeouts",
    "adopt",
    "untaint",
] as const satisfies readonly (keyof AsyncResourceInputs)[];
const everyAsyncInput: ListsEvery<AsyncResourceInputs, (typeof ASYNC_RESOURCE_INPUT_KEYS)[number]> = true;
void everyAsyncInput;

/** What the state adds to the inputs (which `pulumi import` passes back as inputs). */
export const ASYNC_RESOURCE_STATE_KEYS = [
    "stateVersion",
    "resourceId",
    "resource",
    "operation",
    "createKey",
    "keyHeldBy",
    "tainted",
    "taintReason",
] as const satisfies readonly (keyof AsyncResourceOutputs)[];
const everyAsyncField: ListsEvery<
    AsyncResourceOutputs,
    (typeof ASYNC_RESOURCE_INPUT_KEYS)[number] | (typeof ASYNC_RESOURCE_STATE_KEYS)[number]
> = true;
void everyAsyncField;

/** An operation whose end was not seen: recorded so the next `up` follows it on. */
export interface PendingOperation {
    readonly write: WriteKind;
    readonly kind: string;
    readonly ref: string;
}

/** State of a `tasks.AsyncResource`. */
export interface AsyncResourceOutputs extends AsyncResourceInputs {
    /** The shape of this state (shared/stateShape.ts); absent in state written before versions were recorded. */
    stateVersion?: number;
    /** The API's id of the resource, once known. */
    resourceId?: string;
    /** The resource as the API last answered it. */
    resource?: unknown;
    /** An operation of ours whose end was not seen. */
    operation?: PendingOperation;
    /**
     * The key a create of unknown outcome was sent with when the program gave no createToken: the next
     * up, or a delete, replays it, so what that create made is found even before a lookup shows it.
     */
    createKey?: string;
    /**
     * The id of what already held the natural key when a create of unknown end was sent (someone else's,
     * unless that create's operation is seen to succeed): until then no refresh records it as this
     * resource and no delete removes it.
     */
    keyHeldBy?: string;
    /** Set when a create did not finish (failed, canceled, timed out): the next `up` replaces it. */
    tainted: boolean;
    taintReason?: string;
}

/** How a resource is named in messages. */
export function describeAsyncResource(inputs: Pick<AsyncResourceInputs, "collectionPath">, key: string): string {
    return `${JSON.stringify(key)} at ${inputs.collectionPath}`;
}
