// The generic dialect's server (issue 19): widgets whose writes are long-running operations followed
// through a status monitor, per RFC 9110 section 15.3.3 (202 Accepted "ought to ... point to a status
// monitor"), with the Idempotency-Key header of draft-ietf-httpapi-idempotency-key-header.
//
//   POST   /widgets            Idempotency-Key required -> 202 + Location: /monitors/<id> (+ Retry-After)
//   GET    /monitors/<id>      200 { id, operation, status: pending|succeeded|failed|canceled,
//                              resourceLocation?, error? } (+ Location of the resource at the end)
//   GET    /widgets?name=<n>   200 { items: [...] } (with `pageSize`: a page, and `nextLink` to the next)
//   GET    /widgets/<id>       200 the widget, 404 when there is none
//   PATCH  /widgets/<id>       JSON merge patch (RFC 7396) -> 202 + monitor; Idempotency-Key honoured
//   DELETE /widgets/<id>       202 + monitor, 404 when gone; Idempotency-Key honoured
//
// The natural key is `name`: a create or rename to a name a live widget has, or a pending create or
// rename is giving, is refused 409 (unless `allowDuplicateNames`), so `duplicates` stays 0; with the
// option such creates are accepted and counted in `duplicates`. Idempotency keys (scoped to method and
// path, never expiring): missing -> 400, same key and another body -> 422, same key while the operation
// it started is pending -> 409, same key afterwards -> the first answer replayed, whatever it was (the
// draft: "success or an error").
//
// Time: an operation advances one step each time someone asks about it, never by the wall clock: a GET
// of its monitor, or a request turned away 409 because of it (a retried key, a busy widget, a name a
// pending create or rename holds), as if the time the asker waited had passed. It ends after
// `pollsToFinish` steps (0: already at acceptance) as its OperationScript says. `resultLate` makes the
// next read of the widget (item or list) show it as it was before the operation.
//
// Test infrastructure only: nothing here ships in the package.

import { randomUUID } from "node:crypto";
import {
    type DialectServer,
    type Fault,
    type FaultPlan,
    fixedOperations,
    formatRetryAfter,
    type KitRequest,
    type KitResponse,
    type OperationPlan,
    type OperationScript,
    problem,
    type ServerCounts,
    startServer,
} from "./kit";

/** How a generic server behaves; every field is optional. */
export interface GenericServerOptions {
    faults?: FaultPlan;
    operations?: OperationPlan;
    /** The bearer token; default "test-token". */
    token?: string;
    port?: number;
    /** The form of Retry-After on 202s, pending monitors and 409s of a pending operation; default "seconds". */
    retryAfter?: "seconds" | "http-date" | "none";
    /** The delay Retry-After asks for; default 1. */
    retryAfterSeconds?: number;
    /** The clock HTTP dates are computed from; default the wall clock. */
    now?: () => number;
    /** Accept a create whose name a live widget has (and count it in `duplicates`), as many real APIs do. */
    allowDuplicateNames?: boolean;
    /** The methods that require an Idempotency-Key (the others honour one when sent); default ["POST"]. */
    requireIdempotencyKey?: ReadonlyArray<"POST" | "PATCH" | "DELETE">;
    /** "sf-string": only the draft's syntax (a quoted RFC 8941 string); default also a bare token. */
    keySyntax?: "sf-string" | "sf-string-or-token";
    /** An operation finished at acceptance (pollsToFinish 0, succeeded) answers 201/200/204 instead of 202. */
    instantAnswers?: "monitor" | "final";
    /** Location and resourceLocation as absolute URLs; default paths. */
    absoluteLocations?: boolean;
    /** Makes widget and monitor ids; default random UUIDs. */
    ids?: () => string;
    /** Lists answer this many items a page, with `nextLink` (a path) to the next; default all in one page. */
    pageSize?: number;
}

type Status = "pending" | "succeeded" | "failed" | "canceled";
type Kind = "create" | "update" | "delete";

/** An operation as the server keeps it. */
export interface GenericOperation {
    readonly id: string;
    readonly kind: Kind;
    readonly widgetId: string;
    readonly script: OperationScript;
    steps: number;
    status: Status;
    error?: { code: string; message: string };
    /** What an update merges in. */
    readonly patch?: Record<string, unknown>;
}

interface Widget {
    record: Record<string, unknown>;
    state: "creating" | "live";
    /** The pending operation on it, if any. */
    busy?: string;
    readonly order: number;
}

/** A running generic server: the DialectServer, and its operations for tests to look at. */
export interface GenericServer extends DialectServer {
    readonly token: string;
    operations(): ReadonlyArray<Readonly<GenericOperation>>;
}

interface StoredKey {
    readonly fingerprint: string;
    readonly answer: KitResponse;
    readonly operationId?: string;
}

const PROBLEMS = "https://widgets.test/problems/";

/** Starts a generic dialect server on 127.0.0.1. */
export async function startGenericServer(options: GenericServerOptions = {}): Promise<GenericServer> {
    const token = options.token ?? "test-token";
    const now = options.now ?? Date.now;
    const newId = options.ids ?? randomUUID;
    const requireKey = new Set(options.requireIdempotencyKey ?? ["POST"]);
    let plan = options.operations ?? fixedOperations({});
    const widgets = new Map<string, Widget>();
    const operations = new Map<string, GenericOperation>();
    const lagging = new Map<string, { view: Record<string, unknown> | null }>();
    const keys = new Map<string, StoredKey>();
    const tally = { creates: 0, duplicates: 0 };
    let order = 0;
    let base = "";

    const location = (path: string) => (options.absoluteLocations ? `${base}${path}` : path);
    const retryHeaders = (): Record<string, string> =>
        options.retryAfter === "none"
            ? {}
            : {
                  "retry-after": formatRetryAfter(
                      options.retryAfterSeconds ?? 1,
                      options.retryAfter ?? "seconds",
                      now(),
                  ),
              };
    const fail = (status: number, code: string, detail: string, headers: Record<string, string> = {}) => {
        const answer = problem(status, detail, { type: `${PROBLEMS}${code}` });
        return { ...answer, headers: { ...answer.headers, ...headers } };
    };
    const live = (id: string) => {
        const widget = widgets.get(id);
        return widget?.state === "live" ? widget : undefined;
    };
    /**
     * The widget holding `name`, and the pending operation that holds it (a create, or an update renaming
     * to it) when it is not held by a widget of that name already.
     */
    const nameHolder = (name: unknown, except?: string) => {
        for (const [id, widget] of widgets) {
            if (id === except) continue;
            const pending = widget.busy ? operations.get(widget.busy) : undefined;
            if (widget.state === "live" && widget.record.name === name) return { widget };
            if (widget.state === "creating" && widget.record.name === name) return { widget, pending };
            if (pending?.patch?.name === name) return { widget, pending };
        }
        return undefined;
    };

    // Operations ---------------------------------------------------------------------------------

    const finish = (operation: GenericOperation): void => {
        const widget = widgets.get(operation.widgetId);
        if (widget?.busy === operation.id) delete widget.busy;
        let outcome: Status = operation.script.outcome;
        if (outcome === "failed") {
            operation.error = { code: "OperationFailed", message: `The ${operation.kind} of the widget failed.` };
        } else if (outcome === "succeeded" && operation.kind !== "delete" && widget === undefined) {
            outcome = "failed";
            operation.error = { code: "NotFound", message: `Widget ${operation.widgetId} no longer exists.` };
        } else if (outcome === "succeeded" && operation.kind !== "delete" && widget !== undefined) {
            // Another operation may have taken the name since this one was accepted (a rename racing a
            // create): without allowDuplicateNames the later one fails, so there is never a duplicate.
            const name = operation.patch?.name ?? (operation.kind === "create" ? widget.record.name : undefined);
            if (name !== undefined && !options.allowDuplicateNames && holdsLive(name, operation.widgetId)) {
                outcome = "failed";
                operation.error = { code: "NameTaken", message: `The name ${String(name)} was taken meanwhile.` };
            }
        }
        operation.status = outcome;
        if (operation.kind === "create" && widget !== undefined) {
            if (outcome !== "succeeded") {
                widgets.delete(operation.widgetId);
                return;
            }
            if (holdsLive(widget.record.name, operation.widgetId)) tally.duplicates++;
            widget.state = "live";
            tally.creates++;
            if (operation.script.resultLate) lagging.set(operation.widgetId, { view: null });
        } else if (outcome === "succeeded" && operation.kind === "update" && widget !== undefined) {
            if (operation.script.resultLate) lagging.set(operation.widgetId, { view: structuredClone(widget.record) });
            widget.record = mergePatch(widget.record, operation.patch ?? {});
        } else if (outcome === "succeeded" && operation.kind === "delete" && widget !== undefined) {
            if (operation.script.resultLate) lagging.set(operation.widgetId, { view: structuredClone(widget.record) });
            widgets.delete(operation.widgetId);
        }
    };
    const holdsLive = (name: unknown, except: string) =>
        [...widgets.entries()].some(
            ([id, other]) => id !== except && other.state === "live" && other.record.name === name,
        );

    const step = (operation: GenericOperation | undefined): void => {
        if (operation === undefined || operation.status !== "pending") return;
        operation.steps++;
        if (operation.steps >= operation.script.pollsToFinish) finish(operation);
    };

    const start = (kind: Kind, widgetId: string, patch?: Record<string, unknown>): GenericOperation => {
        const operation: GenericOperation = {
            id: newId(),
            kind,
            widgetId,
            script: plan.next(kind),
            steps: 0,
            status: "pending",
            ...(patch ? { patch } : {}),
        };
        operations.set(operation.id, operation);
        const widget = widgets.get(widgetId);
        if (widget) widget.busy = operation.id;
        if (operation.script.pollsToFinish <= 0) finish(operation);
        return operation;
    };

    const monitorBody = (operation: GenericOperation) => ({
        id: operation.id,
        operation: operation.kind,
        status: operation.status,
        ...(operation.status === "succeeded" && operation.kind !== "delete"
            ? { resourceLocation: location(`/widgets/${operation.widgetId}`) }
            : {}),
        ...(operation.error ? { error: operation.error } : {}),
    });

    const monitorAnswer = (operation: GenericOperation, status: number): KitResponse => {
        const body = monitorBody(operation);
        const headers: Record<string, string> =
            status === 202 ? { location: location(`/monitors/${operation.id}`) } : {};
        if (operation.status === "pending") Object.assign(headers, retryHeaders());
        if (status === 200 && body.resourceLocation !== undefined) headers.location = body.resourceLocation;
        return { status, headers, body };
    };

    /** 202 + monitor, or with instantAnswers "final" the final answer of an operation already succeeded. */
    const accepted = (operation: GenericOperation): KitResponse => {
        if (options.instantAnswers !== "final" || operation.status !== "succeeded") {
            return monitorAnswer(operation, 202);
        }
        const record = widgets.get(operation.widgetId)?.record;
        if (operation.kind === "delete" || record === undefined) return { status: 204 };
        const headers = { location: location(`/widgets/${operation.widgetId}`) };
        return { status: operation.kind === "create" ? 201 : 200, headers, body: structuredClone(record) };
    };

    /** A request refused because `operation` is pending: it advances, and the asker is told to come back. */
    const busy = (operation: GenericOperation | undefined, code: string, detail: string): KitResponse => {
        step(operation);
        return fail(409, code, detail, retryHeaders());
    };

    // Reads ----------------------------------------------------------------------------------------

    /** The widget as a read sees it now (null: not found), consuming a lagging view. */
    const read = (id: string): Record<string, unknown> | null => {
        const lag = lagging.get(id);
        if (lag) {
            lagging.delete(id);
            return lag.view && structuredClone(lag.view);
        }
        const widget = live(id);
        return widget ? structuredClone(widget.record) : null;
    };

    const list = (name: string | null, page: number): KitResponse => {
        const ids = new Set([...widgets.keys(), ...lagging.keys()]);
        const items = [...ids]
            .filter((id) => {
                const view = lagging.get(id)?.view ?? widgets.get(id)?.record;
                return (lagging.has(id) || live(id)) && (name === null || view?.name === name);
            })
            .sort((a, b) => (widgets.get(a)?.order ?? -1) - (widgets.get(b)?.order ?? -1))
            .map(read)
            .filter((item): item is Record<string, unknown> => item !== null);
        const size = options.pageSize;
        if (size === undefined) return { status: 200, body: { items } };
        const rest = items.length - (page + 1) * size;
        const query = `${name === null ? "" : `name=${encodeURIComponent(name)}&`}page=${page + 1}`;
        const nextLink = rest > 0 ? { nextLink: `/widgets?${query}` } : {};
        return { status: 200, body: { items: items.slice(page * size, (page + 1) * size), ...nextLink } };
    };

    // Writes ---------------------------------------------------------------------------------------

    const create = (request: KitRequest): { answer: KitResponse; operationId?: string } => {
        const invalid = validate(request.body, "create");
        if (invalid) return { answer: fail(400, "invalid-widget", invalid) };
        const body = request.body as Record<string, unknown>;
        const holder = options.allowDuplicateNames ? undefined : nameHolder(body.name);
        if (holder?.pending) {
            const detail = `An operation in progress is giving the name ${String(body.name)} to a widget.`;
            return { answer: busy(holder.pending, "name-taken", detail) };
        }
        if (holder) {
            const detail = `A widget named ${String(body.name)} already exists; choose another name.`;
            return { answer: fail(409, "name-taken", detail) };
        }
        const id = newId();
        widgets.set(id, { record: { ...body, id }, state: "creating", order: order++ });
        const operation = start("create", id);
        return { answer: accepted(operation), operationId: operation.id };
    };

    const update = (id: string, request: KitRequest): { answer: KitResponse; operationId?: string } => {
        const widget = live(id);
        if (!widget) return { answer: fail(404, "not-found", `There is no widget ${id}.`) };
        const invalid = validate(request.body, "update");
        if (invalid) return { answer: fail(400, "invalid-widget", invalid) };
        if (widget.busy) {
            const detail = `Widget ${id} has an operation in progress; retry when it has ended.`;
            return { answer: busy(operations.get(widget.busy), "operation-in-progress", detail) };
        }
        const patch = request.body as Record<string, unknown>;
        const holder = patch.name === undefined || options.allowDuplicateNames ? undefined : nameHolder(patch.name, id);
        if (holder?.pending) {
            const detail = `An operation in progress is giving the name ${String(patch.name)} to a widget.`;
            return { answer: busy(holder.pending, "name-taken", detail) };
        }
        if (holder) {
            return { answer: fail(409, "name-taken", `A widget named ${String(patch.name)} already exists.`) };
        }
        const operation = start("update", id, structuredClone(patch));
        return { answer: accepted(operation), operationId: operation.id };
    };

    const remove = (id: string): { answer: KitResponse; operationId?: string } => {
        const widget = live(id);
        if (!widget) return { answer: fail(404, "not-found", `There is no widget ${id}.`) };
        if (widget.busy) {
            const detail = `Widget ${id} has an operation in progress; retry when it has ended.`;
            return { answer: busy(operations.get(widget.busy), "operation-in-progress", detail) };
        }
        const operation = start("delete", id);
        return { answer: accepted(operation), operationId: operation.id };
    };

    /** The draft's key handling around a write. */
    const idempotent = (
        request: KitRequest,
        write: () => { answer: KitResponse; operationId?: string },
    ): KitResponse => {
        const header = request.headers["idempotency-key"];
        if (header === undefined) {
            if (!requireKey.has(request.method as "POST")) return write().answer;
            return fail(400, "idempotency-key-missing", "This operation requires an Idempotency-Key header.");
        }
        const key = parseKey(Array.isArray(header) ? header.join(", ") : header, options.keySyntax);
        if (key === undefined) {
            return fail(400, "idempotency-key-invalid", "The Idempotency-Key header is not a valid key.");
        }
        const scope = JSON.stringify([request.method, request.path, key]);
        const fingerprint = canonical(request.body ?? request.rawBody);
        const seen = keys.get(scope);
        if (seen === undefined) {
            const done = write();
            const stored: StoredKey = { fingerprint, answer: structuredClone(done.answer) };
            keys.set(scope, done.operationId ? { ...stored, operationId: done.operationId } : stored);
            return done.answer;
        }
        if (seen.fingerprint !== fingerprint) {
            const detail = "This Idempotency-Key was used with another request payload; use a new key.";
            return fail(422, "idempotency-key-reused", detail);
        }
        const operation = seen.operationId ? operations.get(seen.operationId) : undefined;
        if (operation?.status === "pending") {
            const detail = "A request with this Idempotency-Key is outstanding; retry when it has ended.";
            return busy(operation, "idempotency-key-outstanding", detail);
        }
        return structuredClone(seen.answer);
    };

    const handle = (request: KitRequest): KitResponse => {
        const operation = classify(request.method, request.path);
        const id = idOf(request.path);
        switch (operation) {
            case "create":
                return idempotent(request, () => create(request));
            case "list":
                return list(request.query.get("name"), Number(request.query.get("page") ?? "0"));
            case "get": {
                const record = read(id);
                return record ? { status: 200, body: record } : fail(404, "not-found", `There is no widget ${id}.`);
            }
            case "update":
                return idempotent(request, () => update(id, request));
            case "delete":
                return idempotent(request, () => remove(id));
            case "poll": {
                const monitor = operations.get(id);
                if (!monitor) return fail(404, "not-found", `There is no operation ${id}.`);
                step(monitor);
                return monitorAnswer(monitor, 200);
            }
            default:
                throw new Error(`Unrouted operation ${String(operation)}`);
        }
    };

    const kit = await startServer({
        ...(options.port !== undefined ? { port: options.port } : {}),
        ...(options.faults ? { faults: options.faults } : {}),
        classify,
        handler: handle,
        authenticate: (request) => request.headers.authorization === `Bearer ${token}`,
        unauthorized: () =>
            fail(401, "unauthorized", "A valid bearer token is required.", {
                "www-authenticate": 'Bearer realm="widgets"',
            }),
        renderThrottle: (fault) => renderThrottle(fault, now()),
    });
    base = kit.url;

    return {
        url: kit.url,
        token,
        counts(): ServerCounts {
            const stats = kit.stats();
            return {
                creates: tally.creates,
                duplicates: tally.duplicates,
                live: [...widgets.values()].filter((widget) => widget.state === "live").length,
                requests: stats.requests,
                faultsInjected: stats.faultsInjected,
                requestsOutsideApi: stats.requestsOutsideApi,
                unauthorized: stats.unauthorized,
            };
        },
        resources: () =>
            [...widgets.values()]
                .filter((widget) => widget.state === "live")
                .map((widget) => structuredClone(widget.record)),
        operations: () => [...operations.values()].map((operation) => structuredClone(operation)),
        setFaults: (faults) => kit.setFaults(faults),
        setOperations(next) {
            plan = next;
        },
        mutate(id, change) {
            const widget = live(id);
            if (!widget) throw new Error(`mutate: there is no live widget ${id} on the generic server.`);
            const { id: _ignored, ...rest } = change;
            widget.record = mergePatch(widget.record, rest);
        },
        remove(id) {
            if (!live(id)) throw new Error(`remove: there is no live widget ${id} on the generic server.`);
            widgets.delete(id);
            lagging.delete(id);
        },
        close: () => kit.close(),
    };
}

const WIDGET = /^\/widgets\/([^/]+)$/;
const MONITOR = /^\/monitors\/([^/]+)$/;

function classify(method: string, path: string): string | undefined {
    if (path === "/widgets") return method === "POST" ? "create" : method === "GET" ? "list" : undefined;
    if (WIDGET.test(path)) return ({ GET: "get", PATCH: "update", DELETE: "delete" } as const)[method as "GET"];
    if (MONITOR.test(path) && method === "GET") return "poll";
    return undefined;
}

function idOf(path: string): string {
    const segment = WIDGET.exec(path)?.[1] ?? MONITOR.exec(path)?.[1] ?? "";
    try {
        return decodeURIComponent(segment);
    } catch {
        return segment;
    }
}

/** Why a create or update body is refused, or undefined. */
function validate(body: unknown, kind: "create" | "update"): string | undefined {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
        return "The body must be a JSON object (Content-Type application/json).";
    }
    const fields = body as Record<string, unknown>;
    if ("id" in fields) return "Field id is assigned by the server; leave it out.";
    if (kind === "create" || "name" in fields) {
        const name = fields.name;
        if (typeof name !== "string" || name.trim() === "" || name.length > 200) {
            return "Field name must be a non-empty string of at most 200 characters.";
        }
    }
    return undefined;
}

/** RFC 7396: null removes a member, objects merge, anything else replaces. */
function mergePatch(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
    const result: Record<string, unknown> = structuredClone(target);
    for (const [name, value] of Object.entries(patch)) {
        if (value === null) delete result[name];
        else if (typeof value === "object" && !Array.isArray(value)) {
            const current = result[name];
            const base = typeof current === "object" && current !== null && !Array.isArray(current) ? current : {};
            result[name] = mergePatch(base as Record<string, unknown>, value as Record<string, unknown>);
        } else result[name] = structuredClone(value);
    }
    return result;
}

/** The key of an Idempotency-Key header: an RFC 8941 sf-string, or (unless strict) a bare token. */
function parseKey(value: string, syntax: GenericServerOptions["keySyntax"]): string | undefined {
    const text = value.trim();
    const quoted = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(text);
    if (quoted) return quoted[1]?.replace(/\\(["\\])/g, "$1") || undefined;
    if (syntax === "sf-string") return undefined;
    return /^[\x21-\x7e]{1,255}$/.test(text) && !text.includes('"') ? text : undefined;
}

/** A fingerprint of a payload that ignores member order and whitespace. */
function canonical(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
    if (typeof value === "object" && value !== null) {
        const members = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
        return `{${members.map(([name, member]) => `${JSON.stringify(name)}:${canonical(member)}`).join(",")}}`;
    }
    return JSON.stringify(value);
}

/** 429 with the hint the fault asks for; "body" puts it in the problem document only. */
function renderThrottle(fault: Extract<Fault, { kind: "throttle" }>, now: number): KitResponse {
    const answer = problem(429, "Too many requests; slow down.", {
        type: `${PROBLEMS}throttled`,
        ...(fault.hint === "body" ? { retryAfterSeconds: fault.seconds } : {}),
    });
    if (fault.hint === "seconds" || fault.hint === "http-date") {
        answer.headers = { ...answer.headers, "retry-after": formatRetryAfter(fault.seconds, fault.hint, now) };
    }
    return answer;
}
