// An AWS Cloud Control API server for one resource type, written from the public contract: botocore
// `botocore/data/cloudcontrol/2021-09-30/service-2.json` (protocol json, jsonVersion 1.0, targetPrefix
// CloudApiService, signingName cloudcontrolapi, SigV4). Every call is `POST /` with
// `X-Amz-Target: CloudApiService.<Operation>` and an `application/x-amz-json-1.0` body:
// - CreateResource {TypeName, DesiredState (a JSON string), ClientToken?} -> {ProgressEvent};
//   UpdateResource {TypeName, Identifier, PatchDocument (an RFC 6902 JSON string), ClientToken?};
//   DeleteResource {TypeName, Identifier, ClientToken?}; GetResourceRequestStatus {RequestToken};
//   CancelResourceRequest {RequestToken} ("only ... PENDING or IN_PROGRESS can be canceled");
//   GetResource {TypeName, Identifier} -> {TypeName, ResourceDescription {Identifier, Properties}};
//   ListResources, ListResourceRequests.
// - ProgressEvent {TypeName, Identifier ("may be available before ... SUCCESS"), RequestToken, Operation
//   CREATE|UPDATE|DELETE, OperationStatus PENDING|IN_PROGRESS|SUCCESS|FAILED|CANCEL_IN_PROGRESS|
//   CANCEL_COMPLETE, EventTime ("when the request was initiated"), ResourceModel (a JSON string),
//   StatusMessage, ErrorCode (HandlerErrorCode: NotFound, AlreadyExists, Throttling, ...), RetryAfter
//   ("when to next request the status")}. Timestamps are epoch seconds, as the JSON protocol sends them.
// - ClientToken: "valid for 36 hours once used"; reused in another request -> ClientTokenConflictException.
// - Errors: `{"__type": "<namespace>#<Shape>", "Message"}`, 400 for client errors, 500 for the shapes
//   marked `fault`; ThrottlingException is a 400.
//
// Where the contract is silent (decisions): the type is `Test::Widgets::Widget`, primary identifier
// `Name` (create-only), a read-only `Arn` added by the handler; a resource is not readable until its
// create succeeds (`resultLate`: one GetResource more); `Identifier` of a CREATE event is sent only at
// SUCCESS unless `identifierEarly`; a taken Name or a gone Identifier is an exception (default) or a
// FAILED event with ErrorCode AlreadyExists/NotFound (`handlerErrors: "event"`); a second operation on a
// resource with one running is ConcurrentOperationException; a ClientToken matches when the request is
// the same call with the same members (DesiredState and PatchDocument compared as JSON, key order
// aside); a throttle with hint "body" on Create/Update/Delete is answered with a FAILED event
// (ErrorCode Throttling, nothing made, RetryAfter the hint) whose ClientToken is then spent, every
// other throttle with ThrottlingException; canceling a finished request returns it unchanged; a request
// the plan fails ends with ErrorCode GeneralServiceException unless `failNextWith` said otherwise.
// Operations advance only when polled. Authentication: SigV4 (./sigv4.ts), fixed test credentials.
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
import {
    checkSigV4Form,
    type SigV4Failure,
    TEST_CREDENTIALS,
    TEST_REGION,
    TEST_SERVICE,
    type TestCredentials,
    type VerifyOptions,
    verifySigV4,
} from "./sigv4";

export const TYPE_NAME = "Test::Widgets::Widget";
export const TARGET_PREFIX = "CloudApiService.";
export const AWS_JSON = "application/x-amz-json-1.0";
const NAMESPACE = "com.amazonaws.cloudcontrol";
const CLIENT_TOKEN_TTL_MS = 36 * 3600 * 1000;
const CLIENT_TOKEN = /^[-A-Za-z0-9+/=]{1,128}$/;

export type HandlerErrorCode =
    | "NotUpdatable"
    | "InvalidRequest"
    | "AccessDenied"
    | "InvalidCredentials"
    | "AlreadyExists"
    | "NotFound"
    | "ResourceConflict"
    | "Throttling"
    | "ServiceLimitExceeded"
    | "NotStabilized"
    | "GeneralServiceException"
    | "ServiceInternalError"
    | "ServiceTimeout"
    | "NetworkFailure"
    | "InternalFailure";

type OperationStatus = "PENDING" | "IN_PROGRESS" | "SUCCESS" | "FAILED" | "CANCEL_IN_PROGRESS" | "CANCEL_COMPLETE";
type Operation = "CREATE" | "UPDATE" | "DELETE";

export interface CloudControlServerOptions {
    faults?: FaultPlan;
    operations?: OperationPlan;
    credentials?: TestCredentials;
    region?: string;
    /** The server's clock in ms (EventTime, RetryAfter, ClientToken expiry, SigV4 skew); default Date.now. */
    now?: () => number;
    /** Send a CREATE event's Identifier from the start instead of only at SUCCESS. */
    identifierEarly?: boolean;
    /** A taken Name or a gone Identifier: an exception (default) or a FAILED event with its ErrorCode. */
    handlerErrors?: "exception" | "event";
    /** The RetryAfter of a running request, in seconds from now; default 5. */
    retryAfterSeconds?: number;
    /** `__type` as `namespace#Shape` (default, as AWS services send it) or the bare shape name. */
    errorTypes?: "namespaced" | "plain";
    port?: number;
}

/** The Cloud Control server, with a look at its requests that does not advance them. */
export interface CloudControlServer extends DialectServer {
    /** The resource requests' ProgressEvents, as GetResourceRequestStatus would show them now. */
    requests(): ReadonlyArray<Record<string, unknown>>;
    /** The next `times` Create/Update/Delete requests end FAILED with `code` when their script finishes them. */
    failNextWith(code: HandlerErrorCode, times?: number): void;
}

interface ResourceRequest {
    token: string;
    operation: Operation;
    identifier: string;
    script: OperationScript;
    polls: number;
    status: OperationStatus;
    eventTime: number;
    errorCode?: HandlerErrorCode;
    statusMessage?: string;
    /** CREATE: the desired state; UPDATE: the patched model. */
    model?: Record<string, unknown>;
    /** The ErrorCode it will fail with, decided when it was accepted. */
    failWith?: HandlerErrorCode;
    /** Whether it put the resource in its state (creating, updating, deleting), so an end undoes that. */
    claimed: boolean;
    retryAfter?: number;
}

interface Resource {
    model: Record<string, unknown>;
    state: "creating" | "live" | "updating" | "deleting";
    hiddenGets: number;
}

interface Call {
    target: string;
    input: Record<string, unknown>;
}

const FAULT_SHAPES = new Set([
    "HandlerFailureException",
    "HandlerInternalFailureException",
    "NetworkFailureException",
    "ServiceInternalErrorException",
    "ConcurrentModificationException",
    "InternalFailure",
    "ServiceUnavailable",
]);

const OPERATION_NAMES: Record<string, string> = {
    CreateResource: "create",
    UpdateResource: "update",
    DeleteResource: "delete",
    GetResource: "get",
    GetResourceRequestStatus: "poll",
    ListResources: "list",
    CancelResourceRequest: "cancel",
    ListResourceRequests: "list-requests",
};

/** The kit's operation name of an AWS JSON call, from its X-Amz-Target. */
export function operationOfTarget(target: string | string[] | undefined): string {
    const value = Array.isArray(target) ? target[0] : target;
    if (value === undefined || !value.startsWith(TARGET_PREFIX)) return "unknown";
    return OPERATION_NAMES[value.slice(TARGET_PREFIX.length)] ?? "unknown";
}

/** Starts the Cloud Control server on 127.0.0.1 (a free port unless `port` is given). */
export async function startCloudControlServer(options: CloudControlServerOptions = {}): Promise<CloudControlServer> {
    const now = options.now ?? Date.now;
    const verify: VerifyOptions = {
        credentials: options.credentials ?? TEST_CREDENTIALS,
        region: options.region ?? TEST_REGION,
        service: TEST_SERVICE,
        now,
    };
    const retryAfterMs = (options.retryAfterSeconds ?? 5) * 1000;
    let plan = options.operations ?? fixedOperations({});
    let faults = options.faults ?? noFaults();
    const resources = new Map<string, Resource>();
    const requests = new Map<string, ResourceRequest>();
    const clientTokens = new Map<string, { fingerprint: string; token: string; at: number }>();
    const failures: HandlerErrorCode[] = [];
    const counts = { creates: 0, duplicates: 0, unauthorized: 0, outsideApi: 0 };

    const error = (shape: string, message: string): KitResponse => ({
        status: FAULT_SHAPES.has(shape) ? 500 : 400,
        headers: { "content-type": AWS_JSON, "x-amzn-errortype": shape, "x-amzn-requestid": randomUUID() },
        body: { __type: options.errorTypes === "plain" ? shape : `${NAMESPACE}#${shape}`, Message: message },
    });
    const ok = (body: Record<string, unknown>): KitResponse => ({
        status: 200,
        headers: { "content-type": AWS_JSON, "x-amzn-requestid": randomUUID() },
        body,
    });

    const withArn = (model: Record<string, unknown>): Record<string, unknown> => ({
        ...model,
        Arn: `arn:aws:testwidgets:${verify.region}:123456789012:widget/${String(model.Name)}`,
    });

    const eventOf = (request: ResourceRequest): Record<string, unknown> => {
        const event: Record<string, unknown> = {
            TypeName: TYPE_NAME,
            RequestToken: request.token,
            Operation: request.operation,
            OperationStatus: request.status,
            EventTime: request.eventTime / 1000,
        };
        if (request.operation !== "CREATE" || options.identifierEarly || request.status === "SUCCESS") {
            event.Identifier = request.identifier;
        }
        if (request.status === "SUCCESS" && request.operation !== "DELETE") {
            const resource = resources.get(request.identifier);
            if (resource !== undefined) event.ResourceModel = JSON.stringify(resource.model);
        }
        if (request.statusMessage !== undefined) event.StatusMessage = request.statusMessage;
        if (request.errorCode !== undefined) event.ErrorCode = request.errorCode;
        const running = ["PENDING", "IN_PROGRESS", "CANCEL_IN_PROGRESS"].includes(request.status);
        if (running) event.RetryAfter = (now() + retryAfterMs) / 1000;
        else if (request.retryAfter !== undefined) event.RetryAfter = request.retryAfter / 1000;
        return event;
    };

    const settle = (request: ResourceRequest, outcome: OperationScript["outcome"]): void => {
        const resource = request.claimed ? resources.get(request.identifier) : undefined;
        const failWith = request.failWith ?? (outcome === "failed" ? "GeneralServiceException" : undefined);
        if (outcome === "succeeded" && failWith === undefined) {
            request.status = "SUCCESS";
            if (request.operation === "DELETE") {
                resources.delete(request.identifier);
                return;
            }
            if (resource === undefined) {
                fail(request, "NotFound", `${request.identifier} was deleted while the ${request.operation} ran.`);
                return;
            }
            if (request.operation === "CREATE") {
                counts.creates++;
                resource.hiddenGets = request.script.resultLate ? 1 : 0;
            }
            if (request.model !== undefined) resource.model = request.model;
            resource.state = "live";
            return;
        }
        if (outcome === "canceled") request.status = "CANCEL_COMPLETE";
        else fail(request, failWith ?? "GeneralServiceException", failureMessage(failWith, request.identifier));
        if (resource === undefined) return;
        if (request.operation === "CREATE") resources.delete(request.identifier);
        else resource.state = "live";
    };

    const poll = (request: ResourceRequest): void => {
        if (!["PENDING", "IN_PROGRESS", "CANCEL_IN_PROGRESS"].includes(request.status)) return;
        if (request.status === "CANCEL_IN_PROGRESS") {
            settle(request, "canceled");
            return;
        }
        request.polls++;
        const { pollsToFinish, outcome } = request.script;
        if (request.polls >= pollsToFinish) settle(request, outcome);
        else if (outcome === "canceled" && request.polls === pollsToFinish - 1) request.status = "CANCEL_IN_PROGRESS";
        else request.status = "IN_PROGRESS";
    };

    /** ClientToken: the earlier request of the same call, a conflict, or undefined (a new request). */
    const idempotent = (call: Call): Earlier => {
        const clientToken = call.input.ClientToken;
        if (clientToken === undefined) return undefined;
        const entry = clientTokens.get(String(clientToken));
        if (entry === undefined) return undefined;
        if (now() - entry.at > CLIENT_TOKEN_TTL_MS) {
            clientTokens.delete(String(clientToken));
            return undefined;
        }
        if (entry.fingerprint !== fingerprint(call)) {
            return answer(
                error(
                    "ClientTokenConflictException",
                    `The client token ${String(clientToken)} was already used in another resource request: use a new token for a new request.`,
                ),
            );
        }
        const request = requests.get(entry.token);
        return request === undefined ? undefined : answer(ok({ ProgressEvent: eventOf(request) }));
    };

    const accept = (call: Call, request: Omit<ResourceRequest, "token" | "polls" | "eventTime">): KitResponse => {
        const created: ResourceRequest = { ...request, token: randomUUID(), polls: 0, eventTime: now() };
        requests.set(created.token, created);
        if (typeof call.input.ClientToken === "string") {
            clientTokens.set(call.input.ClientToken, {
                fingerprint: fingerprint(call),
                token: created.token,
                at: now(),
            });
        }
        if (created.status === "PENDING" && created.script.pollsToFinish <= 0) settle(created, created.script.outcome);
        return ok({ ProgressEvent: eventOf(created) });
    };

    const nextScript = (
        kind: "create" | "update" | "delete",
    ): { script: OperationScript; failWith?: HandlerErrorCode } => {
        const script = plan.next(kind);
        const failWith = failures.shift();
        return failWith === undefined ? { script } : { script, failWith };
    };

    const handlerError = (
        code: "AlreadyExists" | "NotFound",
        shape: string,
        message: string,
        call: Call,
        operation: Operation,
        identifier: string,
    ): KitResponse => {
        if (options.handlerErrors !== "event") return error(shape, message);
        const { script } = nextScript(operation === "CREATE" ? "create" : operation === "UPDATE" ? "update" : "delete");
        return accept(call, {
            operation,
            identifier,
            script: { ...script, outcome: "failed" },
            status: "PENDING",
            failWith: code,
            claimed: false,
        });
    };

    const create = (call: Call): KitResponse => {
        const desired = desiredStateOf(call.input.DesiredState);
        if (typeof desired === "string") return error("ValidationException", desired);
        const name = desired.Name;
        if (typeof name !== "string" || name.length === 0) {
            return error("InvalidRequestException", "Model validation failed (#: required key [Name] not found).");
        }
        if ("Arn" in desired) {
            return error("InvalidRequestException", "Model validation failed (#/Arn: read-only property).");
        }
        const earlier = idempotent(call);
        if (earlier !== undefined) return earlier.answer;
        if (resources.has(name)) {
            return handlerError(
                "AlreadyExists",
                "AlreadyExistsException",
                `${TYPE_NAME} with Name ${name} already exists.`,
                call,
                "CREATE",
                name,
            );
        }
        const { script, failWith } = nextScript("create");
        resources.set(name, { model: withArn(desired), state: "creating", hiddenGets: 0 });
        return accept(call, {
            operation: "CREATE",
            identifier: name,
            script,
            status: "PENDING",
            failWith,
            claimed: true,
        });
    };

    /** The live resource an Update or Delete acts on, or the answer instead (a replay, an error). */
    const changeable = (
        call: Call,
        operation: Operation,
    ): { answer: KitResponse } | { identifier: string; resource: Resource } => {
        const identifier = call.input.Identifier;
        if (typeof identifier !== "string" || identifier.length === 0) {
            return answer(
                error(
                    "ValidationException",
                    "1 validation error detected: Value null at 'identifier' failed to satisfy constraint: Member must not be null.",
                ),
            );
        }
        const earlier = idempotent(call);
        if (earlier !== undefined) return earlier;
        const resource = resources.get(identifier);
        if (resource === undefined || resource.state === "creating") {
            const message = `${TYPE_NAME} with Identifier ${identifier} was not found.`;
            return answer(handlerError("NotFound", "ResourceNotFoundException", message, call, operation, identifier));
        }
        if (resource.state !== "live") {
            const message = `Another resource operation is currently being performed on ${identifier}: wait for it to finish.`;
            return answer(error("ConcurrentOperationException", message));
        }
        return { identifier, resource };
    };

    const update = (call: Call): KitResponse => {
        const target = changeable(call, "UPDATE");
        if ("answer" in target) return target.answer;
        const patch = parseJsonMember(call.input.PatchDocument, "PatchDocument");
        if ("error" in patch) return error("ValidationException", patch.error);
        const patched = applyJsonPatch(target.resource.model, patch.value);
        if (typeof patched === "string") return error("InvalidRequestException", patched);
        if (patched.Name !== target.resource.model.Name) {
            return error(
                "NotUpdatableException",
                "Invalid patch update: createOnlyProperties [/properties/Name] cannot be updated.",
            );
        }
        if (patched.Arn !== target.resource.model.Arn) {
            return error(
                "InvalidRequestException",
                "Invalid patch update: readOnlyProperties [/properties/Arn] cannot be updated.",
            );
        }
        const { script, failWith } = nextScript("update");
        target.resource.state = "updating";
        const { identifier } = target;
        return accept(call, {
            operation: "UPDATE",
            identifier,
            script,
            status: "PENDING",
            failWith,
            model: patched,
            claimed: true,
        });
    };

    const remove = (call: Call): KitResponse => {
        const target = changeable(call, "DELETE");
        if ("answer" in target) return target.answer;
        const { script, failWith } = nextScript("delete");
        target.resource.state = "deleting";
        const { identifier } = target;
        return accept(call, { operation: "DELETE", identifier, script, status: "PENDING", failWith, claimed: true });
    };

    const describe = (identifier: string, resource: Resource) => ({
        Identifier: identifier,
        Properties: JSON.stringify(resource.model),
    });

    const dispatch = (call: Call): KitResponse => {
        const operation = call.target.slice(TARGET_PREFIX.length);
        if (
            ["CreateResource", "UpdateResource", "DeleteResource", "GetResource", "ListResources"].includes(operation)
        ) {
            if (call.input.TypeName === undefined)
                return error(
                    "ValidationException",
                    "1 validation error detected: Value null at 'typeName' failed to satisfy constraint: Member must not be null.",
                );
            if (call.input.TypeName !== TYPE_NAME)
                return error(
                    "TypeNotFoundException",
                    `The type ${String(call.input.TypeName)} cannot be found: this server has ${TYPE_NAME} only.`,
                );
            if (call.input.ClientToken !== undefined && !CLIENT_TOKEN.test(String(call.input.ClientToken))) {
                return error(
                    "ValidationException",
                    "1 validation error detected: Value at 'clientToken' failed to satisfy constraint: Member must satisfy regular expression pattern: [-A-Za-z0-9+/=]+ (1 to 128 characters).",
                );
            }
        }
        switch (operation) {
            case "CreateResource":
                return create(call);
            case "UpdateResource":
                return update(call);
            case "DeleteResource":
                return remove(call);
            case "GetResource": {
                const identifier = String(call.input.Identifier ?? "");
                const resource = resources.get(identifier);
                if (resource === undefined || resource.state === "creating")
                    return error(
                        "ResourceNotFoundException",
                        `${TYPE_NAME} with Identifier ${identifier} was not found.`,
                    );
                if (resource.hiddenGets > 0) {
                    resource.hiddenGets--;
                    return error(
                        "ResourceNotFoundException",
                        `${TYPE_NAME} with Identifier ${identifier} was not found.`,
                    );
                }
                return ok({ TypeName: TYPE_NAME, ResourceDescription: describe(identifier, resource) });
            }
            case "ListResources":
                return ok({
                    TypeName: TYPE_NAME,
                    ResourceDescriptions: [...resources.entries()]
                        .filter(([, resource]) => resource.state !== "creating" && resource.hiddenGets === 0)
                        .map(([identifier, resource]) => describe(identifier, resource)),
                });
            case "GetResourceRequestStatus":
            case "CancelResourceRequest": {
                const request = requests.get(String(call.input.RequestToken ?? ""));
                if (request === undefined)
                    return error(
                        "RequestTokenNotFoundException",
                        `No resource request has the token ${String(call.input.RequestToken)}.`,
                    );
                if (operation === "GetResourceRequestStatus") poll(request);
                else if (request.status === "PENDING" || request.status === "IN_PROGRESS")
                    request.status = "CANCEL_IN_PROGRESS";
                return ok({ ProgressEvent: eventOf(request) });
            }
            case "ListResourceRequests":
                return ok({ ResourceRequestStatusSummaries: [...requests.values()].map(eventOf) });
            default:
                counts.outsideApi++;
                return error(
                    "UnknownOperationException",
                    `Unknown operation ${call.target}: this is ${TARGET_PREFIX}<Operation> of Cloud Control.`,
                );
        }
    };

    // The kit's classify sees only the method and path, and its authenticate is synchronous: the
    // operation (from X-Amz-Target) is noted in `authenticate`, which the kit calls right before it asks
    // the fault plan (synchronously, so no other request comes between), and the signature itself, which
    // @smithy/signature-v4 computes asynchronously, is checked at the start of the handler.
    let current: { request?: KitRequest; failure?: SigV4Failure } = {};

    const throttled = (fault: Extract<Fault, { kind: "throttle" }>, operation: string): KitResponse => {
        const request = current.request;
        const operations: Record<string, Operation> = { create: "CREATE", update: "UPDATE", delete: "DELETE" };
        const kind = operations[operation];
        const input = request?.body;
        if (fault.hint !== "body" || kind === undefined || request === undefined || !isObject(input)) {
            return error("ThrottlingException", "Rate exceeded");
        }
        const call = { target: String(request.headers["x-amz-target"]), input };
        const desired = kind === "CREATE" ? desiredStateOf(input.DesiredState) : undefined;
        const identifier = kind === "CREATE" ? (isObject(desired) ? desired.Name : undefined) : input.Identifier;
        if (typeof identifier !== "string" || input.TypeName !== TYPE_NAME)
            return error("ThrottlingException", "Rate exceeded");
        // A token already spent is not spent again by a throttled answer: it gets the plain exception.
        if (typeof input.ClientToken === "string" && clientTokens.has(input.ClientToken)) {
            return error("ThrottlingException", "Rate exceeded");
        }
        return accept(call, {
            claimed: false,
            operation: kind,
            identifier,
            script: { pollsToFinish: 0, outcome: "failed" },
            status: "FAILED",
            errorCode: "Throttling",
            statusMessage: "Rate exceeded (Service: TestWidgets; Status Code: 400; Error Code: Throttling)",
            retryAfter: now() + fault.seconds * 1000,
        });
    };

    const kit = await startServer({
        port: options.port,
        classify: (method, path) => (method === "POST" && path === "/" ? "call" : undefined),
        authenticate: (request) => {
            const failure = checkSigV4Form(request, verify);
            current = { request, failure };
            return failure === undefined;
        },
        unauthorized: () => {
            const failure = current.failure;
            return failure === undefined
                ? error("IncompleteSignatureException", "The request is not signed.")
                : { ...error(failure.type, failure.message), status: failure.status };
        },
        faults: {
            next: (request) =>
                faults.next({
                    ...request,
                    operation:
                        current.request === undefined
                            ? request.operation
                            : operationOfTarget(current.request.headers["x-amz-target"]),
                }),
        },
        renderThrottle: (fault) =>
            throttled(
                fault,
                current.request === undefined ? "unknown" : operationOfTarget(current.request.headers["x-amz-target"]),
            ),
        renderError: (status, detail) => {
            const shape =
                status === 400
                    ? "SerializationException"
                    : status === 404
                      ? "UnknownOperationException"
                      : status === 413
                        ? "RequestEntityTooLargeException"
                        : status >= 502
                          ? "ServiceUnavailable"
                          : "InternalFailure";
            return { ...error(shape, detail), status };
        },
        handler: async (request) => {
            const failure = await verifySigV4(request, verify);
            if (failure !== undefined) {
                counts.unauthorized++;
                return { ...error(failure.type, failure.message), status: failure.status };
            }
            const target = request.headers["x-amz-target"];
            if (typeof target !== "string" || !target.startsWith(TARGET_PREFIX)) {
                counts.outsideApi++;
                return error(
                    "UnknownOperationException",
                    `X-Amz-Target must be ${TARGET_PREFIX}<Operation>, got ${String(target)}.`,
                );
            }
            if (!isObject(request.body))
                return error(
                    "SerializationException",
                    "The body must be a JSON object (Content-Type application/x-amz-json-1.0).",
                );
            return dispatch({ target, input: request.body });
        },
    });

    return {
        url: kit.url,
        counts: (): ServerCounts => {
            const stats = kit.stats();
            return {
                creates: counts.creates,
                duplicates: counts.duplicates,
                live: resources.size,
                requests: stats.requests,
                faultsInjected: stats.faultsInjected,
                requestsOutsideApi: stats.requestsOutsideApi + counts.outsideApi,
                unauthorized: stats.unauthorized + counts.unauthorized,
            };
        },
        resources: () => [...resources.values()].map((resource) => ({ ...resource.model })),
        requests: () => [...requests.values()].map(eventOf),
        failNextWith: (code, times = 1) => {
            for (let i = 0; i < times; i++) failures.push(code);
        },
        setFaults: (next) => {
            faults = next;
        },
        setOperations: (next) => {
            plan = next;
        },
        mutate: (id, change) => {
            const resource = resources.get(id);
            if (resource === undefined) throw new Error(`mutate: no ${TYPE_NAME} ${id} on the Cloud Control server.`);
            resource.model = { ...resource.model, ...change, Name: resource.model.Name, Arn: resource.model.Arn };
        },
        remove: (id) => {
            resources.delete(id);
        },
        close: () => kit.close(),
    };
}

/** An answer given instead of acting: a replayed ProgressEvent or an error. */
type Earlier = { answer: KitResponse } | undefined;

function answer(response: KitResponse): { answer: KitResponse } {
    return { answer: response };
}

function fail(request: ResourceRequest, code: HandlerErrorCode, message: string): void {
    request.status = "FAILED";
    request.errorCode = code;
    request.statusMessage = message;
}

function failureMessage(code: HandlerErrorCode | undefined, identifier: string): string {
    if (code === "AlreadyExists")
        return `Resource of type '${TYPE_NAME}' with identifier '${identifier}' already exists.`;
    if (code === "NotFound") return `Resource of type '${TYPE_NAME}' with identifier '${identifier}' was not found.`;
    if (code === "Throttling") return "Rate exceeded (Service: TestWidgets; Status Code: 400; Error Code: Throttling)";
    return `Resource handler returned message: "${code ?? "GeneralServiceException"}" (the test server's operation plan failed it).`;
}

function isObject(value: unknown): value is Record<string, unknown> {
    return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A member that the service takes as a JSON string (DesiredState, PatchDocument): parsed, or why not. */
function parseJsonMember(value: unknown, member: string): { value: unknown } | { error: string } {
    if (typeof value !== "string" || value.length === 0) {
        return {
            error: `1 validation error detected: Value at '${member}' failed to satisfy constraint: Member must be a non-empty string of JSON.`,
        };
    }
    try {
        return { value: JSON.parse(value) };
    } catch (cause) {
        return { error: `${member} is not JSON: ${cause instanceof Error ? cause.message : String(cause)}` };
    }
}

/** DesiredState: a JSON object in a string. */
function desiredStateOf(value: unknown): Record<string, unknown> | string {
    const parsed = parseJsonMember(value, "DesiredState");
    if ("error" in parsed) return parsed.error;
    return isObject(parsed.value) ? parsed.value : "DesiredState must be a JSON object in a string.";
}

/** The identity of a call for ClientToken: the operation and its members, JSON members parsed, keys sorted. */
function fingerprint(call: Call): string {
    const input: Record<string, unknown> = { ...call.input };
    for (const member of ["DesiredState", "PatchDocument"]) {
        if (typeof input[member] === "string") {
            try {
                input[member] = JSON.parse(input[member] as string);
            } catch {
                // kept as the string it is
            }
        }
    }
    return `${call.target} ${canonical(input)}`;
}

function canonical(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
    if (isObject(value)) {
        return `{${Object.keys(value)
            .sort()
            .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
            .join(",")}}`;
    }
    return JSON.stringify(value) ?? "null";
}

/** RFC 6902 on a copy of `document`: the patched copy, or why the patch cannot apply. */
export function applyJsonPatch(document: Record<string, unknown>, patch: unknown): Record<string, unknown> | string {
    if (!Array.isArray(patch)) return "The patch document must be a JSON array.";
    let root: unknown = structuredClone(document);
    for (const [index, step] of patch.entries()) {
        if (!isObject(step) || typeof step.op !== "string" || typeof step.path !== "string") {
            return `Patch operation ${index} needs "op" and "path".`;
        }
        const path = parsePointer(step.path);
        if (path === undefined) return `Patch operation ${index}: "${step.path}" is not a JSON pointer.`;
        const outcome = applyOne(root, step, path);
        if (typeof outcome === "string") return `Patch operation ${index} (${step.op} ${step.path}): ${outcome}`;
        root = outcome.root;
    }
    return isObject(root) ? root : "The patch must leave an object.";
}

function parsePointer(pointer: string): string[] | undefined {
    if (pointer === "") return [];
    if (!pointer.startsWith("/")) return undefined;
    return pointer
        .slice(1)
        .split("/")
        .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function resolve(root: unknown, path: string[]): { found: boolean; value?: unknown } {
    let node = root;
    for (const token of path) {
        if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length)
            node = node[Number(token)];
        else if (isObject(node) && Object.hasOwn(node, token)) node = node[token];
        else return { found: false };
    }
    return { found: true, value: node };
}

function applyOne(root: unknown, step: Record<string, unknown>, path: string[]): { root: unknown } | string {
    switch (step.op) {
        case "test": {
            const at = resolve(root, path);
            return at.found && canonical(at.value) === canonical(step.value) ? { root } : "the value differs";
        }
        case "remove":
            return removeAt(root, path);
        case "add":
            if (!("value" in step)) return 'needs "value"';
            return addAt(root, path, structuredClone(step.value));
        case "replace": {
            if (!("value" in step)) return 'needs "value"';
            const removed = removeAt(root, path);
            return typeof removed === "string" ? removed : addAt(removed.root, path, structuredClone(step.value));
        }
        case "move":
        case "copy": {
            const from = typeof step.from === "string" ? parsePointer(step.from) : undefined;
            if (from === undefined) return 'needs a "from" pointer';
            const source = resolve(root, from);
            if (!source.found) return `nothing at ${String(step.from)}`;
            const value = structuredClone(source.value);
            if (step.op === "copy") return addAt(root, path, value);
            const removed = removeAt(root, from);
            return typeof removed === "string" ? removed : addAt(removed.root, path, value);
        }
        default:
            return `unknown op "${String(step.op)}"`;
    }
}

function addAt(root: unknown, path: string[], value: unknown): { root: unknown } | string {
    if (path.length === 0) return { root: value };
    const parent = resolve(root, path.slice(0, -1));
    const last = path[path.length - 1] ?? "";
    if (!parent.found) return "the parent does not exist";
    if (Array.isArray(parent.value)) {
        const index = last === "-" ? parent.value.length : Number(last);
        if (!/^(0|[1-9]\d*|-)$/.test(last) || index > parent.value.length) return "index out of range";
        parent.value.splice(index, 0, value);
        return { root };
    }
    if (!isObject(parent.value)) return "the parent is not a container";
    parent.value[last] = value;
    return { root };
}

function removeAt(root: unknown, path: string[]): { root: unknown } | string {
    if (path.length === 0) return "cannot remove the whole document";
    const at = resolve(root, path);
    if (!at.found) return "nothing there";
    const parent = resolve(root, path.slice(0, -1)).value;
    const last = path[path.length - 1] ?? "";
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else if (isObject(parent)) delete parent[last];
    return { root };
}
