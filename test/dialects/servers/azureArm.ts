// A local Azure Resource Manager resource provider for issue 19's `azure-arm` dialect: one tracked
// resource type, `Test.Widgets/widgets`, written from the public RPC contract, not from any client:
//
// - Azure/azure-resource-manager-rpc `v1.0/resource-api-reference.md` (commit 69e229f): "Put Resource"
//   (200/201, create and update are one PUT, names matched case-insensitively with the latest casing kept,
//   names and groups from the URL never the body), "Patch Resource" (200 or 202, tags replaced, properties
//   by JSON merge-patch, location immutable, 404 when absent), "Delete Resource" (200 when it existed, 204
//   when it did not, 202 when asynchronous), "Get Resource" (id/name/type, the `{ value }` collection).
// - same repository, `v1.0/async-api-reference.md`: "Creating/Updating using PUT" (201/200 with a
//   non-terminal provisioningState, optional Azure-AsyncOperation, a failed update reverts its properties),
//   "Updating using PATCH" (202 + Location, optional Azure-AsyncOperation, "Updating"), "Delete Resource
//   Asynchronously" (202 + Location, "Deleting", the Location then 200/204 and the resource gone),
//   "ProvisioningState property" (Succeeded/Failed/Canceled terminal, anything else not; a PUT carrying a
//   provisioningState other than the server's is a 400), "202 Accepted and Location Headers" (202 with no
//   body while running, Retry-After in seconds and clients default to 60 s without it, then "the exact
//   same response" as a synchronous call), "Azure-AsyncOperation Resource format" (always 200 while
//   readable; id, name, status, startTime, endTime, percentComplete, error {code, message} required when
//   Failed or Canceled). Both monitor URLs are absolute and carry the api-version, as the contract asks.
// - `v1.0/common-api-details.md`: "Error Response Content" ({ error: { code, message } }), x-ms-request-id.
//
// Where the contract is silent (see the report of issue 19 and the tests beside this file):
// - Operations advance per poll (kit.ts): a GET of the operation status, of the Location monitor, or of the
//   resource itself (a client following a PUT without header polls provisioningState there) is one poll.
// - A Location monitor of a failed operation answers 400 { error }, of a canceled one 409 { error }: a 4xx
//   "exact same response" a synchronous failure would be, never 5xx (clients retry 5xx on monitors).
// - A write while another operation runs on the resource is 409 AnotherOperationInProgress, except the
//   same PUT again (a retry), which joins the running operation, and DELETE again, which gets the same
//   Location. A failed create leaves the resource in provisioningState Failed (it exists: ARM does that).
// - resultLate: the first GET of the resource after its operation ended still shows it as before the end
//   (non-terminal provisioningState, or still present after a delete): a lagging read replica.
//
// Test infrastructure only: nothing here ships in the package.

import { randomUUID } from "node:crypto";
import {
    DEFAULT_OPERATION,
    type DialectServer,
    type Fault,
    type FaultPlan,
    formatRetryAfter,
    type KitRequest,
    type KitResponse,
    type KitStats,
    type OperationPlan,
    type OperationScript,
    startServer,
} from "./kit";

/** The resource provider namespace and type this server hosts. */
export const ARM_NAMESPACE = "Test.Widgets";
export const ARM_TYPE = "Test.Widgets/widgets";
/** The api-version it supports unless told otherwise. */
export const ARM_API_VERSION = "2024-01-01";

/** The path of a widget (no api-version). */
export function armWidgetPath(subscription: string, group: string, name: string): string {
    return `/subscriptions/${subscription}/resourceGroups/${group}/providers/${ARM_NAMESPACE}/widgets/${encodeURIComponent(name)}`;
}

/** Options of `startAzureArmServer`. */
export interface AzureArmServerOptions {
    faults?: FaultPlan;
    operations?: OperationPlan;
    /** The bearer token; default "test-token". */
    token?: string;
    /** Supported api-versions; default [ARM_API_VERSION]. */
    apiVersions?: readonly string[];
    /** Every PUT completes in its answer (200/201 with a terminal provisioningState), whatever the plan says. */
    synchronousPut?: boolean;
    /** A long-running PUT names its Azure-AsyncOperation (default true); without, clients poll the resource. */
    putAsyncOperationHeader?: boolean;
    /** Which non-terminal answers carry Retry-After: every one, none, or every other one of an operation (default). */
    retryAfter?: "always" | "never" | "alternate";
    /** The Retry-After seconds; default 10, the contract's minimum. */
    retryAfterSeconds?: number;
    /** What a Location monitor of a finished delete answers: 200 or 204 (default, as the contract's example flow). */
    deleteFinalStatus?: 200 | 204;
    /** For startTime/endTime only; default Date.now. */
    clock?: () => number;
    port?: number;
}

/** A running ARM server: the kit's DialectServer plus the harness's own statistics. */
export interface AzureArmServer extends DialectServer {
    readonly stats: () => KitStats;
    /** The operations started so far, oldest first (for assertions on what a client made the server do). */
    readonly operations: () => ReadonlyArray<{ id: string; kind: OperationKind; status: string; polls: number }>;
}

type OperationKind = "create" | "update" | "delete";
type Terminal = "Succeeded" | "Failed" | "Canceled";
type Json = Record<string, unknown>;

interface WidgetState {
    location: string;
    tags: Record<string, string>;
    properties: Json;
}

interface Widget {
    /** subscription/group/name in lower case: ARM matches names case-insensitively. */
    key: string;
    subscription: string;
    group: string;
    name: string;
    /** What GET shows: during an operation, the state it is bringing about. */
    shown: WidgetState;
    /** The state a failed update reverts to. */
    committed: WidgetState;
    provisioningState: string;
    operation?: Operation;
}

interface Operation {
    id: string;
    kind: OperationKind;
    widgetKey: string;
    subscription: string;
    region: string;
    apiVersion: string;
    script: OperationScript;
    polls: number;
    /** Non-terminal answers given, for the Retry-After alternation. */
    answers: number;
    status: "InProgress" | Terminal;
    startTime: string;
    endTime?: string;
    error?: { code: string; message: string };
    /** The canonical body of the PUT that started it: the same PUT again joins it. */
    request?: string;
    /** The resource as it was when the operation ended (the Location monitor's final answer). */
    result?: Json;
}

const SEGMENT = "([^/]+)";
const GROUP_PATH = `^/subscriptions/${SEGMENT}/resourceGroups/${SEGMENT}/providers/Test\\.Widgets/widgets`;
const RESOURCE = new RegExp(`${GROUP_PATH}/${SEGMENT}$`, "i");
const COLLECTION = new RegExp(`${GROUP_PATH}$`, "i");
const MONITOR = new RegExp(
    `^/subscriptions/${SEGMENT}/providers/Test\\.Widgets/locations/${SEGMENT}/(operationStatuses|operationResults)/${SEGMENT}$`,
    "i",
);
const API_VERSION_FORMAT = /^\d{4}-\d{2}-\d{2}(-(preview|alpha|beta|rc|privatepreview))?$/;
const NAME_FORBIDDEN = /[<>%&:\\?/\p{Cc}]/u;

/** Starts an ARM resource provider for `Test.Widgets/widgets` on 127.0.0.1. */
export async function startAzureArmServer(options: AzureArmServerOptions = {}): Promise<AzureArmServer> {
    const token = options.token ?? "test-token";
    const apiVersions = options.apiVersions ?? [ARM_API_VERSION];
    const retryAfterSeconds = options.retryAfterSeconds ?? 10;
    const clock = options.clock ?? Date.now;
    let plan: OperationPlan = options.operations ?? { next: () => ({ ...DEFAULT_OPERATION }) };
    const widgets = new Map<string, Widget>();
    const operations = new Map<string, Operation>();
    /** Resources whose next GET still shows them as before their operation ended (resultLate). */
    const stale = new Map<string, Json>();
    let creates = 0;
    let base = "";

    const view = (widget: Widget): Json => ({
        id: `/subscriptions/${widget.subscription}/resourceGroups/${widget.group}/providers/${ARM_TYPE}/${widget.name}`,
        name: widget.name,
        type: ARM_TYPE,
        location: widget.shown.location,
        tags: { ...widget.shown.tags },
        properties: { ...structuredClone(widget.shown.properties), provisioningState: widget.provisioningState },
    });

    const monitorUrl = (op: Operation, kind: "operationStatuses" | "operationResults"): string =>
        `${base}/subscriptions/${op.subscription}/providers/${ARM_NAMESPACE}/locations/${op.region}/${kind}/${op.id}?api-version=${op.apiVersion}`;

    /** Retry-After on a non-terminal answer of `op`, per the server's mode. */
    const retryAfter = (op: Operation): Record<string, string> => {
        const index = op.answers++;
        const send = options.retryAfter === "always" || (options.retryAfter !== "never" && index % 2 === 0);
        return send ? { "Retry-After": String(retryAfterSeconds) } : {};
    };

    const finish = (op: Operation): void => {
        const outcome: Terminal =
            op.script.outcome === "failed" ? "Failed" : op.script.outcome === "canceled" ? "Canceled" : "Succeeded";
        op.status = outcome;
        op.endTime = new Date(clock()).toISOString();
        const widget = widgets.get(op.widgetKey);
        if (outcome === "Failed") {
            op.error = {
                code: "WidgetOperationFailed",
                message: `The ${op.kind} of widget '${widget?.name ?? op.widgetKey}' failed (the test's operation plan said so). Fix the cause and send the request again.`,
            };
        } else if (outcome === "Canceled") {
            op.error = {
                code: "OperationCanceled",
                message: `The ${op.kind} of widget '${widget?.name ?? op.widgetKey}' was canceled.`,
            };
        }
        if (widget === undefined || widget.operation !== op) return; // removed out of band meanwhile
        if (op.script.resultLate) stale.set(widget.key, view(widget));
        if (op.kind === "delete" && outcome === "Succeeded") {
            widgets.delete(widget.key);
            return;
        }
        if (outcome === "Succeeded") widget.committed = structuredClone(widget.shown);
        else if (op.kind !== "create") widget.shown = structuredClone(widget.committed);
        widget.provisioningState = outcome;
        op.result = view(widget);
    };

    /** One poll of `op`: it ends on its pollsToFinish-th. */
    const poll = (op: Operation): void => {
        if (op.status !== "InProgress") return;
        op.polls++;
        if (op.polls >= op.script.pollsToFinish) {
            finish(op);
            return;
        }
        const widget = widgets.get(op.widgetKey);
        if (widget?.operation === op) {
            widget.provisioningState = { create: "Creating", update: "Updating", delete: "Deleting" }[op.kind];
        }
    };

    const begin = (
        kind: OperationKind,
        widget: Widget,
        apiVersion: string,
        script: OperationScript,
        request?: string,
    ): Operation => {
        const op: Operation = {
            id: randomUUID(),
            kind,
            widgetKey: widget.key,
            subscription: widget.subscription,
            region: widget.shown.location.replace(/\s+/g, "").toLowerCase(),
            apiVersion,
            script,
            polls: 0,
            answers: 0,
            status: "InProgress",
            startTime: new Date(clock()).toISOString(),
            ...(request === undefined ? {} : { request }),
        };
        operations.set(op.id, op);
        widget.operation = op;
        stale.delete(widget.key);
        if (script.pollsToFinish <= 0) finish(op);
        return op;
    };

    const running = (widget: Widget | undefined): Operation | undefined =>
        widget?.operation?.status === "InProgress" ? widget.operation : undefined;

    const busy = (widget: Widget): KitResponse =>
        armError(
            409,
            "AnotherOperationInProgress",
            `Another operation (${widget.operation?.kind}) is in progress on widget '${widget.name}'. Wait for it to finish, then retry.`,
        );

    /** A failed or canceled operation, as a synchronous answer or a Location monitor's final one. */
    const failure = (op: Operation): KitResponse =>
        armError(op.status === "Canceled" ? 409 : 400, op.error?.code ?? "Failed", op.error?.message ?? "Failed.");

    const put = (request: KitRequest, target: Target, apiVersion: string): KitResponse => {
        const existing = widgets.get(target.key);
        const body = requestObject(request);
        if ("status" in body) return body;
        const state = widgetState(body.value, existing, "PUT");
        if ("status" in state) return state;
        const canonical = canonicalJson(state);
        const inFlight = running(existing);
        if (existing && inFlight) {
            if (inFlight.kind === "delete" || inFlight.request !== canonical) return busy(existing);
            // The same PUT again: a retry of the running one, answered as that one was, now on a resource that exists.
            return {
                status: 200,
                headers: { ...asyncHeader(inFlight), ...retryAfter(inFlight) },
                body: view(existing),
            };
        }
        const kind: OperationKind = existing ? "update" : "create";
        const planned = plan.next(kind);
        const script = options.synchronousPut ? { ...planned, pollsToFinish: 0 } : planned;
        let widget = existing;
        if (widget === undefined) {
            widget = {
                key: target.key,
                subscription: target.subscription,
                group: target.group,
                name: target.name,
                shown: state,
                committed: structuredClone(state),
                provisioningState: "Accepted",
            };
            widgets.set(widget.key, widget);
            creates++;
        } else {
            Object.assign(widget, { subscription: target.subscription, group: target.group, name: target.name });
            widget.shown = state;
            widget.provisioningState = "Accepted";
        }
        const op = begin(kind, widget, apiVersion, script, canonical);
        const status = existing ? 200 : 201;
        if (op.status !== "InProgress") return { status, headers: requestId(), body: view(widget) };
        return { status, headers: { ...asyncHeader(op), ...retryAfter(op) }, body: view(widget) };
    };

    const asyncHeader = (op: Operation): Record<string, string> =>
        options.putAsyncOperationHeader === false
            ? {}
            : { "Azure-AsyncOperation": monitorUrl(op, "operationStatuses") };

    const patch = (request: KitRequest, target: Target, apiVersion: string): KitResponse => {
        const widget = widgets.get(target.key);
        if (widget === undefined) return notFound(target);
        if (running(widget)) return busy(widget);
        const body = requestObject(request);
        if ("status" in body) return body;
        const state = widgetState(body.value, widget, "PATCH");
        if ("status" in state) return state;
        widget.shown = state;
        widget.provisioningState = "Updating";
        const op = begin("update", widget, apiVersion, plan.next("update"));
        if (op.status === "Succeeded") return { status: 200, headers: requestId(), body: view(widget) };
        if (op.status !== "InProgress") return failure(op);
        return {
            status: 202,
            headers: {
                ...requestId(),
                Location: monitorUrl(op, "operationResults"),
                "Azure-AsyncOperation": monitorUrl(op, "operationStatuses"),
                ...retryAfter(op),
            },
        };
    };

    const deleteWidget = (target: Target, apiVersion: string): KitResponse => {
        const widget = widgets.get(target.key);
        if (widget === undefined) return { status: 204, headers: requestId() };
        const inFlight = running(widget);
        if (inFlight?.kind === "delete") return accepted(inFlight);
        if (inFlight) return busy(widget);
        widget.provisioningState = "Deleting";
        const op = begin("delete", widget, apiVersion, plan.next("delete"));
        if (op.status === "Succeeded") return { status: 200, headers: requestId() };
        if (op.status !== "InProgress") return failure(op);
        return accepted(op);
    };

    /** 202 with no body, the Location monitor and maybe Retry-After: a delete, or a Location monitor not done. */
    const accepted = (op: Operation): KitResponse => ({
        status: 202,
        headers: { ...requestId(), Location: monitorUrl(op, "operationResults"), ...retryAfter(op) },
    });

    const getWidget = (target: Target): KitResponse => {
        const widget = widgets.get(target.key);
        const inFlight = running(widget);
        if (inFlight) poll(inFlight);
        const before = stale.get(target.key);
        if (before !== undefined) {
            stale.delete(target.key);
            return { status: 200, headers: requestId(), body: before };
        }
        const now = widgets.get(target.key);
        return now === undefined ? notFound(target) : { status: 200, headers: requestId(), body: view(now) };
    };

    const monitor = (subscription: string, kind: string, id: string): KitResponse => {
        const op = operations.get(id.toLowerCase());
        if (op === undefined || op.subscription.toLowerCase() !== subscription.toLowerCase()) {
            return armError(404, "OperationNotFound", `There is no operation '${id}' in this subscription.`);
        }
        poll(op);
        if (kind.toLowerCase() === "operationstatuses") {
            const body: Json = {
                id: `/subscriptions/${op.subscription}/providers/${ARM_NAMESPACE}/locations/${op.region}/operationStatuses/${op.id}`,
                name: op.id,
                status: op.status,
                startTime: op.startTime,
                percentComplete:
                    op.status === "InProgress"
                        ? Math.floor((100 * op.polls) / Math.max(1, op.script.pollsToFinish))
                        : 100,
            };
            if (op.endTime) body.endTime = op.endTime;
            if (op.error) body.error = { ...op.error };
            const headers = op.status === "InProgress" ? { ...requestId(), ...retryAfter(op) } : requestId();
            return { status: 200, headers, body };
        }
        if (op.status === "InProgress") return accepted(op);
        if (op.status !== "Succeeded") return failure(op);
        if (op.kind === "delete") return { status: options.deleteFinalStatus ?? 204, headers: requestId() };
        return { status: 200, headers: requestId(), body: op.result };
    };

    const list = (subscription: string, group: string): KitResponse => {
        const prefix = `${subscription}/${group}/`.toLowerCase();
        const value = [...widgets.values()].filter((widget) => widget.key.startsWith(prefix)).map(view);
        return { status: 200, headers: requestId(), body: { value } };
    };

    const handler = (request: KitRequest): KitResponse => {
        const version = request.query.get("api-version");
        if (version === null || version === "") {
            return armError(
                400,
                "MissingApiVersionParameter",
                "The api-version query parameter (?api-version=) is required for all requests.",
            );
        }
        if (!API_VERSION_FORMAT.test(version)) {
            return armError(
                400,
                "InvalidApiVersionParameter",
                `The api-version '${version}' is invalid. The supported versions are '${apiVersions.join(",")}'.`,
            );
        }
        if (!apiVersions.includes(version)) {
            return armError(
                400,
                "NoRegisteredProviderFound",
                `No registered resource provider found for API version '${version}' and type '${ARM_TYPE}'. The supported api-versions are '${apiVersions.join(", ")}'.`,
            );
        }
        const monitorMatch = MONITOR.exec(request.path);
        if (monitorMatch) return monitor(decode(monitorMatch[1]), monitorMatch[3] ?? "", decode(monitorMatch[4]));
        const collection = COLLECTION.exec(request.path);
        if (collection) return list(decode(collection[1]), decode(collection[2]));
        const target = parseTarget(request.path);
        if (target === undefined) return armError(404, "NotFound", `${request.path} is not part of this API.`);
        if ("status" in target) return target;
        switch (request.method) {
            case "PUT":
                return put(request, target, version);
            case "PATCH":
                return patch(request, target, version);
            case "DELETE":
                return deleteWidget(target, version);
            default:
                return getWidget(target);
        }
    };

    const classify = (method: string, path: string): string | undefined => {
        if (MONITOR.test(path)) return method === "GET" ? "poll" : undefined;
        if (COLLECTION.test(path)) return method === "GET" ? "list" : undefined;
        const target = parseTarget(path);
        if (target === undefined) return undefined;
        const key = "key" in target ? target.key : undefined;
        switch (method) {
            case "PUT":
                return key !== undefined && widgets.has(key) ? "update" : "create";
            case "PATCH":
                return "update";
            case "DELETE":
                return "delete";
            case "GET":
                return "get";
            default:
                return undefined;
        }
    };

    const kit = await startServer({
        handler,
        classify,
        renderThrottle: (fault) => throttled(fault, clock()),
        authenticate: (request) => {
            const header = request.headers.authorization ?? "";
            return /^bearer /i.test(header) && header.slice(7) === token;
        },
        unauthorized: () => ({
            ...armError(
                401,
                "AuthenticationFailed",
                "Authentication failed. The 'Authorization' header is missing or its bearer token is not valid.",
            ),
            headers: { ...requestId(), "WWW-Authenticate": 'Bearer authorization_uri="https://login.invalid/"' },
        }),
        renderError: (status, detail) => armError(status, kitErrorCode(status), detail),
        faults: options.faults,
        port: options.port,
    });
    base = kit.url;

    const find = (id: string): Widget => {
        const byId = RESOURCE.exec(id.split("?")[0] ?? "");
        const key = byId
            ? `${decode(byId[1])}/${decode(byId[2])}/${decode(byId[3])}`.toLowerCase()
            : [...widgets.keys()].find((candidate) => candidate.endsWith(`/${id.toLowerCase()}`));
        const widget = key === undefined ? undefined : widgets.get(key);
        if (widget === undefined) throw new Error(`azureArm server: no widget '${id}' (give its ARM id or its name).`);
        return widget;
    };

    return {
        url: kit.url,
        counts: () => {
            const stats = kit.stats();
            return {
                creates,
                duplicates: 0, // a PUT to an existing name is an update: ARM cannot make a second one
                live: widgets.size,
                requests: stats.requests,
                faultsInjected: stats.faultsInjected,
                requestsOutsideApi: stats.requestsOutsideApi,
                unauthorized: stats.unauthorized,
            };
        },
        resources: () => [...widgets.values()].map(view),
        stats: () => kit.stats(),
        operations: () =>
            [...operations.values()].map((op) => ({ id: op.id, kind: op.kind, status: op.status, polls: op.polls })),
        setFaults: (faults) => kit.setFaults(faults),
        setOperations: (operationPlan) => {
            plan = operationPlan;
        },
        /** A JSON merge-patch (RFC 7396) of the widget as GET shows it; `properties.provisioningState` too. */
        mutate(id, change) {
            const widget = find(id);
            for (const field of ["id", "name", "type"]) {
                if (field in change) throw new Error(`azureArm server: mutate cannot change '${field}' of '${id}'.`);
            }
            const merged = mergePatch(view(widget), change) as Json;
            const properties = { ...((merged.properties as Json | undefined) ?? {}) };
            if (typeof properties.provisioningState === "string")
                widget.provisioningState = properties.provisioningState;
            delete properties.provisioningState;
            widget.shown = {
                location: String(merged.location ?? widget.shown.location),
                tags: (merged.tags as Record<string, string> | undefined) ?? {},
                properties,
            };
            widget.committed = structuredClone(widget.shown);
            stale.delete(widget.key);
        },
        remove(id) {
            const widget = find(id);
            widgets.delete(widget.key);
            stale.delete(widget.key);
        },
        close: () => kit.close(),
    };
}

interface Target {
    key: string;
    subscription: string;
    group: string;
    name: string;
}

/** The widget a path names; undefined when it is no widget path, a 400 answer when its name is not valid. */
function parseTarget(path: string): Target | KitResponse | undefined {
    const match = RESOURCE.exec(path);
    if (!match) return undefined;
    const subscription = decode(match[1]);
    const group = decode(match[2]);
    const name = decode(match[3]);
    if (name.length === 0 || name.length > 260 || NAME_FORBIDDEN.test(name)) {
        return armError(
            400,
            "InvalidResourceName",
            `The resource name '${name}' is not valid: at most 260 characters, none of < > % & : \\ ? / or control characters.`,
        );
    }
    return { key: `${subscription}/${group}/${name}`.toLowerCase(), subscription, group, name };
}

/** The JSON object a write carries, or the 4xx that says why there is none. */
function requestObject(request: KitRequest): { value: Json } | KitResponse {
    if (request.body === undefined && request.rawBody.length > 0) {
        return armError(415, "UnsupportedMediaType", "The request body must be JSON (Content-Type: application/json).");
    }
    if (typeof request.body !== "object" || request.body === null || Array.isArray(request.body)) {
        return armError(400, "InvalidRequestContent", "The request body must be a JSON object.");
    }
    return { value: request.body as Json };
}

/**
 * The state a PUT (whole) or PATCH (tags replaced, properties merge-patched) brings the widget to, or
 * the 400 that refuses it. id, name and type in the body are ignored: they come from the URL.
 */
function widgetState(body: Json, existing: Widget | undefined, method: "PUT" | "PATCH"): WidgetState | KitResponse {
    const location = body.location;
    if (location !== undefined && (typeof location !== "string" || location.trim() === "")) {
        return armError(400, "InvalidRequestContent", "'location' must be a non-empty string.");
    }
    if (existing === undefined && location === undefined) {
        return armError(400, "LocationRequired", "The location property is required for this definition.");
    }
    if (existing && location !== undefined && region(location) !== region(existing.shown.location)) {
        return armError(
            400,
            "LocationCannotBeChanged",
            `Widget '${existing.name}' is in '${existing.shown.location}'; its location cannot change to '${location}'.`,
        );
    }
    const tags = body.tags;
    if (
        tags !== undefined &&
        (typeof tags !== "object" ||
            tags === null ||
            Array.isArray(tags) ||
            Object.values(tags).some((v) => typeof v !== "string"))
    ) {
        return armError(400, "InvalidRequestContent", "'tags' must be an object of strings.");
    }
    const properties = body.properties;
    if (
        properties !== undefined &&
        (typeof properties !== "object" || properties === null || Array.isArray(properties))
    ) {
        return armError(400, "InvalidRequestContent", "'properties' must be an object.");
    }
    const given = (properties as Json | undefined)?.provisioningState;
    if (given !== undefined && given !== existing?.provisioningState) {
        return armError(
            400,
            "InvalidRequestContent",
            `'properties.provisioningState' is read-only: '${String(given)}' is not the widget's current state (${existing?.provisioningState ?? "it does not exist"}).`,
        );
    }
    const { provisioningState: _ignored, ...rest } = (properties as Json | undefined) ?? {};
    const before = existing?.shown;
    return {
        location: before?.location ?? (location as string),
        tags: (tags as Record<string, string> | undefined) ?? (method === "PATCH" && before ? { ...before.tags } : {}),
        properties:
            method === "PATCH" && before
                ? (mergePatch(structuredClone(before.properties), rest) as Json)
                : structuredClone(rest),
    };
}

/** RFC 7396 JSON merge-patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
    if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
    const result: Json =
        typeof target === "object" && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
    for (const [key, value] of Object.entries(patch)) {
        if (value === null) delete result[key];
        else result[key] = mergePatch(result[key], value);
    }
    return result;
}

/** JSON with sorted keys, so two bodies that mean the same compare equal. */
function canonicalJson(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
    if (typeof value === "object" && value !== null) {
        const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
    }
    return JSON.stringify(value);
}

function region(location: string): string {
    return location.replace(/\s+/g, "").toLowerCase();
}

function decode(segment: string | undefined): string {
    try {
        return decodeURIComponent(segment ?? "");
    } catch {
        return segment ?? "";
    }
}

function requestId(): Record<string, string> {
    return { "x-ms-request-id": randomUUID() };
}

function notFound(target: Target): KitResponse {
    return armError(
        404,
        "ResourceNotFound",
        `The Resource '${ARM_TYPE}/${target.name}' under resource group '${target.group}' was not found.`,
    );
}

/** An ARM error answer: { error: { code, message } } (common-api-details.md, "Error Response Content"). */
function armError(status: number, code: string, message: string): KitResponse {
    return { status, headers: requestId(), body: { error: { code, message } } };
}

function kitErrorCode(status: number): string {
    if (status === 400) return "InvalidRequestContent";
    if (status === 404) return "NotFound";
    if (status === 413) return "RequestEntityTooLarge";
    return status === 500 ? "InternalServerError" : status === 503 ? "ServiceUnavailable" : "GatewayError";
}

/**
 * ARM throttling: 429 with Retry-After. The contract knows only delay-seconds; an HTTP date is sent when
 * the fault asks for one (a gateway may), and a body hint does not exist in ARM, so "body" sends none.
 */
function throttled(fault: Extract<Fault, { kind: "throttle" }>, now: number): KitResponse {
    const answer = armError(
        429,
        "TooManyRequests",
        "The request was throttled: too many requests for this subscription. Retry after the time in Retry-After.",
    );
    if (fault.hint === "seconds" || fault.hint === "http-date") {
        answer.headers = { ...answer.headers, "Retry-After": formatRetryAfter(fault.seconds, fault.hint, now) };
    }
    return answer;
}
