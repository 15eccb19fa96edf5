// Azure's current REST guidelines (microsoft/api-guidelines `azure/Guidelines.md`, "Long-running
// operations" and "Repeatability of requests"). A long-running write answers 201 (PUT) or 202
// (POST, DELETE) with an `Operation-Location` header; GET it answers `{id, status, error?, result?}`
// with status NotStarted or Running until Succeeded, Failed or Canceled, and `Retry-After` on every
// non-terminal answer. A write that finishes at once answers 200 (or 204) with no header. POST actions
// are made safe to repeat by `Repeatability-Request-ID` and `Repeatability-First-Sent`; PUT is idempotent
// by itself, and updates are PUTs of the whole resource (create-or-replace: the program's body is all of it;
// a JSON merge-patch PATCH is optional in the guidelines, and not every service has one).

import { parseRetryAfter } from "../retryAfter";
import { describeError, objectOf, oneOf, percentField, stringField } from "./answerFields";
import type { Dialect, ErrorMeaning, HttpAnswer, OperationView, Submitted } from "./dialect";
import { chainKey } from "./tokenForms";

const OPERATION = "operation-location";

/** The Azure REST guidelines dialect. */
export function azureDialect(): Dialect {
    return {
        name: "azure",
        tokenReplaysCreate: false,
        createKey: chainKey,
        create(target, body) {
            if (target.createId === undefined)
                throw new Error("an Azure create (PUT) needs the resource's name up front");
            return { method: "PUT", path: target.itemPath(target.createId), body, repeatable: true };
        },
        read: (target, id) => ({ method: "GET", path: target.itemPath(id), repeatable: true }),
        // PUT replaces the whole resource (create-or-replace, idempotent): the body is all of it.
        update: (target, id, body) => ({ method: "PUT", path: target.itemPath(id), body, repeatable: true }),
        delete: (target, id) => ({ method: "DELETE", path: target.itemPath(id), repeatable: true }),
        submitted(kind, answer, now): Submitted {
            const operation = answer.header("operation-location");
            if (operation) {
                const retryAfterMs = parseRetryAfter(answer.header("retry-after"), now);
                const view: OperationView = {
                    state: "pending",
                    status: String(answer.status),
                    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
                };
                return { kind: "operation", handle: { kind: OPERATION, ref: operation }, view };
            }
            const record = kind === "delete" || answer.body === undefined ? {} : { record: answer.body };
            return { kind: "done", view: { state: "succeeded", status: String(answer.status), ...record } };
        },
        poll: (handle) => ({ method: "GET", path: handle.ref, repeatable: true }),
        polled(_handle, answer, now): OperationView {
            const status = stringField(answer.body, "status") ?? "";
            const retryAfterMs = parseRetryAfter(answer.header("retry-after"), now);
            const progress = percentField(answer.body, "percentComplete");
            const base = {
                status,
                ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
                ...(progress === undefined ? {} : { progressPercent: progress }),
            };
            if (oneOf(status, ["NotStarted", "Running"])) return { ...base, state: "pending" };
            if (oneOf(status, ["Succeeded"])) {
                const result = objectOf(answer.body)?.result;
                return { ...base, state: "succeeded", ...(result === undefined ? {} : { record: result }) };
            }
            const error = describeError(objectOf(answer.body)?.error) ?? `status ${JSON.stringify(status)}`;
            // Anything but the guidelines' words is no success: an unknown status ends the operation as failed.
            return { ...base, state: oneOf(status, ["Canceled", "Cancelled"]) ? "canceled" : "failed", error };
        },
        pollsReadErrors: () => false,
        record: (answer: HttpAnswer) => answer.body,
        meaning: azureMeaning,
    };
}

function azureMeaning(status: number): ErrorMeaning {
    if (status === 404) return "not-found";
    if (status === 409) return "conflict";
    if (status === 429) return "throttled";
    return undefined;
}
