// Azure Resource Manager (Azure/azure-resource-manager-rpc, v1.0 `async-api-reference.md` and
// `resource-api-reference.md`). Creates are PUTs to the resource's own URL (idempotent: no token), so
// the id is set by the program. A write answers:
// - 200/201 with an `Azure-AsyncOperation` header: follow that operation-status resource (always 200
//   while readable; `status` is non-terminal until Succeeded, Failed or Canceled; `error {code,
//   message}`, `percentComplete`); on success the resource is read from its own URL;
// - 202 with `Location` only: GET it answers 202 while running, then the final answer (200/204), or an
//   error status with the error (the HTTP code is the status);
// - 200/201 without headers: done, unless `properties.provisioningState` is non-terminal, when the
//   resource itself is polled until its provisioningState is Succeeded (or absent), Failed or Canceled.
// `Retry-After` (seconds) says when to look again; ARM clients wait 60 s when it is absent on a 202.
// DELETE answers 200, 202 (+ Location / Azure-AsyncOperation) or 204 (nothing there).

import { parseRetryAfter } from "../retryAfter";
import { select, selector } from "../selector";
import { describeError, objectOf, oneOf, percentField, stringField } from "./answerFields";
import type { Dialect, ErrorMeaning, HttpAnswer, OperationHandle, OperationView, Submitted } from "./dialect";
import { chainKey } from "./tokenForms";

/** The wait ARM clients use when a 202 names no Retry-After (the RPC's default). */
export const ARM_DEFAULT_RETRY_AFTER_MS = 60_000;

const ASYNC = "azure-async";
const LOCATION = "location";
const RESOURCE = "resource";
const PROVISIONING_STATE = selector("properties.provisioningState");

/** The Azure Resource Manager dialect. */
export function azureArmDialect(): Dialect {
    return {
        name: "azure-arm",
        tokenReplaysCreate: false,
        createKey: chainKey,
        create(target, body) {
            if (target.createId === undefined)
                throw new Error("an Azure Resource Manager create needs the resource's name up front");
            return { method: "PUT", path: target.itemPath(target.createId), body, repeatable: true };
        },
        read: (target, id) => ({ method: "GET", path: target.itemPath(id), repeatable: true }),
        // An update is the PUT a create is ("create and update are one PUT" in the RPC; PATCH is optional
        // for a resource provider): the body is the whole resource, and the same PUT again joins an
        // operation already running on it, where a PATCH would be refused 409 AnotherOperationInProgress.
        update: (target, id, body) => ({ method: "PUT", path: target.itemPath(id), body, repeatable: true }),
        delete: (target, id) => ({ method: "DELETE", path: target.itemPath(id), repeatable: true }),
        submitted(kind, answer, now, call): Submitted {
            const asyncOperation = answer.header("azure-asyncoperation");
            const location = answer.header("location");
            const retryAfterMs = parseRetryAfter(answer.header("retry-after"), now);
            const pending: OperationView = {
                state: "pending",
                status: String(answer.status),
                ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
            };
            if (asyncOperation)
                return { kind: "operation", handle: { kind: ASYNC, ref: asyncOperation }, view: pending };
            if (answer.status === 202 && location) {
                return {
                    kind: "operation",
                    handle: { kind: LOCATION, ref: location },
                    view: { ...pending, retryAfterMs: retryAfterMs ?? ARM_DEFAULT_RETRY_AFTER_MS },
                };
            }
            if (answer.status === 202)
                return { kind: "done", view: { state: "pending", status: "202 without a Location" } };
            if (kind === "delete") return { kind: "done", view: { state: "succeeded", status: String(answer.status) } };
            const view = provisioningView(answer.body);
            if (view.state === "pending") {
                // Polled at the URL the write went to: the record's `id` has no api-version, which ARM
                // requires on every request. [D]
                const id = call?.path ?? stringField(answer.body, "id");
                if (id) return { kind: "operation", handle: { kind: RESOURCE, ref: id }, view };
            }
            return { kind: "done", view: { ...view, record: answer.body } };
        },
        poll: (handle: OperationHandle) => ({ method: "GET", path: handle.ref, repeatable: true }),
        polled(handle, answer, now): OperationView {
            const retryAfterMs = parseRetryAfter(answer.header("retry-after"), now);
            const timing = retryAfterMs === undefined ? {} : { retryAfterMs };
            if (handle.kind === LOCATION) {
                if (answer.status === 202)
                    return {
                        state: "pending",
                        status: "202",
                        retryAfterMs: retryAfterMs ?? ARM_DEFAULT_RETRY_AFTER_MS,
                    };
                if (answer.status < 300)
                    return {
                        state: "succeeded",
                        status: String(answer.status),
                        ...(answer.body === undefined ? {} : { record: answer.body }),
                    };
                const error = describeError(objectOf(answer.body)?.error) ?? `HTTP ${answer.status}`;
                return { state: "failed", status: String(answer.status), error };
            }
            if (handle.kind === RESOURCE) return { ...provisioningView(answer.body), ...timing, record: answer.body };
            const status = stringField(answer.body, "status") ?? "";
            const progress = percentField(answer.body, "percentComplete");
            const base = { status, ...timing, ...(progress === undefined ? {} : { progressPercent: progress }) };
            if (oneOf(status, ["Succeeded"])) return { ...base, state: "succeeded" };
            const error = describeError(objectOf(answer.body)?.error) ?? `status ${status}`;
            if (oneOf(status, ["Failed"])) return { ...base, state: "failed", error };
            if (oneOf(status, ["Canceled", "Cancelled"])) return { ...base, state: "canceled", error };
            return { ...base, state: "pending" };
        },
        // A Location monitor's error status is the operation's failure, not a failed look at it.
        pollsReadErrors: (handle) => handle.kind === LOCATION,
        record: (answer: HttpAnswer) => answer.body,
        atRest: (record) => provisioningView(record).state !== "pending",
        brokenReason: (record) => {
            const view = provisioningView(record);
            return view.state === "failed" || view.state === "canceled"
                ? `its provisioningState is ${view.status} at the API`
                : undefined;
        },
        // ARM's RPC names Deleting among the non-terminal provisioning states of an async DELETE.
        beingDeleted: (record) => {
            const state = select(record, PROVISIONING_STATE);
            return typeof state === "string" && oneOf(state, ["Deleting"]);
        },
        meaning: armMeaning,
    };
}

/** ARM's error statuses. A PUT to an existing name is an update, so ARM has no create conflict. */
export function armMeaning(status: number): ErrorMeaning {
    if (status === 404) return "not-found";
    if (status === 429) return "throttled";
    return undefined;
}

/** A resource's `properties.provisioningState`: absent or Succeeded is done; Failed, Canceled end it. */
function provisioningView(resource: unknown): OperationView {
    const state = select(resource, PROVISIONING_STATE);
    if (typeof state !== "string" || oneOf(state, ["Succeeded"]))
        return { state: "succeeded", status: typeof state === "string" ? state : "Succeeded" };
    if (oneOf(state, ["Failed"])) return { state: "failed", status: state, error: `provisioningState ${state}` };
    if (oneOf(state, ["Canceled", "Cancelled"]))
        return { state: "canceled", status: state, error: `provisioningState ${state}` };
    return { state: "pending", status: state };
}
