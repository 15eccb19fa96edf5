// What an answer of the task API must be before anything in it is used: a datastore record with the
// fields the provider reads and an id of the API's shape, a record of the natural key asked for, and
// URIs that name one member of a collection on the API's own origin. A server that answers otherwise
// (one that ignores a filter, ids such as `../../admin/users/1`, a Location with credentials) must
// never make the provider read, adopt or delete something else, or send its token anywhere else.
// Pure: values in, a record, an id or a problem out.

import { quote } from "../../shared/text";
import type { NaturalKey } from "../datastoreSchema";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH, type DatastoreRecord, isApiId } from "./wire";

/** How much of a value the server gave goes into a message. */
const SHOWN_CHARS = 120;

/** Why `value` cannot be used as a datastore record; undefined when it can. */
export function datastoreProblem(value: unknown): string | undefined {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return "it is not an object";
    const record = value as Record<string, unknown>;
    if (!isApiId(record.id)) return `its id ${describeValue(record.id)} is not an id of the API`;
    for (const field of ["name", "hciClusterUuid", "datastoreType", "state"]) {
        if (typeof record[field] !== "string") return `its ${field} is not a string`;
    }
    const info = record.clusterInfo as { id?: unknown } | null | undefined;
    if (typeof info !== "object" || info === null || typeof info.id !== "string") {
        return "its clusterInfo.id is not a string";
    }
    if (typeof record.sizeInBytes !== "number" || !Number.isFinite(record.sizeInBytes)) {
        return "its sizeInBytes is not a number";
    }
    return undefined;
}

/**
 * Whether a datastore has exactly this natural key: UUIDs compared case-insensitively (check lowercases
 * the program's; an API may write them in capitals), names exactly.
 */
export function matchesNaturalKey(record: DatastoreRecord, key: NaturalKey): boolean {
    return (
        record.hciClusterUuid.toLowerCase() === key.hciClusterUuid.toLowerCase() &&
        record.clusterInfo.id.toLowerCase() === key.clusterId.toLowerCase() &&
        record.name === key.name
    );
}

/** One member of a collection, or why a URI does not name one. */
export type MemberOf = { readonly id: string; readonly url: string } | { readonly problem: string };

/** The datastore a URI names (`<DATASTORES_PATH>/<id>` on the API's origin), e.g. a task's associated resource. */
export function datastoreOfUri(uri: unknown, baseUrl: string): MemberOf {
    return memberOf(uri, baseUrl, DATASTORES_PATH);
}

/** The task a URI names (`<ASYNC_OPERATIONS_PATH>/<id>` on the API's origin): a 202's Location. */
export function taskOfUri(uri: unknown, baseUrl: string): MemberOf {
    return memberOf(uri, baseUrl, ASYNC_OPERATIONS_PATH);
}

/**
 * `<collection>/<id>` exactly, once resolved against the base URL: the same origin, no credentials, no
 * query or fragment, no trailing slash, one id of the API's shape.
 */
function memberOf(uri: unknown, baseUrl: string, collection: string): MemberOf {
    if (typeof uri !== "string") return { problem: `${describeValue(uri)} is not a URI` };
    const shown = describeUri(uri);
    let url: URL;
    try {
        url = new URL(uri, baseUrl);
    } catch {
        return { problem: `${shown} is not a URI` };
    }
    const origin = new URL(baseUrl).origin;
    if (url.username || url.password) {
        return { problem: `${shown} carries credentials, which the API never sends: refusing to follow it` };
    }
    if (url.origin !== origin) {
        return { problem: `${shown} is not on the API's origin ${origin}: refusing to send the API token there` };
    }
    const prefix = `${collection}/`;
    const id = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : undefined;
    // `href` keeps a bare "?" or "#" that `search` and `hash` report as empty.
    if (id === undefined || !isApiId(id) || url.href !== `${origin}${prefix}${id}`) {
        return {
            problem: `${shown} is not ${collection}/<id> with one id of the API: a resource URI outside the collection is refused`,
        };
    }
    return { id, url: url.href };
}

/** A URI for a message: any credentials in it replaced by "[redacted]", quoted, and cut to length. */
export function describeUri(uri: string): string {
    // Whatever precedes an "@" in the authority (or, as in "http:user:pw@host", in what follows the scheme).
    const redacted = uri.replace(/^([A-Za-z][A-Za-z0-9+.-]*:)?([\\/]*)[^/\\?#]*@/, "$1$2[redacted]@");
    return describeValue(redacted);
}

/** A value the server gave, quoted for a message and cut to length. */
export function describeValue(value: unknown): string {
    if (typeof value !== "string") return value === undefined ? "(none)" : typeof value;
    const cut = value.length > SHOWN_CHARS ? `${value.slice(0, SHOWN_CHARS)}...` : value;
    return quote(cut);
}
