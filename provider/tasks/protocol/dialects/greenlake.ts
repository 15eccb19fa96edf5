// HPE GreenLake (data services), as HPE's own Terraform provider speaks it (HewlettPackard/
// hpegl-pcbe-terraform-resources: `internal/resources/datastore/resource.go`, `internal/async/async.go`,
// `internal/poll/operation.go`, and the answers it captured in `internal/simulator/fixtures/`). A write
// answers 202 with a `Location` of `/data-services/v1beta1/async-operations/{id}` (relative, or absolute:
// HPE's provider keeps only `path.Base` of it and reads the operation by that id, and so does this
// dialect, on the API's own origin). The operation is `{id, state, progressPercent,
// suggestedPollingIntervalSeconds, associatedResources [{name, type, resourceUri}], sourceResourceUri,
// error, logMessages [{message, timestamp}]}`; its states are INITIALIZED, RUNNING, PAUSED, SUCCEEDED,
// FAILED, TIMEDOUT, CANCELLED and UNSPECIFIED (the SDK's `state` field, "Expected values are ..."). What it
// made is its one associated resource; HPE saw none after a datastore create (FF-31311) and reads
// `sourceResourceUri` instead; with neither, the engine looks the resource up by its natural key, as HPE's
// provider does with a `name eq` filter. HPE's provider takes the resource's id as the last segment of that
// URI (`path.Base(uri)`), and so does this dialect: the resource is then read at its own item path.
// The API documents no idempotency for creates: they carry the IETF `Idempotency-Key` header, which the
// package's GreenLake server (provider/taskApiServer) honours as the draft says; an API that ignores it
// makes a create sent again a second request, which the natural key (409, or a lookup) then tells apart.

import { MalformedResponseError } from "../../errors/malformedResponseError";
import { TaskApiContractError } from "../../errors/taskApiContractError";
import { describeValue } from "../answers";
import { ASYNC_OPERATIONS_PATH, IDEMPOTENCY_KEY_HEADER, isApiId } from "../wire";
import { describeError, numberField, objectOf, oneOf, percentField, stringField } from "./answerFields";
import type { Dialect, ErrorMeaning, HttpAnswer, HttpCall, OperationHandle, OperationView, Submitted } from "./dialect";
import { chainKey } from "./tokenForms";

const OPERATION = "greenlake-operation";

/** States of an operation still under way. UNSPECIFIED claims no end: the deadline bounds the wait. */
const PENDING = ["INITIALIZED", "RUNNING", "PAUSED", "UNSPECIFIED"];
const SUCCEEDED = ["SUCCEEDED"];
/** TIMEDOUT is the API's own deadline passing: the operation ended without doing its work. */
const FAILED = ["FAILED", "TIMEDOUT"];
const CANCELED = ["CANCELLED", "CANCELED"];

/** The GreenLake data services dialect. */
export function greenlakeDialect(): Dialect {
    const keyed = (token: string | undefined): Record<string, string> =>
        token ? { [IDEMPOTENCY_KEY_HEADER]: token } : {};
    return {
        name: "greenlake",
        tokenReplaysCreate: true,
        createKey: chainKey,
        create: (target, body, token): HttpCall => ({
            method: "POST",
            path: target.collectionPath,
            body,
            headers: keyed(token),
            repeatable: !!token,
        }),
        read: (target, id) => ({ method: "GET", path: target.itemPath(id), repeatable: true }),
        update: (target, id, body, token) => ({
            method: "PATCH",
            path: target.itemPath(id),
            body,
            headers: keyed(token),
            repeatable: !!token,
        }),
        delete: (target, id) => ({ method: "DELETE", path: target.itemPath(id), repeatable: true }),
        submitted(kind, answer): Submitted {
            if (answer.status === 202) {
                const location = answer.header("location");
                const id = location === undefined ? undefined : operationIdOf(location);
                if (id === undefined) {
                    // Accepted, with nothing usable to follow it by: the engine looks the resource up.
                    const why =
                        location === undefined ? "without a Location" : "whose Location names no async operation";
                    return { kind: "done", view: { state: "pending", status: `202 ${why}` } };
                }
                return {
                    kind: "operation",
                    handle: { kind: OPERATION, ref: id },
                    view: { state: "pending", status: "202 Accepted" },
                };
            }
            // A write that answers at once (200, 201, 204) is over.
            const record = kind === "delete" || answer.body === undefined ? {} : { record: answer.body };
            return { kind: "done", view: { state: "succeeded", status: String(answer.status), ...record } };
        },
        poll: (handle) => ({ method: "GET", path: operationPath(handle), repeatable: true }),
        polled: (handle, answer) => operationView(handle, answer),
        pollsReadErrors: () => false,
        record: (answer: HttpAnswer) => answer.body,
        meaning: greenlakeMeaning,
        keyedConflictIsTaken: true,
        conflictHolder: (body) => objectOf(body)?.existingId ?? undefined,
    };
}

/**
 * What one look at an async operation says. An answer that is no operation at all (no object, no
 * string `state`) says nothing of it: the look failed, and the operation is followed on, not ended.
 */
function operationView(handle: OperationHandle, answer: HttpAnswer): OperationView {
    const operation = objectOf(answer.body);
    const state = stringField(operation, "state");
    if (state === undefined)
        throw new MalformedResponseError(
            "GET",
            operationPath(handle),
            `the answer is not an async operation: ${operation ? "it has no state" : "it is not an object"}`,
            answer.status,
        );
    const progress = percentField(operation, "progressPercent");
    const suggested = numberField(operation, "suggestedPollingIntervalSeconds");
    const base = {
        status: state || "no state",
        ...(progress === undefined ? {} : { progressPercent: progress }),
        ...(suggested === undefined || suggested < 0 ? {} : { retryAfterMs: suggested * 1000 }),
    };
    if (oneOf(state, PENDING)) return { ...base, state: "pending" };
    // The id is the URI's last segment (HPE's `path.Base`), when it is an id of the API's shape; the URI
    // itself goes along, for a caller that knows where the resource's collection is.
    const uri = madeUriOf(operation);
    const made = uri === undefined ? undefined : lastSegmentId(uri);
    const ended = {
        ...base,
        ...(made === undefined ? {} : { resourceId: made }),
        ...(uri === undefined ? {} : { resourceLocation: uri }),
    };
    if (oneOf(state, SUCCEEDED)) return { ...ended, state: "succeeded" };
    const error = describeError(operation?.error) ?? lastLogMessage(operation) ?? `state ${JSON.stringify(state)}`;
    if (oneOf(state, CANCELED)) return { ...ended, state: "canceled", error };
    if (oneOf(state, FAILED)) return { ...ended, state: "failed", error };
    // A state the API does not document (or none) is no success: the operation ends as failed.
    const unknown = `the operation's state ${JSON.stringify(state)} is none of ${[...PENDING, ...SUCCEEDED, ...FAILED, "CANCELLED"].join(", ")}`;
    return { ...ended, state: "failed", error: unknown };
}

/**
 * The URI of what an operation acted on: its one associated resource, else its `sourceResourceUri`.
 * Several associated resources name no one of them (HPE's provider requires exactly one).
 */
function madeUriOf(operation: Record<string, unknown> | undefined): string | undefined {
    const associated = operation?.associatedResources;
    if (Array.isArray(associated) && associated.length > 0) {
        const uris = associated.map((resource) => stringField(resource, "resourceUri"));
        if (uris.length === 1 && uris[0] !== undefined) return uris[0];
        if (uris.length > 1) return undefined;
    }
    return stringField(operation, "sourceResourceUri");
}

/** Where an operation is read; a handle from the stack's state not of the API's shape sends no request. */
function operationPath(handle: OperationHandle): string {
    return `${ASYNC_OPERATIONS_PATH}/${encodeURIComponent(checkedApiId(handle.ref, "task"))}`;
}

/**
 * `value` (a task's or a datastore's id from the stack's state) when the API could have issued it; else
 * TaskApiContractError, and no request is sent for it.
 */
export function checkedApiId(value: unknown, what: "task" | "datastore"): string {
    if (isApiId(value)) return value;
    throw new TaskApiContractError(
        `the ${what} id ${describeValue(value)} is not an id of the task API (one path segment of letters, digits, ` +
            `".", "_", "~", "-"), so no request was sent for it. Run \`pulumi refresh\` to look the datastore up again.`,
    );
}

/** The operation's id in a 202's Location: `<ASYNC_OPERATIONS_PATH>/<id>`, relative or absolute. */
function operationIdOf(location: string): string | undefined {
    let path: string;
    try {
        const url = new URL(location, "http://origin.invalid");
        if (url.search || url.hash) return undefined;
        path = url.pathname;
    } catch {
        return undefined;
    }
    const prefix = `${ASYNC_OPERATIONS_PATH}/`;
    if (!path.startsWith(prefix)) return undefined;
    const id = decoded(path.slice(prefix.length));
    return id !== undefined && isApiId(id) ? id : undefined;
}

/** The last segment of a resource URI, decoded, when it is an id of the API's shape. */
function lastSegmentId(uri: string): string | undefined {
    let path: string;
    try {
        const url = new URL(uri, "http://origin.invalid");
        if (url.search || url.hash) return undefined;
        path = url.pathname;
    } catch {
        return undefined;
    }
    const id = decoded(path.slice(path.lastIndexOf("/") + 1));
    return id !== undefined && isApiId(id) ? id : undefined;
}

function decoded(segment: string): string | undefined {
    try {
        return decodeURIComponent(segment);
    } catch {
        return undefined;
    }
}

/** The newest line of the operation's log: what HPE's operations say when `error` is null. */
function lastLogMessage(operation: Record<string, unknown> | undefined): string | undefined {
    const log = operation?.logMessages;
    if (!Array.isArray(log) || log.length === 0) return undefined;
    return stringField(log[log.length - 1], "message");
}

/**
 * What GreenLake's error statuses mean. 409 is a name already taken (the package's server says which
 * datastore in `existingId`); 422 is an Idempotency-Key sent again with another body (the IETF draft).
 */
function greenlakeMeaning(status: number): ErrorMeaning {
    if (status === 404) return "not-found";
    if (status === 409) return "conflict";
    if (status === 422) return "token-reused";
    if (status === 429) return "throttled";
    return undefined;
}
