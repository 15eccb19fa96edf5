// The invariants of the chaos suite, as pure checks over what a run recorded. Each returns the problems
// it finds (empty when the invariant holds); the run counts every check it makes.
//
//   1 origin    no request left the API's origin or its collections; the token went nowhere else
//   2 foreign   nothing deleted, resized or adopted that we did not create or were not told to adopt
//   3 deadline  no operation outlived its deadline by more than one request timeout (reads included)
//   4 state     after healing, state matches the server: one datastore per resource, no zombie, no
//               duplicate, nothing tainted; no secret in state, messages or progress lines
//   5 runaway   no loop polls or retries faster than the API could ask, no wait overflows Node's timer
//   6 errors    the provider throws only LifecycleErrors, each naming its datastore; a definite
//               refusal is never recorded as a create of unknown outcome

import { LifecycleError } from "../../provider/shared/errors/lifecycleError";
import type { NaturalKey } from "../../provider/tasks/datastoreSchema";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH, type DatastoreRecord } from "../../provider/tasks/protocol/wire";

/** The invariants, by number and name. */
export const INVARIANTS = ["1 origin", "2 foreign", "3 deadline", "4 state", "5 runaway", "6 errors"] as const;

export type InvariantName = (typeof INVARIANTS)[number];

/** One broken invariant. */
export interface Violation {
    readonly invariant: InvariantName;
    /** The step and operation, e.g. "step 3 up, create alpha-0". */
    readonly where: string;
    readonly detail: string;
}

/**
 * Why a request is outside the API (undefined when it is one of its routes): a path outside the two
 * collections, a `..` or `/` inside a segment once decoded, an empty id, or a query other than `filter`
 * on a list.
 */
export function requestProblem(method: string, url: string): string | undefined {
    const question = url.indexOf("?");
    const path = question < 0 ? url : url.slice(0, question);
    const query = question < 0 ? undefined : url.slice(question + 1);
    const segments = path.split("/").slice(1);
    for (const segment of segments) {
        const decoded = decodeSafely(segment);
        if (decoded === ".." || decoded === "." || decoded.includes("/") || decoded.includes("\\")) {
            return `a path segment ${JSON.stringify(segment)} that decodes to ${JSON.stringify(decoded)}`;
        }
        if (decoded.includes("..")) return `a path segment ${JSON.stringify(segment)} containing ".."`;
    }
    if (path === DATASTORES_PATH) {
        if (method === "POST") return query === undefined ? undefined : `a query ${JSON.stringify(query)} on a create`;
        if (method !== "GET") return `${method} on the datastores collection`;
        if (query === undefined) return undefined;
        const names = [...new URLSearchParams(query).keys()];
        return names.length === 1 && names[0] === "filter"
            ? undefined
            : `a list query ${JSON.stringify(query.slice(0, 120))} (only filter is allowed)`;
    }
    const inside = (collection: string) =>
        path.startsWith(`${collection}/`) &&
        path.length > collection.length + 1 &&
        segments.length === collection.split("/").length;
    if (inside(DATASTORES_PATH)) {
        if (!["GET", "PATCH", "DELETE"].includes(method)) return `${method} on a datastore`;
        return query === undefined
            ? undefined
            : `a query ${JSON.stringify(query.slice(0, 120))} on ${path.slice(0, 120)}`;
    }
    if (inside(ASYNC_OPERATIONS_PATH)) {
        if (method !== "GET") return `${method} on an async operation`;
        return query === undefined
            ? undefined
            : `a query ${JSON.stringify(query.slice(0, 120))} on ${path.slice(0, 120)}`;
    }
    return `a path outside the API's collections: ${JSON.stringify(path.slice(0, 120))}`;
}

/** The datastore id a DELETE or PATCH names, decoded and lowercase (the API compares ids so). */
export function targetId(url: string): string | undefined {
    const path = url.split("?")[0] ?? "";
    if (!path.startsWith(`${DATASTORES_PATH}/`)) return undefined;
    return decodeSafely(path.slice(DATASTORES_PATH.length + 1)).toLowerCase();
}

/** The secrets found in `text`, by name. */
export function secretsIn(text: string, secrets: Readonly<Record<string, string>>): string[] {
    return Object.entries(secrets)
        .filter(([, secret]) => secret.length > 0 && text.includes(secret))
        .map(([name]) => name);
}

/** What is wrong with an error the provider threw for an operation on `key` (empty: nothing). */
export function errorProblems(
    error: unknown,
    key: NaturalKey,
    secrets: Readonly<Record<string, string>>,
    truth: readonly DatastoreRecord[],
): string[] {
    const problems: string[] = [];
    if (!(error instanceof LifecycleError)) {
        const name = error instanceof Error ? error.constructor.name : typeof error;
        problems.push(`threw ${name}, not a LifecycleError: ${error instanceof Error ? error.message : String(error)}`);
    }
    const message = error instanceof Error ? error.message : String(error);
    if (!namesDatastore(message, key.name)) {
        problems.push(`the message does not name datastore ${JSON.stringify(key.name)}: ${message.slice(0, 300)}`);
    }
    for (const secret of secretsIn(message, secrets)) problems.push(`the message carries the ${secret}`);
    // A refusal (exists, cannot adopt) must be about a datastore with this natural key.
    const name = (error as { name?: unknown } | undefined)?.name;
    if (name === "DatastoreExistsError" || name === "DatastoreAdoptMismatchError") {
        for (const record of truth) {
            if (message.includes(record.id) && !hasKey(record, key)) {
                problems.push(
                    `${String(name)} names ${record.id} (${record.name} in cluster ${record.clusterInfo.id}), which is not ${key.name} in cluster ${key.clusterId}`,
                );
            }
        }
    }
    return problems;
}

/** Whether a message names the datastore: `"alpha"` (as describeDatastore writes it) or `datastore alpha`. */
export function namesDatastore(message: string, name: string): boolean {
    return message.includes(JSON.stringify(name)) || new RegExp(`datastore ${name}\\b`).test(message);
}

export function hasKey(record: DatastoreRecord, key: NaturalKey): boolean {
    return (
        record.name === key.name &&
        record.hciClusterUuid.toLowerCase() === key.hciClusterUuid.toLowerCase() &&
        record.clusterInfo.id.toLowerCase() === key.clusterId.toLowerCase()
    );
}

function decodeSafely(segment: string): string {
    try {
        return decodeURIComponent(segment);
    } catch {
        return segment;
    }
}
