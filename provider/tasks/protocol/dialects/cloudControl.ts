// AWS Cloud Control (botocore `cloudcontrol/2021-09-30/service-2.json`): AWS JSON 1.0, every call a
// POST to `/` named by `X-Amz-Target: CloudApiService.<Operation>` and signed with SigV4 (by the
// client, not here). Writes answer `{ProgressEvent}`: `OperationStatus` PENDING, IN_PROGRESS or
// CANCEL_IN_PROGRESS until SUCCESS, FAILED or CANCEL_COMPLETE; `RequestToken` follows it
// (GetResourceRequestStatus), so it is what is recorded of an interrupted create; `Identifier` may come
// only at SUCCESS; `RetryAfter` is a timestamp; a FAILED event with `ErrorCode: Throttling` did nothing
// and is submitted again with a fresh `ClientToken` (the old one would replay the failure). The token
// makes a repeated write replay (for 36 hours); reused with another body it is
// ClientTokenConflictException. Errors are `{__type, Message}` with status 400.

import { parseRetryAt } from "../retryAfter";
import { objectOf, stringField } from "./answerFields";
import type { Dialect, ErrorMeaning, HttpAnswer, HttpCall, OperationView, Submitted, Target } from "./dialect";
import { uuidKey } from "./tokenForms";

const TARGET_PREFIX = "CloudApiService.";
const CONTENT_TYPE = "application/x-amz-json-1.0";
const REQUEST = "request-token";

const PENDING = ["PENDING", "IN_PROGRESS", "CANCEL_IN_PROGRESS"];

/** The AWS Cloud Control dialect. */
export function cloudControlDialect(): Dialect {
    const call = (operation: string, body: Record<string, unknown>, repeatable: boolean): HttpCall => ({
        method: "POST",
        path: "/",
        body,
        headers: { "x-amz-target": `${TARGET_PREFIX}${operation}`, "content-type": CONTENT_TYPE },
        repeatable,
    });
    return {
        name: "aws-cloudcontrol",
        tokenReplaysCreate: true,
        createKey: uuidKey,
        create: (target, body, token) =>
            call(
                "CreateResource",
                {
                    TypeName: typeName(target),
                    DesiredState: JSON.stringify(body),
                    ...(token ? { ClientToken: token } : {}),
                },
                !!token,
            ),
        read: (target, id) => call("GetResource", { TypeName: typeName(target), Identifier: id }, true),
        update: (target, id, body, token) =>
            call(
                "UpdateResource",
                {
                    TypeName: typeName(target),
                    Identifier: id,
                    PatchDocument: JSON.stringify(patchOf(body)),
                    ...(token ? { ClientToken: token } : {}),
                },
                !!token,
            ),
        delete: (target, id) => call("DeleteResource", { TypeName: typeName(target), Identifier: id }, true),
        submitted(_kind, answer, now): Submitted {
            const event = objectOf(objectOf(answer.body)?.ProgressEvent);
            const view = eventView(event, now);
            const token = stringField(event, "RequestToken");
            if (view.state !== "pending") return { kind: "done", view };
            if (!token)
                return { kind: "done", view: { state: "pending", status: "a ProgressEvent without a RequestToken" } };
            return { kind: "operation", handle: { kind: REQUEST, ref: token }, view };
        },
        poll: (handle) => call("GetResourceRequestStatus", { RequestToken: handle.ref }, true),
        polled: (_handle, answer, now) => eventView(objectOf(objectOf(answer.body)?.ProgressEvent), now),
        pollsReadErrors: () => false,
        runningDeletes: {
            call: (_target, page) =>
                call(
                    "ListResourceRequests",
                    {
                        ResourceRequestStatusFilter: { Operations: ["DELETE"], OperationStatuses: PENDING },
                        ...(page === undefined ? {} : { NextToken: page }),
                    },
                    true,
                ),
            read(target, id, answer) {
                const body = objectOf(answer.body);
                const summaries = Array.isArray(body?.ResourceRequestStatusSummaries)
                    ? body.ResourceRequestStatusSummaries
                    : [];
                // The filter is the API's to honour: each summary is checked here too.
                const running = summaries
                    .map((summary) => objectOf(summary))
                    .filter(
                        (event) =>
                            stringField(event, "TypeName") === typeName(target) &&
                            stringField(event, "Identifier") === id &&
                            stringField(event, "Operation") === "DELETE" &&
                            PENDING.includes(stringField(event, "OperationStatus") ?? "") &&
                            stringField(event, "RequestToken") !== undefined,
                    )
                    .map((event) => ({ kind: REQUEST, ref: stringField(event, "RequestToken") as string }));
                const next = stringField(body, "NextToken");
                return next ? { running, next } : { running };
            },
        },
        record(answer: HttpAnswer): unknown {
            const description = objectOf(objectOf(answer.body)?.ResourceDescription);
            const properties = stringField(description, "Properties");
            if (properties === undefined) return undefined;
            try {
                return JSON.parse(properties) as unknown;
            } catch {
                return undefined;
            }
        },
        meaning: cloudControlMeaning,
    };
}

function typeName(target: Target): string {
    if (!target.typeName) throw new Error("a Cloud Control resource needs its type name");
    return target.typeName;
}

/** A JSON patch (RFC 6902) that sets every top-level property of `body`: `add` replaces a member that exists. */
function patchOf(body: unknown): Array<{ op: "add"; path: string; value: unknown }> {
    return Object.entries(objectOf(body) ?? {}).map(([name, value]) => ({
        op: "add",
        path: `/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`,
        value,
    }));
}

function eventView(event: Record<string, unknown> | undefined, now: number): OperationView {
    const status = stringField(event, "OperationStatus") ?? "";
    const retryAfterMs = parseRetryAt(event?.RetryAfter, now);
    const identifier = stringField(event, "Identifier");
    const base = {
        status,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...(identifier ? { resourceId: identifier } : {}),
    };
    if (PENDING.includes(status)) return { ...base, state: "pending" };
    if (status === "SUCCESS") {
        const model = stringField(event, "ResourceModel");
        let record: unknown;
        try {
            record = model === undefined ? undefined : (JSON.parse(model) as unknown);
        } catch {
            record = undefined;
        }
        return { ...base, state: "succeeded", ...(record === undefined ? {} : { record }) };
    }
    const code = stringField(event, "ErrorCode");
    const message = stringField(event, "StatusMessage");
    const error = [code, message].filter(Boolean).join(": ") || `OperationStatus ${JSON.stringify(status)}`;
    if (status === "CANCEL_COMPLETE") return { ...base, state: "canceled", error };
    return { ...base, state: "failed", error, ...(code === "Throttling" ? { resubmit: true } : {}) };
}

/** The exception in `__type` (`com.amazonaws.cloudcontrol#ThrottlingException` or bare). */
function cloudControlMeaning(_status: number, body: unknown): ErrorMeaning {
    const type = stringField(body, "__type") ?? "";
    const name = type.slice(type.lastIndexOf("#") + 1);
    switch (name) {
        case "ResourceNotFoundException":
            return "not-found";
        case "AlreadyExistsException":
            return "conflict";
        case "ClientTokenConflictException":
            return "token-reused";
        case "ThrottlingException":
        case "ConcurrentOperationException":
            return "throttled";
        default:
            return undefined;
    }
}
