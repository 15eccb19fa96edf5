// Google's long-running operations (googleapis `google/longrunning/operations.proto`; AIP-133, 151,
// 155). A create is `POST <collection>?<resource>Id=<id>&requestId=<uuid>` and answers 200 with an
// `Operation` {name, done, error, response}; the operation is read at `/<version>/<name>`. `done`
// absent or false: running; `done` with `response`: succeeded, the response being the resource (its
// `name` is the full resource name, not the operation's); `done` with `error` (a google.rpc.Status):
// failed, or canceled when its code is 1 (CANCELLED). A repeated `requestId` returns the first
// request's operation. Errors are google.rpc.Status bodies; 429 RESOURCE_EXHAUSTED carries no hint.

import { describeError, numberField, objectOf, stringField } from "./answerFields";
import type { Dialect, ErrorMeaning, HttpAnswer, HttpCall, OperationView, Submitted } from "./dialect";
import { uuidKey } from "./tokenForms";

/** The program's settings for a Google API. */
export interface GoogleOptions {
    /** The API version prefix operations are read under: `/v1`. */
    readonly versionPrefix: string;
    /** The query parameter that sets the resource's id on create (`widgetId`), when the API takes one. */
    readonly idParameter?: string;
}

const OPERATION = "google-operation";
const CANCELLED = 1;
/** An operation's name: segments of letters, digits and `._~-`, none of them `.` or `..`. */
const OPERATION_NAME = /^(?!.*(?:^|\/)\.{1,2}(?:\/|$))[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+){0,15}$/;

/** The AIP-216 `state` values of a resource in the middle of an operation. */
const IN_MOTION = new Set(["CREATING", "UPDATING", "DELETING"]);

/** The Google AIP-151 dialect. */
export function googleDialect(options: GoogleOptions): Dialect {
    return {
        name: "google",
        tokenReplaysCreate: true,
        createKey: uuidKey,
        create(target, body, token): HttpCall {
            const query = new URLSearchParams();
            if (options.idParameter && target.createId !== undefined) query.set(options.idParameter, target.createId);
            if (token) query.set("requestId", token);
            return { method: "POST", path: withQuery(target.collectionPath, query), body, repeatable: !!token };
        },
        read: (target, id) => ({ method: "GET", path: target.itemPath(id), repeatable: true }),
        update(target, id, body, token) {
            const query = new URLSearchParams({ updateMask: Object.keys(objectOf(body) ?? {}).join(",") });
            if (token) query.set("requestId", token);
            return { method: "PATCH", path: withQuery(target.itemPath(id), query), body, repeatable: true };
        },
        delete: (target, id) => ({ method: "DELETE", path: target.itemPath(id), repeatable: true }),
        submitted(kind, answer, now): Submitted {
            const body = objectOf(answer.body);
            const name = stringField(body, "name");
            const isOperation = body !== undefined && ("done" in body || name?.includes("/operations/") === true);
            if (!isOperation) {
                // A method that is not long-running answers the resource (or Empty) itself.
                const record = kind === "delete" || answer.body === undefined ? {} : { record: answer.body };
                return { kind: "done", view: { state: "succeeded", status: String(answer.status), ...record } };
            }
            const view = operationView(answer.body, now);
            if (view.state !== "pending") return { kind: "done", view };
            if (!name || !OPERATION_NAME.test(name)) {
                return { kind: "done", view: { state: "pending", status: "an operation without a usable name" } };
            }
            return { kind: "operation", handle: { kind: OPERATION, ref: name }, view };
        },
        poll: (handle) => ({
            method: "GET",
            path: `${options.versionPrefix}/${handle.ref.split("/").map(encodeURIComponent).join("/")}`,
            repeatable: true,
        }),
        polled: (_handle, answer, now) => operationView(answer.body, now),
        pollsReadErrors: () => false,
        record: (answer: HttpAnswer) => answer.body,
        // AIP-216: a resource with a lifecycle says where it is in `state`; one being created, updated or
        // deleted is listed and readable (AIP-151), and its create may still fail and remove it.
        atRest: (record) => !IN_MOTION.has(String(objectOf(record)?.state)),
        meaning: googleMeaning,
    };
}

function operationView(body: unknown, _now: number): OperationView {
    const operation = objectOf(body);
    if (operation?.done !== true) return { state: "pending", status: "running" };
    const error = objectOf(operation.error);
    if (error) {
        const canceled = numberField(error, "code") === CANCELLED;
        return {
            state: canceled ? "canceled" : "failed",
            status: canceled ? "CANCELLED" : "error",
            error: describeError(error) ?? "an error",
        };
    }
    const response = operation.response;
    const resourceName = stringField(response, "name");
    return {
        state: "succeeded",
        status: "done",
        ...(response === undefined ? {} : { record: response }),
        ...(resourceName ? { resourceId: resourceName.slice(resourceName.lastIndexOf("/") + 1) } : {}),
    };
}

function googleMeaning(status: number, body: unknown): ErrorMeaning {
    const word = stringField(objectOf(body)?.error, "status");
    if (status === 404 || word === "NOT_FOUND") return "not-found";
    if (status === 409 || word === "ALREADY_EXISTS") return "conflict";
    if (status === 429 || word === "RESOURCE_EXHAUSTED") return "throttled";
    return undefined;
}

function withQuery(path: string, query: URLSearchParams): string {
    const text = query.toString();
    if (!text) return path;
    return `${path}${path.includes("?") ? "&" : "?"}${text}`;
}
