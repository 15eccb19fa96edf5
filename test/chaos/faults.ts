// The faults the chaos proxy injects, one per request at most, and the hostile values they carry. Each
// is something a real server, gateway or network has done: issue 18 lists them (sections 1 and 2 and
// those of the first attack). Which fault a request gets is drawn from a PRNG seeded by the run's seed,
// the operation and the request's place in it, so a seed replays exactly.

import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../provider/tasks/protocol/wire";

/** What a request asks, by the API's routes ("other" is anything outside them). */
export type RouteKind = "list" | "get" | "operation" | "create" | "resize" | "delete" | "other";

/** Every fault the proxy can inject. */
export const FAULT_KINDS = [
    // The network and gateways.
    "reset", // the connection is closed before the request is forwarded: nothing done
    "lostAnswer", // forwarded, the backend acts, then the connection is closed without an answer
    "truncated", // forwarded; the full Content-Length, half the body, then a reset
    "dribble", // forwarded; the headers, then one byte a second, never finished
    "hang", // the connection stays open and no answer ever starts (forwarded or not)
    "oversized", // an answer larger than any the API gives (9 MiB), declared or chunked
    "nestedJson", // a body nested 100,000 levels: 200 on reads, 400/409/500 on writes
    "invalidJson", // the answer cut in half with a matching Content-Length
    "throttled", // 429 or 503 with every Retry-After form (0, 2, huge, dates ahead and past, garbage)
    "serverError", // 500/502/504 before forwarding: nothing done
    "gatewayError", // forwarded (the backend acts), then answered 502/504
    "redirect", // 301/302/307/308 to the foreign origin or elsewhere on this one
    "definite4xx", // 400 or 409 (no existingId): a definite refusal, nothing done
    // Answers that break the contract.
    "conflictId", // POST: 409 whose existingId is malformed or someone else's
    "locationForeign", // 202 whose Location is on the foreign origin (the work was done)
    "locationUserinfo", // 202 whose Location carries user:password (the work was done)
    "missingLocation", // 202 without Location (the work was done)
    "locationOn200", // a 200 carrying a cross-origin or userinfo Location, which the contract never reads
    "listUnfiltered", // a list that ignores the filter: every datastore comes back
    "listLoose", // a list that filters by name only: other clusters' datastores come back
    "listForeign", // a list with someone else's records appended
    "listBadIds", // a list whose items carry malformed ids
    "getForeign", // GET of a datastore answers someone else's record
    "getBadId", // GET of a datastore answers a malformed id
    "taskBadResource", // a task whose associatedResources names a malformed URI
    "taskForeignResource", // a task whose associatedResources names someone else's datastore
    "taskFlip", // a task seen SUCCEEDED that is RUNNING again, or FAILED that later SUCCEEDED
    "taskNeverEnds", // a task that stays RUNNING for as long as the chaos lasts
    "taskPollHint", // suggestedPollingIntervalSeconds of 0, 0.0001, 1e9, -1 or not a number
    "fakeDelete", // DELETE answered with a task that succeeds, while the datastore stays
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

const ANY_ROUTE: readonly FaultKind[] = [
    "reset",
    "lostAnswer",
    "truncated",
    "dribble",
    "hang",
    "oversized",
    "nestedJson",
    "invalidJson",
    "throttled",
    "serverError",
    "gatewayError",
    "redirect",
    "definite4xx",
];

const TASK_STARTERS: readonly FaultKind[] = ["locationForeign", "locationUserinfo", "missingLocation"];

/** The faults that can apply to each route. */
export const FAULTS_BY_ROUTE: Readonly<Record<RouteKind, readonly FaultKind[]>> = {
    list: [...ANY_ROUTE, "locationOn200", "listUnfiltered", "listLoose", "listForeign", "listBadIds"],
    get: [...ANY_ROUTE, "locationOn200", "getForeign", "getBadId"],
    operation: [
        ...ANY_ROUTE,
        "locationOn200",
        "taskBadResource",
        "taskForeignResource",
        "taskFlip",
        "taskNeverEnds",
        "taskPollHint",
    ],
    create: [...ANY_ROUTE, ...TASK_STARTERS, "conflictId"],
    resize: [...ANY_ROUTE, ...TASK_STARTERS],
    delete: [...ANY_ROUTE, ...TASK_STARTERS, "fakeDelete"],
    other: ["reset", "serverError", "definite4xx"],
};

/**
 * Relative weights (1 unless said): big bodies cost real time, so they come less often; the faults of
 * the rarer routes that start tasks come more often, so a small budget still sees each of them.
 */
const WEIGHTS: Partial<Record<FaultKind, number>> = {
    oversized: 0.3,
    nestedJson: 0.6,
    hang: 0.6,
    dribble: 0.8,
    conflictId: 2,
    locationForeign: 2,
    locationUserinfo: 2,
    missingLocation: 1.5,
    fakeDelete: 4,
};

/**
 * A fault for a request on `route`, or undefined: drawn from `random` among every fault of the route,
 * then kept only when `allowed`. Drawing among all of them keeps the draws of a seed the same whatever
 * is allowed, so a run restricted to fewer kinds injects the same faults at the same places, minus the
 * others (what shrinking relies on).
 */
export function pickFault(
    route: RouteKind,
    random: () => number,
    probability: number,
    allowed: ReadonlySet<FaultKind>,
): FaultKind | undefined {
    if (random() >= probability) return undefined;
    const candidates = FAULTS_BY_ROUTE[route];
    const total = candidates.reduce((sum, kind) => sum + (WEIGHTS[kind] ?? 1), 0);
    let point = random() * total;
    let drawn = candidates[candidates.length - 1];
    for (const kind of candidates) {
        point -= WEIGHTS[kind] ?? 1;
        if (point < 0) {
            drawn = kind;
            break;
        }
    }
    return drawn !== undefined && allowed.has(drawn) ? drawn : undefined;
}

/** Ids a broken or hostile server has answered with (issue 18, section 1). */
export const MALFORMED_IDS: readonly string[] = [
    "../../admin/users/1",
    "D1?force=true&cascade=all",
    "",
    "%2e%2e%2f%2e%2e%2fadmin%2fusers%2f1",
    "..",
    "a/b",
    "D1#fragment",
    "D1 D2",
    "D1\u0000",
    "ｄｓ１",
    "x".repeat(5000),
];

/** Resource URIs of a task's associatedResources, given a real datastore id and the foreign origin. */
export function malformedResourceUris(realId: string, foreignOrigin: string): string[] {
    return [
        `${DATASTORES_PATH}/../../admin/users/1`,
        `${DATASTORES_PATH}/D1?force=true&cascade=all`,
        `${DATASTORES_PATH}/${realId}/`,
        `${DATASTORES_PATH}/`,
        "",
        `${DATASTORES_PATH}/${encodeURIComponent("../../admin/users/1")}`,
        `${foreignOrigin}${DATASTORES_PATH}/${realId}`,
        `${ASYNC_OPERATIONS_PATH}/${realId}`,
        `${DATASTORES_PATH}/${realId}/../../../admin/users/1`,
    ];
}

/** Every form of Retry-After a server has sent, for a clock at `now` (ms). */
export function retryAfterForms(now: number): (string | undefined)[] {
    return [
        "0",
        "2",
        "999999999",
        new Date(Date.UTC(9999, 11, 31, 23, 59, 59)).toUTCString(),
        new Date(now + 400 * 24 * 3600_000).toUTCString(),
        new Date(now - 3600_000).toUTCString(),
        "soon",
        "-1",
        "1.5",
        "",
        undefined,
    ];
}

/** suggestedPollingIntervalSeconds values that break naive polling. */
export const POLL_HINTS: readonly unknown[] = [0, 0.0001, 1e9, -1, "30", Number.MAX_VALUE];

/** JSON nested `depth` levels: arrays, or objects under `key`. */
export function nestedJson(depth: number, shape: "array" | "object"): string {
    return shape === "array"
        ? `${"[".repeat(depth)}${"]".repeat(depth)}`
        : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

/** Picks one of `items` with `random`. */
export function pick<T>(items: readonly T[], random: () => number): T {
    return items[Math.floor(random() * items.length)] as T;
}

/** A 32-bit hash of the parts, to seed one request's PRNG from the run's seed and its place. */
export function hashSeed(...parts: (string | number)[]): number {
    let h = 0x811c9dc5;
    for (const part of parts) {
        const text = `${part}\u0001`;
        for (let i = 0; i < text.length; i++) {
            h ^= text.charCodeAt(i);
            h = Math.imul(h, 0x01000193);
        }
    }
    return h >>> 0;
}
