// A Google API (AIP) widget service with long-running operations, written from the public contract:
// - googleapis `google/longrunning/operations.proto`: Operation {name, metadata (Any), done, oneof
//   result {error (google.rpc.Status), response (Any)}}; GetOperation `GET /v1/{name=operations/**}`,
//   ListOperations, DeleteOperation, CancelOperation `POST /v1/{name=operations/**}:cancel` ("on
//   successful cancellation ... an Operation.error value with a google.rpc.Status.code of 1").
// - googleapis `google/rpc/status.proto` {code, message, details} and `google/rpc/code.proto` (codes and
//   their HTTP mappings: NOT_FOUND 404, ALREADY_EXISTS 409, RESOURCE_EXHAUSTED 429, ABORTED 409, ...).
// - AIP-133 (create: `POST /v1/{parent}/widgets?widgetId=`, the id optional here, ALREADY_EXISTS on a
//   taken name; "the service may return an LRO that is already set to done"), AIP-134 (update: PATCH
//   with `updateMask`, omitted = the populated fields, `*` = replace), AIP-135 (delete: NOT_FOUND when
//   missing unless `allowMissing`; the LRO resolves to google.protobuf.Empty), AIP-151 (a resource being
//   created or deleted is listed and readable, with a state saying it is not usable; one operation at a
//   time per resource, else ABORTED), AIP-155 (`requestId`: a duplicate gets the response of the earlier
//   successful request), AIP-193 (errors as `{"error": {code: <HTTP status>, message, status, details}}`).
// - The proto3 JSON mapping: fields at their default are omitted, so a running Operation has no `done`
//   at all and an empty list is `{}` (the `emitDefaults` option shows `done: false` instead).
//
// Where the contract is silent (decisions): requestId must be a UUID (AIP-155 allows UUID-only) and is
// remembered for the server's lifetime; a request id reused with another method or resource is
// INVALID_ARGUMENT, with the same method and resource the earlier Operation comes back whatever the body;
// a throttled request gets 429 RESOURCE_EXHAUSTED and never a Retry-After header (hint "body" adds a
// google.rpc.RetryInfo detail, every other hint none); an operation the plan fails ends with
// `operationError` (default INTERNAL, 13); cancelling a done operation changes nothing; `resultLate`
// hides a created widget until one GET after its operation is done. Operations advance only when polled,
// or when a write is refused ABORTED because of them (the time the refused caller waits).
//
// Test infrastructure only: nothing here ships in the package.

import { randomUUID } from "node:crypto";
import {
    type DialectServer,
    type Fault,
    type FaultPlan,
    fixedOperations,
    type KitRequest,
    type KitResponse,
    noFaults,
    type OperationPlan,
    type OperationScript,
    type ServerCounts,
    startServer,
} from "./kit";

export interface GoogleAipServerOptions {
    faults?: FaultPlan;
    operations?: OperationPlan;
    /** The bearer token every request must carry; default "test-token". */
    token?: string;
    /** The server's clock (createTime, updateTime, metadata), in ms; default Date.now. */
    now?: () => number;
    /** The field two live widgets must not share for the second to count as a duplicate; default "displayName". */
    naturalKey?: string;
    /** The google.rpc.Status of an operation the plan fails; default INTERNAL (13). */
    operationError?: { code: number; message: string };
    /** Emit `done: false` on running operations (proto3 JSON omits it by default). */
    emitDefaults?: boolean;
}

/** The Google dialect's server, with a look at its operations that does not advance them. */
export interface GoogleAipServer extends DialectServer {
    operations(): ReadonlyArray<Record<string, unknown>>;
}

/** google.rpc.Code names and numbers, and the HTTP status each maps to (code.proto). */
export const RPC_CODES = {
    CANCELLED: [1, 499],
    INVALID_ARGUMENT: [3, 400],
    NOT_FOUND: [5, 404],
    ALREADY_EXISTS: [6, 409],
    RESOURCE_EXHAUSTED: [8, 429],
    FAILED_PRECONDITION: [9, 400],
    ABORTED: [10, 409],
    UNIMPLEMENTED: [12, 501],
    INTERNAL: [13, 500],
    UNAVAILABLE: [14, 503],
    DEADLINE_EXCEEDED: [4, 504],
    UNAUTHENTICATED: [16, 401],
} as const;
type RpcCode = keyof typeof RPC_CODES;

const DOMAIN = "testwidgets.googleapis.com";
const WIDGET_TYPE = "type.googleapis.com/test.widgets.v1.Widget";
const METADATA_TYPE = "type.googleapis.com/test.widgets.v1.OperationMetadata";
const EMPTY_TYPE = "type.googleapis.com/google.protobuf.Empty";
const OUTPUT_ONLY = new Set(["name", "state", "createTime", "updateTime"]);
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const WIDGET_ID = /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;
const PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/(widgets|operations)(?:\/([^/:]+)(?::([a-zA-Z]+))?)?$/;

type Verb = "create" | "update" | "delete";
type State = "CREATING" | "ACTIVE" | "UPDATING" | "DELETING";

interface Widget {
    name: string;
    fields: Record<string, unknown>;
    state: State;
    createTime: string;
    updateTime: string;
    /** resultLate: not readable until its create is done, then for one more GET. */
    hiddenUntilDone: boolean;
    hiddenGets: number;
}

interface Status {
    code: number;
    message: string;
    details?: unknown[];
}

interface Operation {
    name: string;
    verb: Verb;
    target: string;
    script: OperationScript;
    polls: number;
    done: boolean;
    error?: Status;
    response?: Record<string, unknown>;
    createTime: string;
    endTime?: string;
    requestedCancellation: boolean;
    /** The fields an update writes when it succeeds. */
    update?: Record<string, unknown>;
}

interface Route {
    operation: string;
    parent: string;
    collection: "widgets" | "operations";
    id?: string;
}

/** The google.rpc.Status error body of an HTTP answer (AIP-193), with the required ErrorInfo. */
export function rpcError(status: RpcCode, message: string, extraDetails: unknown[] = []): KitResponse {
    const [, http] = RPC_CODES[status];
    return {
        status: http,
        body: {
            error: {
                code: http,
                message,
                status,
                details: [
                    { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: status, domain: DOMAIN },
                    ...extraDetails,
                ],
            },
        },
    };
}

function route(method: string, path: string): Route | undefined {
    const match = PATH.exec(path);
    if (match === null) return undefined;
    const [, project = "", location = "", collection, rawId, verb] = match;
    let id: string | undefined;
    let parent: string;
    try {
        parent = `projects/${decodeURIComponent(project)}/locations/${decodeURIComponent(location)}`;
        id = rawId === undefined ? undefined : decodeURIComponent(rawId);
    } catch {
        return undefined;
    }
    const kind = collection === "widgets" ? "widgets" : "operations";
    const operation = operationOf(method, kind, id !== undefined, verb);
    return operation === undefined ? undefined : { operation, parent, collection: kind, id };
}

function operationOf(method: string, collection: string, hasId: boolean, verb: string | undefined): string | undefined {
    const key = `${method} ${collection}${hasId ? "/id" : ""}${verb === undefined ? "" : `:${verb}`}`;
    const table: Record<string, string> = {
        "POST widgets": "create",
        "GET widgets": "list",
        "GET widgets/id": "get",
        "PATCH widgets/id": "update",
        "DELETE widgets/id": "delete",
        "GET operations": "list-operations",
        "GET operations/id": "poll",
        "DELETE operations/id": "delete-operation",
        "POST operations/id:cancel": "cancel",
    };
    return table[key];
}

/** Starts the Google AIP widget server on 127.0.0.1 (a free port unless `port` is given). */
export async function startGoogleAipServer(
    options: GoogleAipServerOptions & { port?: number } = {},
): Promise<GoogleAipServer> {
    const token = options.token ?? "test-token";
    const now = options.now ?? Date.now;
    const naturalKey = options.naturalKey ?? "displayName";
    const operationError = options.operationError ?? {
        code: RPC_CODES.INTERNAL[0],
        message: "The widget service failed the operation (the test server's operation plan).",
    };
    let plan = options.operations ?? fixedOperations({});
    const widgets = new Map<string, Widget>();
    const operations = new Map<string, Operation>();
    const requestIds = new Map<string, { method: string; target: string; operation: string }>();
    const counts = { creates: 0, duplicates: 0 };
    const timestamp = () => new Date(now()).toISOString();

    const widgetView = (widget: Widget): Record<string, unknown> => ({
        name: widget.name,
        ...widget.fields,
        state: widget.state,
        createTime: widget.createTime,
        updateTime: widget.updateTime,
    });

    const operationView = (operation: Operation): Record<string, unknown> => {
        const metadata: Record<string, unknown> = {
            "@type": METADATA_TYPE,
            createTime: operation.createTime,
            ...(operation.endTime === undefined ? {} : { endTime: operation.endTime }),
            target: operation.target,
            verb: operation.verb,
            apiVersion: "v1",
        };
        if (operation.requestedCancellation || options.emitDefaults) {
            metadata.requestedCancellation = operation.requestedCancellation;
        }
        const view: Record<string, unknown> = { name: operation.name, metadata };
        if (operation.done) view.done = true;
        else if (options.emitDefaults) view.done = false;
        if (operation.error !== undefined) view.error = operation.error;
        if (operation.response !== undefined) view.response = operation.response;
        return view;
    };

    /** Ends an operation: the effect happens (succeeded) or is undone (failed, canceled). */
    const finish = (operation: Operation, outcome: OperationScript["outcome"]): void => {
        operation.done = true;
        operation.endTime = timestamp();
        const widget = widgets.get(operation.target);
        if (outcome !== "succeeded") {
            operation.error =
                outcome === "canceled"
                    ? { code: RPC_CODES.CANCELLED[0], message: "Operation was cancelled." }
                    : { ...operationError };
            if (widget === undefined) return;
            if (operation.verb === "create") widgets.delete(widget.name);
            else widget.state = "ACTIVE";
            return;
        }
        if (operation.verb === "delete") {
            widgets.delete(operation.target);
            operation.response = { "@type": EMPTY_TYPE };
            return;
        }
        if (widget === undefined) {
            operation.error = {
                code: RPC_CODES.ABORTED[0],
                message: `The widget ${operation.target} was deleted while the ${operation.verb} was running.`,
            };
            return;
        }
        if (operation.verb === "create") {
            counts.creates++;
            const key = widget.fields[naturalKey];
            const twin = [...widgets.values()].some(
                (other) =>
                    other !== widget &&
                    key !== undefined &&
                    other.state !== "CREATING" &&
                    other.fields[naturalKey] === key,
            );
            if (twin) counts.duplicates++;
            if (widget.hiddenUntilDone) {
                widget.hiddenUntilDone = false;
                widget.hiddenGets = 1;
            }
        }
        if (operation.update !== undefined) widget.fields = operation.update;
        widget.state = "ACTIVE";
        widget.updateTime = operation.endTime;
        operation.response = { "@type": WIDGET_TYPE, ...widgetView(widget) };
    };

    const begin = (verb: Verb, target: string, parent: string, update?: Record<string, unknown>): Operation => {
        const script = plan.next(verb);
        const operation: Operation = {
            name: `${parent}/operations/operation-${randomUUID()}`,
            verb,
            target,
            script,
            polls: 0,
            done: false,
            createTime: timestamp(),
            requestedCancellation: false,
            update,
        };
        operations.set(operation.name, operation);
        return operation;
    };

    /** AIP-133: "the service may return an LRO that is already set to done" (a plan of 0 polls). */
    const settleAtOnce = (operation: Operation): Operation => {
        if (operation.script.pollsToFinish <= 0) finish(operation, operation.script.outcome);
        return operation;
    };

    /** AIP-155: the earlier Operation of this request id, an error for a misuse, or undefined (new). */
    const replay = (request: KitRequest, target: string): KitResponse | undefined => {
        const requestId = request.query.get("requestId");
        if (requestId === null) return undefined;
        if (!UUID.test(requestId)) {
            return rpcError("INVALID_ARGUMENT", `requestId must be a UUID (36 characters), got "${requestId}".`);
        }
        const earlier = requestIds.get(requestId);
        if (earlier === undefined) return undefined;
        if (earlier.method !== request.method || earlier.target !== target) {
            return rpcError(
                "INVALID_ARGUMENT",
                `requestId ${requestId} was already used for ${earlier.method} ${earlier.target}: use a new UUID for another request.`,
            );
        }
        const operation = operations.get(earlier.operation);
        return operation === undefined
            ? rpcError("NOT_FOUND", `The operation of requestId ${requestId} was deleted.`)
            : { status: 200, body: operationView(operation) };
    };

    const remember = (request: KitRequest, target: string, operation: Operation): KitResponse => {
        const requestId = request.query.get("requestId");
        if (requestId !== null)
            requestIds.set(requestId, { method: request.method, target, operation: operation.name });
        return { status: 200, body: operationView(operation) };
    };

    const readable = (widget: Widget | undefined, consume: boolean): widget is Widget => {
        if (widget === undefined || widget.hiddenUntilDone) return false;
        if (widget.hiddenGets > 0) {
            if (consume) widget.hiddenGets--;
            return false;
        }
        return true;
    };

    const userFields = (body: unknown): Record<string, unknown> | string => {
        if (body === null || typeof body !== "object" || Array.isArray(body))
            return "The request body must be a Widget (a JSON object).";
        const fields: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(body)) if (!OUTPUT_ONLY.has(key)) fields[key] = value;
        return fields;
    };

    const create = (request: KitRequest, parent: string): KitResponse => {
        const fields = userFields(request.body);
        if (typeof fields === "string") return rpcError("INVALID_ARGUMENT", fields);
        const widgetId = request.query.get("widgetId") ?? `w${randomUUID().replace(/-/g, "").slice(0, 20)}`;
        if (!WIDGET_ID.test(widgetId)) {
            return rpcError(
                "INVALID_ARGUMENT",
                `widgetId "${widgetId}" is invalid: 1-63 characters of a-z, 0-9 and -, starting with a letter and not ending with -.`,
            );
        }
        const name = `${parent}/widgets/${widgetId}`;
        // The request as addressed: with a generated id, a repeat names no widget either.
        const addressed = `${parent}/widgets?widgetId=${request.query.get("widgetId") ?? ""}`;
        const earlier = replay(request, addressed);
        if (earlier !== undefined) return earlier;
        if (widgets.has(name)) return rpcError("ALREADY_EXISTS", `Widget ${name} already exists.`);
        const operation = begin("create", name, parent);
        widgets.set(name, {
            name,
            fields,
            state: "CREATING",
            createTime: operation.createTime,
            updateTime: operation.createTime,
            hiddenUntilDone: operation.script.resultLate === true,
            hiddenGets: 0,
        });
        return remember(request, addressed, settleAtOnce(operation));
    };

    /**
     * ABORTED: one operation at a time per resource (AIP-151). The refusal is a step of the operation
     * running on it, as if the time the caller waited had passed: operations advance only when asked
     * about, and one a client is waiting out (a delete whose answer was lost) must end too.
     */
    const aborted = (name: string, state: string): KitResponse => {
        const running = [...operations.values()].find((operation) => operation.target === name && !operation.done);
        if (running) {
            running.polls++;
            if (running.polls >= running.script.pollsToFinish) finish(running, running.script.outcome);
        }
        return rpcError("ABORTED", `Widget ${name} is ${state}: wait for its running operation to finish, then retry.`);
    };

    const update = (request: KitRequest, name: string): KitResponse => {
        const fields = userFields(request.body);
        if (typeof fields === "string") return rpcError("INVALID_ARGUMENT", fields);
        const earlier = replay(request, name);
        if (earlier !== undefined) return earlier;
        const widget = widgets.get(name);
        if (widget === undefined) return rpcError("NOT_FOUND", `Widget ${name} was not found.`);
        if (widget.state !== "ACTIVE") return aborted(name, widget.state);
        const mask = request.query.get("updateMask");
        const next = applyMask(widget.fields, fields, mask);
        if (typeof next === "string") return rpcError("INVALID_ARGUMENT", next);
        widget.state = "UPDATING";
        const parent = name.slice(0, name.indexOf("/widgets/"));
        return remember(request, name, settleAtOnce(begin("update", name, parent, next)));
    };

    const remove = (request: KitRequest, name: string): KitResponse => {
        const earlier = replay(request, name);
        if (earlier !== undefined) return earlier;
        const widget = widgets.get(name);
        const parent = name.slice(0, name.indexOf("/widgets/"));
        if (widget === undefined) {
            if (request.query.get("allowMissing") !== "true")
                return rpcError("NOT_FOUND", `Widget ${name} was not found.`);
            const operation: Operation = {
                name: `${parent}/operations/operation-${randomUUID()}`,
                verb: "delete",
                target: name,
                script: { pollsToFinish: 0, outcome: "succeeded" },
                polls: 0,
                done: true,
                response: { "@type": EMPTY_TYPE },
                createTime: timestamp(),
                endTime: timestamp(),
                requestedCancellation: false,
            };
            operations.set(operation.name, operation);
            return remember(request, name, operation);
        }
        if (widget.state !== "ACTIVE") return aborted(name, widget.state);
        widget.state = "DELETING";
        return remember(request, name, settleAtOnce(begin("delete", name, parent)));
    };

    const handle = (request: KitRequest): KitResponse => {
        const found = route(request.method, request.path);
        if (found === undefined)
            return rpcError("NOT_FOUND", `${request.method} ${request.path} is not part of this API.`);
        const name = `${found.parent}/${found.collection}/${found.id ?? ""}`;
        switch (found.operation) {
            case "create":
                return create(request, found.parent);
            case "update":
                return update(request, name);
            case "delete":
                return remove(request, name);
            case "get": {
                const widget = widgets.get(name);
                if (!readable(widget, true)) return rpcError("NOT_FOUND", `Widget ${name} was not found.`);
                return { status: 200, body: widgetView(widget) };
            }
            case "list":
                return list(
                    request,
                    [...widgets.values()]
                        .filter((widget) => widget.name.startsWith(`${found.parent}/`) && readable(widget, false))
                        .map(widgetView),
                    "widgets",
                );
            case "list-operations":
                return list(
                    request,
                    [...operations.values()]
                        .filter((operation) => operation.name.startsWith(`${found.parent}/`))
                        .map(operationView),
                    "operations",
                );
            case "poll": {
                const operation = operations.get(name);
                if (operation === undefined) return rpcError("NOT_FOUND", `Operation ${name} was not found.`);
                if (!operation.done) {
                    operation.polls++;
                    if (operation.polls >= operation.script.pollsToFinish) finish(operation, operation.script.outcome);
                }
                return { status: 200, body: operationView(operation) };
            }
            case "cancel": {
                const operation = operations.get(name);
                if (operation === undefined) return rpcError("NOT_FOUND", `Operation ${name} was not found.`);
                if (!operation.done) {
                    operation.requestedCancellation = true;
                    finish(operation, "canceled");
                }
                return { status: 200, body: {} };
            }
            case "delete-operation":
                if (!operations.delete(name)) return rpcError("NOT_FOUND", `Operation ${name} was not found.`);
                return { status: 200, body: {} };
            default:
                return rpcError("UNIMPLEMENTED", `${found.operation} is not implemented.`);
        }
    };

    const kit = await startServer({
        port: options.port,
        faults: options.faults ?? noFaults(),
        classify: (method, path) => route(method, path)?.operation,
        authenticate: (request) => request.headers.authorization === `Bearer ${token}`,
        unauthorized: () => {
            const answer = rpcError(
                "UNAUTHENTICATED",
                "Request had invalid authentication credentials. Expected an OAuth 2 access token as 'Authorization: Bearer <token>'.",
            );
            return { ...answer, headers: { "www-authenticate": 'Bearer realm="testwidgets"' } };
        },
        renderThrottle: (fault: Extract<Fault, { kind: "throttle" }>) =>
            rpcError(
                "RESOURCE_EXHAUSTED",
                "Quota exceeded for quota metric 'Write requests' of service 'testwidgets.googleapis.com'.",
                fault.hint === "body"
                    ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${fault.seconds}s` }]
                    : [],
            ),
        renderError: (status, detail) => rpcError(codeOfHttp(status), detail),
        handler: handle,
    });

    const find = (id: string): Widget | undefined =>
        widgets.get(id) ?? [...widgets.values()].find((widget) => widget.name.endsWith(`/widgets/${id}`));

    return {
        url: kit.url,
        counts: (): ServerCounts => {
            const stats = kit.stats();
            return {
                creates: counts.creates,
                duplicates: counts.duplicates,
                live: widgets.size,
                requests: stats.requests,
                faultsInjected: stats.faultsInjected,
                requestsOutsideApi: stats.requestsOutsideApi,
                unauthorized: stats.unauthorized,
            };
        },
        resources: () => [...widgets.values()].map(widgetView),
        operations: () => [...operations.values()].map(operationView),
        setFaults: (faults) => kit.setFaults(faults),
        setOperations: (next) => {
            plan = next;
        },
        mutate: (id, change) => {
            const widget = find(id);
            if (widget === undefined) throw new Error(`mutate: no widget ${id} on the Google AIP server.`);
            const fields = { ...widget.fields };
            for (const [key, value] of Object.entries(change)) if (!OUTPUT_ONLY.has(key)) fields[key] = value;
            widget.fields = fields;
            widget.updateTime = timestamp();
        },
        remove: (id) => {
            const widget = find(id);
            if (widget !== undefined) widgets.delete(widget.name);
        },
        close: () => kit.close(),
    };
}

function codeOfHttp(status: number): RpcCode {
    if (status === 404) return "NOT_FOUND";
    if (status === 400 || status === 413) return "INVALID_ARGUMENT";
    if (status === 504) return "DEADLINE_EXCEEDED";
    if (status === 502 || status === 503) return "UNAVAILABLE";
    return "INTERNAL";
}

function list(request: KitRequest, items: Record<string, unknown>[], field: string): KitResponse {
    const size = Number(request.query.get("pageSize") ?? "0");
    const start = Number(request.query.get("pageToken") ?? "0");
    if (!Number.isInteger(size) || size < 0 || !Number.isInteger(start) || start < 0) {
        return rpcError("INVALID_ARGUMENT", "pageSize and pageToken must be what the previous page said.");
    }
    const end = size === 0 ? items.length : start + size;
    const body: Record<string, unknown> = {};
    const page = items.slice(start, end);
    if (page.length > 0) body[field] = page;
    if (end < items.length) body.nextPageToken = String(end);
    return { status: 200, body };
}

/**
 * AIP-134: the widget's fields after an update. Without a mask every populated field of the body is
 * written; `*` replaces them all; otherwise each path (dotted for nested maps) is copied from the body,
 * and a path the body does not have is cleared. Output-only paths are ignored.
 */
function applyMask(
    current: Record<string, unknown>,
    body: Record<string, unknown>,
    mask: string | null,
): Record<string, unknown> | string {
    if (mask === "*") return { ...body };
    const paths =
        mask === null || mask === ""
            ? Object.keys(body).filter((key) => body[key] !== undefined && body[key] !== null)
            : mask.split(",").map((path) => path.trim());
    const next: Record<string, unknown> = structuredClone(current);
    for (const path of paths) {
        if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)*$/.test(path)) return `updateMask path "${path}" is invalid.`;
        const segments = path.split(".");
        if (OUTPUT_ONLY.has(segments[0] ?? "")) continue;
        const value = segments.reduce<unknown>(
            (node, segment) =>
                node !== null && typeof node === "object" ? (node as Record<string, unknown>)[segment] : undefined,
            body,
        );
        let target = next;
        for (const segment of segments.slice(0, -1)) {
            const child = target[segment];
            if (child === null || typeof child !== "object" || Array.isArray(child)) target[segment] = {};
            target = target[segment] as Record<string, unknown>;
        }
        const last = segments[segments.length - 1] ?? "";
        if (value === undefined) delete target[last];
        else target[last] = structuredClone(value);
    }
    return next;
}
