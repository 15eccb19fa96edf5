// The generic dialect: a write answered 202 with a status monitor (RFC 9110 section 15.3.3; Zalando
// guideline 253), whose status, monitor URL and resource are found where the program says (locators,
// see locator.ts), compared case-insensitively with the program's success, pending and canceled words
// (anything else is failure, as in magodo/terraform-provider-restful). Creates carry the IETF
// `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header: missing -> 400, reused with
// another body -> 422, retried while the first is handled -> 409). A write answered 200 or 201 is done.

import { parseRetryAfter } from "../retryAfter";
import { describeError, objectOf, oneOf } from "./answerFields";
import type { Dialect, ErrorMeaning, HttpAnswer, HttpCall, OperationHandle, OperationView, Target } from "./dialect";
import { type Locator, locate } from "./locator";
import { chainKey } from "./tokenForms";

/** How the program says its API follows writes. */
export interface GenericOptions {
    readonly createMethod: "POST" | "PUT";
    readonly updateMethod: "PATCH" | "PUT" | "POST";
    /** Where a 202 names its status monitor (default `header.Location`). */
    readonly monitor: Locator;
    /** Where a monitor's answer has the status (default `body.status`). */
    readonly status: Locator;
    readonly success: readonly string[];
    readonly pending: readonly string[];
    readonly canceled: readonly string[];
    /** Where the monitor's final answer names the resource (a URL or path), if it does. */
    readonly resource?: Locator;
    /** The header that carries the create token (default `Idempotency-Key`). */
    readonly idempotencyHeader: string;
}

/** The defaults: the status in `status`, words as the IETF and Zalando examples write them. */
export const GENERIC_DEFAULTS: GenericOptions = {
    createMethod: "POST",
    updateMethod: "PATCH",
    monitor: { from: "header", name: "Location" },
    status: { from: "body", at: { source: "status", steps: ["status"] } },
    success: ["succeeded", "success", "done", "completed"],
    pending: ["pending", "running", "in_progress", "inprogress", "accepted", "queued", "notstarted"],
    canceled: ["canceled", "cancelled"],
    resource: { from: "header", name: "Location" },
    idempotencyHeader: "Idempotency-Key",
};

const MONITOR = "monitor";

/** The generic dialect with the program's options. */
export function genericDialect(options: GenericOptions): Dialect {
    const keyed = (token: string | undefined): Record<string, string> =>
        token ? { [options.idempotencyHeader]: token } : {};
    return {
        name: "generic",
        tokenReplaysCreate: options.createMethod === "POST",
        createKey: chainKey,
        create(target: Target, body: unknown, token: string | undefined): HttpCall {
            if (options.createMethod === "PUT" && target.createId !== undefined) {
                return {
                    method: "PUT",
                    path: target.itemPath(target.createId),
                    body,
                    headers: keyed(token),
                    repeatable: true,
                };
            }
            return { method: "POST", path: target.collectionPath, body, headers: keyed(token), repeatable: !!token };
        },
        read: (target, id) => ({ method: "GET", path: target.itemPath(id), repeatable: true }),
        update(target, id, body, token) {
            const method = options.updateMethod;
            return {
                method,
                path: target.itemPath(id),
                body,
                headers: keyed(token),
                repeatable: method === "PUT" || !!token,
            };
        },
        delete: (target, id) => ({ method: "DELETE", path: target.itemPath(id), repeatable: true }),
        submitted(_kind, answer, now) {
            if (answer.status === 202) {
                const monitor = locate(answer, options.monitor);
                if (monitor)
                    return {
                        kind: "operation",
                        handle: { kind: MONITOR, ref: monitor },
                        view: pendingView(answer, now),
                    };
                // 202 without a monitor: accepted, but nothing to follow it by; the engine looks the resource up.
                return { kind: "done", view: { state: "pending", status: "202 without a monitor" } };
            }
            return { kind: "done", view: doneView(answer, options) };
        },
        poll: (handle: OperationHandle) => ({ method: "GET", path: handle.ref, repeatable: true }),
        polled(_handle, answer, now): OperationView {
            const word = locate(answer, options.status);
            const retryAfterMs = parseRetryAfter(answer.header("retry-after"), now);
            const timing = retryAfterMs === undefined ? {} : { retryAfterMs };
            if (word === undefined)
                return {
                    state: "failed",
                    status: "no status",
                    error: `the monitor's answer has no status at ${describeLocator(options.status)}`,
                    ...timing,
                };
            if (oneOf(word, options.pending)) return { state: "pending", status: word, ...timing };
            if (oneOf(word, options.success)) {
                // A monitor located by code answers with the resource itself at the end (RFC 9110 15.3.3).
                const record =
                    options.status.from === "code" && answer.body !== undefined ? { record: answer.body } : {};
                return { ...resourceOf(answer, options), ...record, state: "succeeded", status: word };
            }
            const error = describeError(objectOf(answer.body)?.error) ?? `status ${JSON.stringify(word)}`;
            return { state: oneOf(word, options.canceled) ? "canceled" : "failed", status: word, error };
        },
        pollsReadErrors: () => options.status.from === "code",
        record: (answer: HttpAnswer) => answer.body,
        meaning: genericMeaning,
    };
}

/**
 * What the IETF draft and HTTP say error statuses mean. A 409 is the draft's "a request with this key is
 * outstanding" when its problem details say so (the draft's example: type ".../idempotency", title "A
 * request is outstanding for this Idempotency-Key"), and otherwise a conflict with what exists.
 */
export function genericMeaning(status: number, body?: unknown): ErrorMeaning {
    if (status === 404 || status === 410) return "not-found";
    if (status === 409) return aboutTheKey(body) ? "token-in-progress" : "conflict";
    if (status === 422) return "token-reused";
    if (status === 429) return "throttled";
    return undefined;
}

/** Whether an error body's type, title or code speaks of the idempotency key. */
function aboutTheKey(body: unknown): boolean {
    const fields = objectOf(body);
    const words = [fields?.type, fields?.title, fields?.code, fields?.error].filter((v) => typeof v === "string");
    return words.some((word) => /idempoten/i.test(word as string));
}

function pendingView(answer: HttpAnswer, now: number): OperationView {
    const retryAfterMs = parseRetryAfter(answer.header("retry-after"), now);
    return { state: "pending", status: "202 Accepted", ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

function doneView(answer: HttpAnswer, options: GenericOptions): OperationView {
    return { ...resourceOf(answer, options), state: "succeeded", status: String(answer.status), record: answer.body };
}

function resourceOf(answer: HttpAnswer, options: GenericOptions): Partial<OperationView> {
    const location = options.resource ? locate(answer, options.resource) : undefined;
    return location ? { resourceLocation: location } : {};
}

function describeLocator(locator: Locator): string {
    return locator.from === "code"
        ? "code"
        : locator.from === "header"
          ? `header.${locator.name}`
          : `body.${locator.at.source}`;
}
