// A local data-plane service for issue 19's `azure` dialect: widgets under the Azure REST API guidelines,
// written from the public contract, not from any client:
//
// - microsoft/api-guidelines `azure/Guidelines.md` (commit 011dd3c): "HTTP Return Codes" (PUT 200/201,
//   DELETE 204 even when the resource does not exist, POST action 200, 202 for LROs), "Create / Update /
//   Replace Processing Rules" (unknown field 400, read-only field 400, mandatory field missing 400, 201
//   create, 200 replace), "Handling Errors" (x-ms-error-code equal to error.code, { error: { code,
//   message } }), x-ms-request-id, "API Versioning" (api-version required on every request, even to an
//   Operation-Location: 400 MissingApiVersionParameter / UnsupportedApiVersionValue with the guidelines'
//   messages), "Performing an Action" (POST /widgets/{name}:rotate, no ':' in ids), "Repeatability of
//   requests" (OASIS Repeatable Requests 1.0 on POST: Repeatability-Request-ID and -First-Sent, a tracked
//   window of at least 5 minutes, Repeatability-Result; 501 for valid repeatability headers on an
//   operation that does not support them), "Long-Running Operations & Jobs": "POST or DELETE LRO pattern"
//   (202, a status monitor in the body, Operation-Location absolute with the api-version, Operation-Id
//   from the client or a GUID, the same Operation-Id on a different request 400), "PUT operation with
//   additional long-running processing" (201/200 with the resource, Operation-Id and Operation-Location
//   headers), "Obtaining status and results" (GET the monitor: 200 { id, status NotStarted|Running|
//   Succeeded|Failed|Canceled, error when Failed, result only for a POST action }, Retry-After on every
//   non-terminal answer, retained after completion).
// - same repository, `azure/ConsiderationsForServiceDesign.md`, "Long-Running Operations": the 202 body
//   { id, status: "NotStarted" } with retry-after; "Long-running delete operation" (the resource stays
//   visible until the delete succeeds, then its name is free).
// - OASIS Repeatable Requests 1.0 (cited by the guidelines) and Azure Communication Services' published
//   table of it: a repeat within the window is answered with the first answer, Repeatability-Result
//   accepted; an invalid header or a reused id on another request 400 rejected; a First-Sent outside the
//   window 412 rejected.
//
// Where the contract is silent (see the tests beside this file):
// - Operations advance per poll of their status monitor only (a widget has no provisioning state).
// - pollsToFinish 0 is a synchronous call: PUT 200/201 without monitor, DELETE 204, POST :rotate 200 with
//   its result; a synchronous failure is 400 { error } (canceled: 409) and changes nothing.
// - A failed or canceled long-running create keeps the widget (option failedCreate: "removed" deletes it,
//   which the guidelines allow when documented); a failed replace or delete leaves the widget as before.
// - A Canceled monitor carries no error (the guidelines require one only when Failed).
// - A write while another operation runs on the widget is 409 AnotherOperationInProgress, except the same
//   PUT again (joins it) and DELETE again (the same monitor).
// - resultLate: from the start of the operation until one GET after it ended, GET shows the widget as it
//   was before the operation (404 for a create): a lagging read replica.
// - ETags and conditional requests are not implemented (no operation here depends on them).
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

/** The api-versions supported unless told otherwise (a stable one and the latest preview). */
export const GUIDELINES_API_VERSIONS: readonly string[] = ["2024-01-01", "2024-06-01-preview"];

/** Options of `startAzureGuidelinesServer`. */
export interface AzureGuidelinesServerOptions {
    faults?: FaultPlan;
    operations?: OperationPlan;
    /** The bearer token; default "test-token". */
    token?: string;
    apiVersions?: readonly string[];
    /** Retry-After on non-terminal monitors; default 5 (the guidelines' example). */
    retryAfterSeconds?: number;
    /** The repeatability window; default 300 s, the guidelines' minimum. */
    repeatabilityWindowSeconds?: number;
    /** What a failed or canceled long-running create leaves: the widget (default) or nothing. */
    failedCreate?: "kept" | "removed";
    /** Milliseconds since the epoch, for the repeatability window; default Date.now. */
    clock?: () => number;
    port?: number;
}

/** A running guidelines server: the kit's DialectServer plus the harness's own statistics. */
export interface AzureGuidelinesServer extends DialectServer {
    readonly stats: () => KitStats;
    /** The operations started so far, oldest first. */
    readonly operations: () => ReadonlyArray<{ id: string; kind: OperationKind; status: string; polls: number }>;
}

type OperationKind = "create" | "update" | "delete" | "action";
type Status = "NotStarted" | "Running" | "Succeeded" | "Failed" | "Canceled";
type Json = Record<string, unknown>;

interface WidgetState {
    size: number;
    color?: string;
    tags: Record<string, string>;
    keyVersion: number;
}

interface Widget {
    name: string;
    shown: WidgetState;
    committed: WidgetState;
    operation?: Operation;
}

interface Operation {
    id: string;
    kind: OperationKind;
    widget: string;
    script: OperationScript;
    polls: number;
    status: Status;
    error?: { code: string; message: string };
    result?: Json;
    /** The canonical body of the PUT that started it: the same PUT again joins it. */
    request?: string;
}

interface Remembered {
    fingerprint: string;
    firstSent?: string;
    answer: KitResponse;
}

const WIDGET = /^\/widgets\/([^/]+)$/;
const active = (op: Operation | undefined): boolean => op?.status === "NotStarted" || op?.status === "Running";
const OPERATION = /^\/operations\/([^/]+)$/;
const OPERATION_ID = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$/;
const DAY = "(Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const MONTH = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const TIME = "\\d{2}:\\d{2}:\\d{2}";
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC850_DATE = new RegExp(
    `^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`,
);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ( \\d|\\d{2}) ${TIME} \\d{4}$`);
const WRITABLE = new Set(["size", "color", "tags"]);
const READ_ONLY = new Set(["name", "keyVersion"]);

/** Starts a guidelines-style widget service on 127.0.0.1. */
export async function startAzureGuidelinesServer(
    options: AzureGuidelinesServerOptions = {},
): Promise<AzureGuidelinesServer> {
    const token = options.token ?? "test-token";
    const apiVersions = options.apiVersions ?? GUIDELINES_API_VERSIONS;
    const retryAfterSeconds = String(options.retryAfterSeconds ?? 5);
    const windowMs = (options.repeatabilityWindowSeconds ?? 300) * 1000;
    const clock = options.clock ?? Date.now;
    let plan: OperationPlan = options.operations ?? { next: () => ({ ...DEFAULT_OPERATION }) };
    const widgets = new Map<string, Widget>();
    const operations = new Map<string, Operation>();
    const byOperationId = new Map<string, Remembered>();
    const byRequestId = new Map<string, Remembered>();
    /** resultLate: what GET shows of a widget (undefined: 404) until one GET after its operation ended. */
    const lag = new Map<string, { view: Json | undefined; ended: boolean }>();
    let creates = 0;
    let base = "";

    const view = (widget: Widget): Json => {
        const { color, ...rest } = widget.shown;
        return { name: widget.name, ...rest, ...(color === undefined ? {} : { color }), tags: { ...rest.tags } };
    };

    const monitor = (op: Operation): Json => ({
        id: op.id,
        status: op.status,
        ...(op.error ? { error: { ...op.error } } : {}),
        ...(op.result ? { result: { ...op.result } } : {}),
    });

    const operationLocation = (op: Operation, apiVersion: string): string =>
        `${base}/operations/${encodeURIComponent(op.id)}?api-version=${encodeURIComponent(apiVersion)}`;

    const finish = (op: Operation): void => {
        op.status =
            op.script.outcome === "failed" ? "Failed" : op.script.outcome === "canceled" ? "Canceled" : "Succeeded";
        if (op.status === "Failed") {
            op.error = {
                code: "WidgetOperationFailed",
                message: `The ${op.kind} of widget '${op.widget}' failed (the test's operation plan said so). Fix the cause and send the request again.`,
            };
        }
        const late = lag.get(op.widget);
        if (late) late.ended = true;
        const widget = widgets.get(op.widget);
        if (widget === undefined || widget.operation !== op) return; // removed out of band meanwhile
        if (op.status === "Succeeded") {
            if (op.kind === "delete") widgets.delete(widget.name);
            if (op.kind === "action") {
                widget.shown.keyVersion++;
                op.result = { keyVersion: widget.shown.keyVersion };
            }
            widget.committed = structuredClone(widget.shown);
            return;
        }
        if (op.kind === "create" && options.failedCreate === "removed") widgets.delete(widget.name);
        else widget.shown = structuredClone(widget.committed);
    };

    const begin = (kind: OperationKind, widget: Widget, before: Json | undefined, id?: string, request?: string) => {
        const script = plan.next(kind);
        const op: Operation = {
            id: id ?? randomUUID(),
            kind,
            widget: widget.name,
            script,
            polls: 0,
            status: "NotStarted",
            ...(request === undefined ? {} : { request }),
        };
        operations.set(op.id, op);
        widget.operation = op;
        if (script.resultLate) lag.set(widget.name, { view: before, ended: false });
        else lag.delete(widget.name);
        if (script.pollsToFinish <= 0) finish(op);
        return op;
    };

    const running = (widget: Widget | undefined): Operation | undefined =>
        widget?.operation && active(widget.operation) ? widget.operation : undefined;

    const busy = (widget: Widget): KitResponse =>
        apiError(
            409,
            "AnotherOperationInProgress",
            `Another operation (${widget.operation?.kind}, ${widget.operation?.id}) is running on widget '${widget.name}'. Wait for it to end, then retry.`,
        );

    /** A synchronous operation that failed: nothing changed. */
    const failure = (op: Operation): KitResponse =>
        op.status === "Canceled"
            ? apiError(
                  409,
                  "OperationCanceled",
                  `The ${op.kind} of widget '${op.widget}' was canceled; nothing changed.`,
              )
            : apiError(400, op.error?.code ?? "WidgetOperationFailed", op.error?.message ?? "The operation failed.");

    const accepted = (op: Operation, apiVersion: string): KitResponse => ({
        status: 202,
        headers: {
            ...requestId(),
            "Operation-Location": operationLocation(op, apiVersion),
            ...(active(op) ? { "Retry-After": retryAfterSeconds } : {}),
        },
        body: monitor(op),
    });

    const put = (request: KitRequest, name: string, apiVersion: string, operationId?: string): KitResponse => {
        const body = requestObject(request);
        if ("status" in body) return body;
        const state = widgetState(body.value);
        if ("status" in state) return state;
        const existing = widgets.get(name);
        const canonical = canonicalJson(state);
        const inFlight = running(existing);
        if (existing && inFlight) {
            if (inFlight.kind !== "create" && inFlight.kind !== "update") return busy(existing);
            if (inFlight.request !== canonical) return busy(existing);
            return {
                status: 200,
                headers: { ...requestId(), ...monitorHeaders(inFlight, apiVersion) },
                body: view(existing),
            };
        }
        const before = existing ? view(existing) : undefined;
        const widget: Widget = existing ?? { name, shown: state, committed: structuredClone(state) };
        state.keyVersion = existing?.shown.keyVersion ?? 1;
        widget.shown = state;
        widgets.set(name, widget);
        const op = begin(existing ? "update" : "create", widget, before, operationId, canonical);
        if (op.status === "Failed" || op.status === "Canceled") {
            if (!existing) widgets.delete(name); // a synchronous create that failed made nothing
            return failure(op);
        }
        if (!existing) creates++;
        const status = existing ? 200 : 201;
        if (op.status === "Succeeded") return { status, headers: requestId(), body: view(widget) };
        return { status, headers: { ...requestId(), ...monitorHeaders(op, apiVersion) }, body: view(widget) };
    };

    const monitorHeaders = (op: Operation, apiVersion: string): Record<string, string> => ({
        "Operation-Id": op.id,
        "Operation-Location": operationLocation(op, apiVersion),
    });

    const deleteWidget = (name: string, apiVersion: string, operationId?: string): KitResponse => {
        const widget = widgets.get(name);
        if (widget === undefined) return { status: 204, headers: requestId() };
        const inFlight = running(widget);
        if (inFlight?.kind === "delete") return accepted(inFlight, apiVersion);
        if (inFlight) return busy(widget);
        const op = begin("delete", widget, view(widget), operationId);
        if (op.status === "Succeeded") return { status: 204, headers: requestId() };
        if (op.status !== "NotStarted") return failure(op);
        return accepted(op, apiVersion);
    };

    const rotate = (request: KitRequest, name: string, apiVersion: string, operationId?: string): KitResponse => {
        if (request.rawBody.trim() !== "") {
            const body = requestObject(request);
            if ("status" in body) return body;
            const unknown = Object.keys(body.value).find((field) => field !== "reason");
            if (unknown !== undefined) {
                return apiError(
                    400,
                    "InvalidRequestContent",
                    `':rotate' takes only 'reason'; '${unknown}' is not known.`,
                );
            }
            if (body.value.reason !== undefined && typeof body.value.reason !== "string") {
                return apiError(400, "InvalidRequestContent", "'reason' must be a string.");
            }
        }
        const widget = widgets.get(name);
        if (widget === undefined) return notFound(name);
        if (running(widget)) return busy(widget);
        const op = begin("action", widget, view(widget), operationId);
        if (op.status === "Succeeded") return { status: 200, headers: requestId(), body: op.result };
        if (op.status !== "NotStarted") return failure(op);
        return accepted(op, apiVersion);
    };

    const getWidget = (name: string): KitResponse => {
        const late = lag.get(name);
        if (late) {
            if (late.ended) lag.delete(name);
            return late.view === undefined ? notFound(name) : { status: 200, headers: requestId(), body: late.view };
        }
        const widget = widgets.get(name);
        return widget === undefined ? notFound(name) : { status: 200, headers: requestId(), body: view(widget) };
    };

    const pollOperation = (id: string): KitResponse => {
        const op = operations.get(id);
        if (op === undefined) return apiError(404, "NotFound", `There is no operation '${id}'.`);
        if (op.status === "NotStarted" || op.status === "Running") {
            op.polls++;
            if (op.polls >= op.script.pollsToFinish) finish(op);
            else op.status = "Running";
        }
        const headers = active(op) ? { ...requestId(), "Retry-After": retryAfterSeconds } : requestId();
        return { status: 200, headers, body: monitor(op) };
    };

    /** Runs a write through Operation-Id and repeatability: a retry gets the first answer, a reuse a 400. */
    const write = (request: KitRequest, route: Route, apiVersion: string): KitResponse => {
        const fingerprint = `${request.method} ${request.path} ${canonicalJson(request.body ?? null)}`;
        if (route.kind !== "action") {
            // Only the action supports repeatability: valid headers elsewhere are a 501, others are ignored.
            const valid = repeatability(request, clock(), Number.POSITIVE_INFINITY);
            if (valid !== undefined && !("status" in valid)) {
                return apiError(
                    501,
                    "RepeatabilityNotSupported",
                    `${request.method} ${request.path} does not support Repeatability-Request-ID: it is idempotent without it. Send it without the repeatability headers.`,
                );
            }
        }
        const repeatable = route.kind === "action" ? repeatability(request, clock(), windowMs) : undefined;
        if (repeatable !== undefined && "status" in repeatable) return repeatable;
        if (repeatable) {
            const seen = byRequestId.get(repeatable.id);
            if (seen && (seen.fingerprint !== fingerprint || seen.firstSent !== repeatable.firstSent)) {
                return rejected(
                    apiError(
                        400,
                        "RepeatabilityRequestIdReused",
                        `Repeatability-Request-ID '${repeatable.id}' was first sent with another request or another Repeatability-First-Sent; use a new id for a new request.`,
                    ),
                );
            }
            if (seen) return withResult(seen.answer, "accepted");
        }
        const operationId = header(request, "operation-id");
        if (operationId !== undefined && !OPERATION_ID.test(operationId)) {
            return apiError(
                400,
                "InvalidOperationId",
                `Operation-Id '${operationId}' is not valid: 1 to 128 of A-Z a-z 0-9 . _ ~ -.`,
            );
        }
        if (operationId !== undefined) {
            const first = byOperationId.get(operationId);
            if (first && first.fingerprint !== fingerprint) {
                return apiError(
                    400,
                    "OperationIdInUse",
                    `Operation-Id '${operationId}' already names an operation started by another request; use a new id.`,
                );
            }
            if (first) return repeatable ? withResult(first.answer, "accepted") : first.answer;
        }
        const answer = execute(request, route, apiVersion, operationId);
        if (operationId !== undefined && operations.has(operationId))
            byOperationId.set(operationId, { fingerprint, answer });
        if (!repeatable) return answer;
        byRequestId.set(repeatable.id, { fingerprint, firstSent: repeatable.firstSent, answer });
        return withResult(answer, "accepted");
    };

    const execute = (request: KitRequest, route: Route, apiVersion: string, operationId?: string): KitResponse => {
        if (operationId !== undefined && operations.has(operationId)) {
            return apiError(400, "OperationIdInUse", `Operation-Id '${operationId}' already names an operation.`);
        }
        if (route.kind === "action") return rotate(request, route.name, apiVersion, operationId);
        if (request.method === "PUT") return put(request, route.name, apiVersion, operationId);
        return deleteWidget(route.name, apiVersion, operationId);
    };

    const handler = (request: KitRequest): KitResponse => {
        const version = request.query.get("api-version");
        if (version === null || version === "") {
            return apiError(
                400,
                "MissingApiVersionParameter",
                "The api-version query parameter (?api-version=) is required for all requests",
            );
        }
        if (!apiVersions.includes(version)) {
            const stable = apiVersions.filter((v) => !v.includes("-preview"));
            const preview = apiVersions
                .filter((v) => v.includes("-preview"))
                .sort()
                .slice(-1);
            return apiError(
                400,
                "UnsupportedApiVersionValue",
                `Unsupported api-version '${version}'. The supported api-versions are '${[...stable, ...preview].join(", ")}'.`,
            );
        }
        if (request.path === "/widgets") {
            return { status: 200, headers: requestId(), body: { value: [...widgets.values()].map(view) } };
        }
        const operation = OPERATION.exec(request.path);
        if (operation) return pollOperation(decode(operation[1]));
        const route = parseRoute(request.path);
        if (route === undefined) return apiError(404, "NotFound", `${request.path} is not part of this API.`);
        if ("status" in route) return route;
        if (request.method === "GET" && route.kind === "widget") return getWidget(route.name);
        return write(request, route, version);
    };

    const classify = (method: string, path: string): string | undefined => {
        if (path === "/widgets") return method === "GET" ? "list" : undefined;
        if (OPERATION.test(path)) return method === "GET" ? "poll" : undefined;
        const route = parseRoute(path);
        if (route === undefined) return undefined;
        const name = "name" in route ? route.name : undefined;
        if ("kind" in route && route.kind === "action") return method === "POST" ? "action" : undefined;
        switch (method) {
            case "PUT":
                return name !== undefined && widgets.has(name) ? "update" : "create";
            case "GET":
                return "get";
            case "DELETE":
                return "delete";
            default:
                return undefined;
        }
    };

    const kit = await startServer({
        handler,
        classify,
        renderThrottle: (fault) => throttled(fault, clock()),
        authenticate: (request) => {
            const value = request.headers.authorization ?? "";
            return /^bearer /i.test(value) && value.slice(7) === token;
        },
        unauthorized: () => {
            const answer = apiError(
                401,
                "Unauthorized",
                "The Authorization header is missing or its bearer token is not valid.",
            );
            return { ...answer, headers: { ...answer.headers, "WWW-Authenticate": "Bearer" } };
        },
        renderError: (status, detail) => apiError(status, kitErrorCode(status), detail),
        faults: options.faults,
        port: options.port,
    });
    base = kit.url;

    const find = (id: string): Widget => {
        const name = decode(id.replace(/^\/?widgets\//, ""));
        const widget = widgets.get(name);
        if (widget === undefined)
            throw new Error(`azureGuidelines server: no widget '${id}' (give its name or /widgets/<name>).`);
        return widget;
    };

    return {
        url: kit.url,
        counts: () => {
            const stats = kit.stats();
            return {
                creates,
                duplicates: 0, // a PUT to an existing name replaces it: there is never a second one
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
        mutate(id, change) {
            const widget = find(id);
            if ("name" in change) throw new Error(`azureGuidelines server: mutate cannot rename '${id}'.`);
            widget.shown = { ...widget.shown, ...(change as Partial<WidgetState>) };
            widget.committed = structuredClone(widget.shown);
            lag.delete(widget.name);
        },
        remove(id) {
            const widget = find(id);
            widgets.delete(widget.name);
            lag.delete(widget.name);
        },
        close: () => kit.close(),
    };
}

type Route = { kind: "widget" | "action"; name: string };

/** The widget or action a path names; undefined when none, a 400 when the name is not valid. */
function parseRoute(path: string): Route | KitResponse | undefined {
    const match = WIDGET.exec(path);
    if (!match) return undefined;
    const segment = decode(match[1]);
    const colon = segment.indexOf(":");
    if (colon >= 0 && segment.slice(colon) !== ":rotate") return undefined;
    const name = colon >= 0 ? segment.slice(0, colon) : segment;
    if (name.length === 0 || name.length > 256 || /[:\p{Cc}]/u.test(name)) {
        return apiError(
            400,
            "InvalidResourceName",
            `The widget name '${name}' is not valid: 1 to 256 characters, no ':' nor control characters.`,
        );
    }
    return { kind: colon >= 0 ? "action" : "widget", name };
}

/**
 * The repeatability headers of a request: undefined without any, a rejected 400/412 when they are not
 * valid or outside the window, else the id and the First-Sent as sent.
 */
function repeatability(
    request: KitRequest,
    now: number,
    windowMs: number,
): { id: string; firstSent: string } | KitResponse | undefined {
    const id = header(request, "repeatability-request-id");
    const firstSent = header(request, "repeatability-first-sent");
    if (id === undefined && firstSent === undefined) return undefined;
    if (id === undefined || firstSent === undefined) {
        return rejected(
            apiError(
                400,
                "InvalidRepeatabilityHeaders",
                "Repeatability-Request-ID and Repeatability-First-Sent go together; send both or neither.",
            ),
        );
    }
    if (id.length === 0 || id.length > 128 || /[^\x21-\x7e]/.test(id)) {
        return rejected(
            apiError(
                400,
                "InvalidRepeatabilityHeaders",
                "Repeatability-Request-ID must be 1 to 128 visible ASCII characters (a UUID).",
            ),
        );
    }
    const sent = httpDate(firstSent);
    if (sent === undefined) {
        return rejected(
            apiError(
                400,
                "InvalidRepeatabilityHeaders",
                `Repeatability-First-Sent '${firstSent}' is not an HTTP date (e.g. Sun, 06 Nov 1994 08:49:37 GMT).`,
            ),
        );
    }
    if (Math.abs(now - sent) > windowMs) {
        return rejected(
            apiError(
                412,
                "RepeatabilityWindowExceeded",
                `Repeatability-First-Sent '${firstSent}' is outside the ${windowMs / 1000} s this service tracks requests for: it cannot tell whether the request was done. Check it, then send it as a new request.`,
            ),
        );
    }
    return { id, firstSent };
}

/** An HTTP-date (IMF-fixdate, or the obsolete RFC 850 and asctime forms) in ms, or undefined. */
function httpDate(value: string): number | undefined {
    let parsed = Number.NaN;
    if (IMF_FIXDATE.test(value) || RFC850_DATE.test(value)) parsed = Date.parse(value);
    else if (ASCTIME_DATE.test(value)) parsed = Date.parse(`${value} GMT`);
    return Number.isFinite(parsed) ? parsed : undefined;
}

function withResult(answer: KitResponse, result: "accepted" | "rejected"): KitResponse {
    return { ...answer, headers: { ...answer.headers, "Repeatability-Result": result } };
}

function rejected(answer: KitResponse): KitResponse {
    return withResult(answer, "rejected");
}

function header(request: KitRequest, name: string): string | undefined {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
}

/** The JSON object a write carries, or the 4xx that says why there is none. */
function requestObject(request: KitRequest): { value: Json } | KitResponse {
    if (request.body === undefined && request.rawBody.length > 0) {
        return apiError(415, "UnsupportedMediaType", "The request body must be JSON (Content-Type: application/json).");
    }
    if (typeof request.body !== "object" || request.body === null || Array.isArray(request.body)) {
        return apiError(400, "InvalidRequestContent", "The request body must be a JSON object.");
    }
    return { value: request.body as Json };
}

/** A PUT body as a widget's state, or the 400 the processing rules ask for. */
function widgetState(body: Json): WidgetState | KitResponse {
    for (const field of Object.keys(body)) {
        if (READ_ONLY.has(field)) {
            return apiError(400, "InvalidRequestContent", `'${field}' is read-only: leave it out of the request.`);
        }
        if (!WRITABLE.has(field))
            return apiError(400, "InvalidRequestContent", `'${field}' is not a field of a widget.`);
    }
    const { size, color, tags } = body;
    if (size === undefined) return apiError(400, "InvalidRequestContent", "'size' is required.");
    if (typeof size !== "number" || !Number.isInteger(size) || size < 1 || size > 2 ** 31 - 1) {
        return apiError(400, "InvalidRequestContent", "'size' must be an integer from 1 to 2147483647.");
    }
    if (color !== undefined && typeof color !== "string") {
        return apiError(400, "InvalidRequestContent", "'color' must be a string.");
    }
    if (
        tags !== undefined &&
        (typeof tags !== "object" ||
            tags === null ||
            Array.isArray(tags) ||
            Object.values(tags).some((v) => typeof v !== "string"))
    ) {
        return apiError(400, "InvalidRequestContent", "'tags' must be an object of strings.");
    }
    return {
        size,
        ...(color === undefined ? {} : { color }),
        tags: { ...((tags as Record<string, string> | undefined) ?? {}) },
        keyVersion: 1,
    };
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

function notFound(name: string): KitResponse {
    return apiError(404, "NotFound", `There is no widget '${name}'.`);
}

/** An error answer: { error: { code, message } } and x-ms-error-code equal to the code ("Handling Errors"). */
function apiError(status: number, code: string, message: string): KitResponse {
    return { status, headers: { ...requestId(), "x-ms-error-code": code }, body: { error: { code, message } } };
}

function kitErrorCode(status: number): string {
    if (status === 400) return "InvalidRequestContent";
    if (status === 404) return "NotFound";
    if (status === 413) return "RequestEntityTooLarge";
    return status === 500 ? "InternalServerError" : status === 503 ? "ServiceUnavailable" : "GatewayError";
}

/** 429 with Retry-After as the fault asks (seconds or an HTTP date); the guidelines have no body hint, so "body" sends none. */
function throttled(fault: Extract<Fault, { kind: "throttle" }>, now: number): KitResponse {
    const answer = apiError(429, "TooManyRequests", "Too many requests. Retry after the time in Retry-After.");
    if (fault.hint === "seconds" || fault.hint === "http-date") {
        answer.headers = { ...answer.headers, "Retry-After": formatRetryAfter(fault.seconds, fault.hint, now) };
    }
    return answer;
}
