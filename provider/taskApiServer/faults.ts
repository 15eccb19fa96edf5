// The fault model: which injected fault a request gets, how a rate limit decides, and the seeded random
// numbers that decide simulated task failures. Pure: no sockets, no timers; time comes in as numbers.

import { badRequest } from "./apiError";
import type { Fault, FaultMatch, FaultRule, FaultRuleRequest, FaultStatus, TaskShape } from "./control";
import {
    describeJson,
    type JsonObject,
    objectWithFields,
    optionalInteger,
    optionalString,
    requiredInteger,
    requiredString,
    requiredTrue,
} from "./validation";

/** What a request does, once routed; decides which faults can apply to it. */
export type RouteKind =
    | "listDatastores"
    | "createDatastore"
    | "getDatastore"
    | "resizeDatastore"
    | "deleteDatastore"
    | "getOperation";

/** Routes whose success is a 202 with a task. */
export const TASK_ROUTES: readonly RouteKind[] = ["createDatastore", "resizeDatastore", "deleteDatastore"];

const FAULT_STATUSES: readonly FaultStatus[] = [429, 500, 502, 503, 504];
const FAULT_KINDS = ["status", "drop", "loseResponse", "delayMs", "invalidJson", "omitLocation", "taskState", "task"];
/** An hour: longer delays or tasks are surely a mistake, and would hold a test or a socket forever. */
const MAX_MS = 3_600_000;

/** Checks the body of `POST /_test/faults` (or a rule given in code); throws a 400 naming the problem. */
export function parseFaultRuleRequest(body: unknown): FaultRuleRequest {
    const object = objectWithFields(body, "the body", ["match", "times", "probability", "fault"]);
    if (object.fault === undefined) throw badRequest("fault is required.");
    const times = optionalInteger(object, "times", "the body", { min: 1 });
    const probability = object.probability;
    if (probability !== undefined && (typeof probability !== "number" || !(probability > 0 && probability <= 1))) {
        throw badRequest(`probability must be a number in (0, 1], such as 0.3, not ${describeJson(probability)}.`);
    }
    return {
        ...(object.match !== undefined ? { match: parseMatch(object.match) } : {}),
        ...(times !== undefined ? { times } : {}),
        ...(probability !== undefined ? { probability } : {}),
        fault: parseFault(object.fault),
    };
}

function parseMatch(value: unknown): FaultMatch {
    const object = objectWithFields(value, "match", ["method", "path"]);
    const method = optionalString(object, "method", "match");
    const path = optionalString(object, "path", "match");
    if (method !== undefined && !/^[A-Za-z]+$/.test(method)) {
        throw badRequest(`match.method must be an HTTP method such as "POST", not ${describeJson(method)}.`);
    }
    if (path !== undefined && !path.startsWith("/")) {
        throw badRequest(`match.path must start with "/", not ${describeJson(path)}.`);
    }
    return {
        ...(method !== undefined ? { method: method.toUpperCase() } : {}),
        ...(path !== undefined ? { path } : {}),
    };
}

/** Checks one fault: exactly one kind, with exactly its fields. */
export function parseFault(value: unknown): Fault {
    const object = objectWithFields(value, "fault", [...FAULT_KINDS, "retryAfterSeconds"]);
    const kinds = Object.keys(object).filter((key) => FAULT_KINDS.includes(key));
    if (kinds.length !== 1) {
        throw badRequest(
            `fault must have exactly one of ${FAULT_KINDS.join(", ")}; it has ${kinds.length === 0 ? "none" : kinds.join(" and ")}.`,
        );
    }
    const kind = kinds[0];
    if (kind !== "status" && object.retryAfterSeconds !== undefined) {
        throw badRequest(`fault.retryAfterSeconds goes only with fault.status, not with fault.${kind}.`);
    }
    switch (kind) {
        case "status":
            return statusFault(object);
        case "drop":
            return { drop: requiredTrue(object, "drop", "fault") };
        case "loseResponse":
            return { loseResponse: requiredTrue(object, "loseResponse", "fault") };
        case "invalidJson":
            return { invalidJson: requiredTrue(object, "invalidJson", "fault") };
        case "omitLocation":
            return { omitLocation: requiredTrue(object, "omitLocation", "fault") };
        case "delayMs":
            return { delayMs: requiredInteger(object, "delayMs", "fault", { min: 0, max: MAX_MS, unit: "ms" }) };
        case "taskState": {
            const state = requiredString(object, "taskState", "fault");
            if (state === "") throw badRequest("fault.taskState must not be empty.");
            return { taskState: state };
        }
        default:
            return { task: parseTaskShape(object.task) };
    }
}

function statusFault(object: JsonObject): Fault {
    const status = requiredInteger(object, "status", "fault", { min: 100 });
    if (!(FAULT_STATUSES as readonly number[]).includes(status)) {
        throw badRequest(`fault.status must be one of ${FAULT_STATUSES.join(", ")}, not ${status}.`);
    }
    const retryAfterSeconds = optionalInteger(object, "retryAfterSeconds", "fault", { min: 0, max: 3600, unit: "s" });
    return { status: status as FaultStatus, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) };
}

/** Checks a task shape: fails and/or one of durationMs, completeAfterPolls. */
export function parseTaskShape(value: unknown): TaskShape {
    const object = objectWithFields(value, "fault.task", ["fails", "durationMs", "completeAfterPolls"]);
    if (Object.keys(object).length === 0) {
        throw badRequest("fault.task needs fails, durationMs or completeAfterPolls.");
    }
    if (object.durationMs !== undefined && object.completeAfterPolls !== undefined) {
        throw badRequest("fault.task takes durationMs or completeAfterPolls, not both.");
    }
    const fails = optionalString(object, "fails", "fault.task");
    if (fails === "") throw badRequest("fault.task.fails must be the failure's message, not empty.");
    const durationMs = optionalInteger(object, "durationMs", "fault.task", { min: 0, max: MAX_MS, unit: "ms" });
    const completeAfterPolls = optionalInteger(object, "completeAfterPolls", "fault.task", { min: 1 });
    return {
        ...(fails !== undefined ? { fails } : {}),
        ...(durationMs !== undefined ? { durationMs } : {}),
        ...(completeAfterPolls !== undefined ? { completeAfterPolls } : {}),
    };
}

/** Whether `fault` means anything for a request of this kind; a rule is used up only where it does. */
export function faultAppliesTo(fault: Fault, route: RouteKind): boolean {
    if ("task" in fault || "omitLocation" in fault) return TASK_ROUTES.includes(route);
    if ("taskState" in fault) return route === "getOperation";
    return true;
}

/** A request as fault rules see it. */
export interface FaultTarget {
    readonly method: string;
    readonly path: string;
    readonly route: RouteKind;
}

/** The fault rules of a server, oldest first; each applies to its `times` requests, then is gone. */
export class FaultRules {
    private rules: FaultRule[] = [];
    private nextId = 1;

    /** `random` decides which requests a rule with a probability below 1 hits. */
    constructor(private readonly random: () => number = Math.random) {}

    /** Adds a rule (already checked by parseFaultRuleRequest) and returns it as the server holds it. */
    add(request: FaultRuleRequest): FaultRule {
        const rule: FaultRule = {
            id: `fault-${this.nextId++}`,
            match: request.match ?? {},
            remaining: request.times ?? 1,
            probability: request.probability ?? 1,
            fault: request.fault,
        };
        this.rules.push(rule);
        return rule;
    }

    /** Removes every rule; returns how many there were. */
    clear(): number {
        const count = this.rules.length;
        this.rules = [];
        return count;
    }

    /** The rules still in force. */
    list(): readonly FaultRule[] {
        return [...this.rules];
    }

    /** The fault for `target` from the oldest rule that matches and applies to it, using that rule once. */
    take(target: FaultTarget): Fault | undefined {
        const index = this.rules.findIndex(
            (rule) =>
                matches(rule.match, target) &&
                faultAppliesTo(rule.fault, target.route) &&
                (rule.probability >= 1 || this.random() < rule.probability),
        );
        const rule = this.rules[index];
        if (!rule) return undefined;
        if (rule.remaining <= 1) this.rules.splice(index, 1);
        else this.rules[index] = { ...rule, remaining: rule.remaining - 1 };
        return rule.fault;
    }
}

function matches(match: FaultMatch, target: FaultTarget): boolean {
    return (
        (match.method === undefined || match.method === target.method.toUpperCase()) &&
        (match.path === undefined || target.path.startsWith(match.path))
    );
}

/** A token bucket's settings: `perSecond` tokens are added each second, up to `burst`. */
export interface RateLimit {
    readonly perSecond: number;
    readonly burst: number;
}

/** A token bucket's state. */
export interface TokenBucket {
    readonly tokens: number;
    readonly updatedAtMs: number;
}

/** A full bucket at `nowMs`. */
export function fullBucket(limit: RateLimit, nowMs: number): TokenBucket {
    return { tokens: limit.burst, updatedAtMs: nowMs };
}

/**
 * Takes one token for a request at `nowMs`. Refused requests take none, so a client that waits the
 * `retryAfterSeconds` it was told finds a token.
 */
export function takeToken(
    bucket: TokenBucket,
    limit: RateLimit,
    nowMs: number,
): { readonly bucket: TokenBucket; readonly allowed: boolean; readonly retryAfterSeconds: number } {
    const elapsedSeconds = Math.max(0, nowMs - bucket.updatedAtMs) / 1000;
    const tokens = Math.min(limit.burst, bucket.tokens + elapsedSeconds * limit.perSecond);
    if (tokens >= 1) return { bucket: { tokens: tokens - 1, updatedAtMs: nowMs }, allowed: true, retryAfterSeconds: 0 };
    // Retry-After is whole seconds; rounding up never invites a retry that is refused again.
    const retryAfterSeconds = Math.max(1, Math.ceil((1 - tokens) / limit.perSecond));
    return { bucket: { tokens, updatedAtMs: nowMs }, allowed: false, retryAfterSeconds };
}
