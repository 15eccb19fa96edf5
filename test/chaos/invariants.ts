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
import type { StateEntry } from "./engine";
import type { ResourceSpec } from "./program";

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
    if (name === "ResourceExistsError" || name === "DatastoreAdoptMismatchError") {
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

/** One check of the final state: whether it holds, and what is wrong when it does not. */
export interface Check {
    readonly holds: boolean;
    readonly detail: () => string;
}

/**
 * Invariant 4 after healing: each resource of the program is in state, untainted and without init
 * errors, recording one datastore the API has, with its natural key and size, in state OK; nothing else
 * is in state; no datastore is recorded twice; and every datastore the provider made (any that is not
 * someone else's) is recorded (no zombie). When healing did not converge (`healed` false), that is the
 * violation already, and only the duplicate and zombie checks are made.
 */
export function finalStateChecks(input: {
    readonly program: readonly (ResourceSpec & { readonly label: string })[];
    readonly state: readonly StateEntry[];
    readonly truth: readonly DatastoreRecord[];
    /** Someone else's datastores, by id. */
    readonly foreign: ReadonlySet<string>;
    readonly healed: boolean;
}): Check[] {
    const checks: Check[] = [];
    const check = (holds: boolean, detail: () => string) => checks.push({ holds, detail });
    const truth = new Map(input.truth.map((record) => [record.id, record]));
    const wanted = new Set(input.program.map((resource) => resource.urn));
    const claimed = new Map<string, string[]>();
    for (const entry of input.state) {
        if (input.healed) check(wanted.has(entry.urn), () => `${entry.key.name} is in state but not in the program`);
        const id = String(entry.outputs.datastoreId ?? "").toLowerCase();
        if (id) claimed.set(id, [...(claimed.get(id) ?? []), entry.key.name]);
    }
    for (const resource of input.healed ? input.program : []) {
        const entry = input.state.find((candidate) => candidate.urn === resource.urn);
        const name = resource.label;
        check(entry !== undefined, () => `${name} is not in state`);
        if (!entry) continue;
        const id = String(entry.outputs.datastoreId ?? "").toLowerCase();
        const record = truth.get(id);
        check(entry.initErrors.length === 0, () => `${name} still has init errors: ${entry.initErrors.join("; ")}`);
        check(entry.outputs.tainted === false, () => `${name} is tainted: ${String(entry.outputs.taintReason)}`);
        check(
            record !== undefined,
            () => `${name} records datastore ${JSON.stringify(id)}, which the API does not have`,
        );
        if (!record) continue;
        check(
            hasKey(record, resource.key),
            () => `${name} records ${record.id}, which is ${record.name} in ${record.clusterInfo.id}`,
        );
        check(
            record.capacityInBytes === resource.sizeInBytes,
            () => `${name}: the API has ${record.capacityInBytes} bytes, the program ${resource.sizeInBytes}`,
        );
        check(record.state === "OK", () => `${name}: the datastore is ${record.state} at the API`);
        check(
            entry.outputs.sizeInBytes === record.capacityInBytes,
            () => `${name}: state says ${String(entry.outputs.sizeInBytes)} bytes, the API ${record.capacityInBytes}`,
        );
    }
    for (const [id, names] of claimed) {
        check(names.length === 1, () => `datastore ${id} is recorded by ${names.join(" and ")}`);
    }
    for (const record of truth.values()) {
        if (input.foreign.has(record.id)) continue;
        check(
            claimed.has(record.id),
            () =>
                `zombie: ${record.name} in ${record.clusterInfo.id} (${record.id}, ${record.state}) was made by the provider and is in no state`,
        );
    }
    return checks;
}
