// Pure diff of a Datastore's stored outputs against its checked new inputs.

import type { ResourceDiff } from "../../shared/resourceDiff";
import { isUnknown } from "../../shared/unknown";
import type { DatastoreInputs, DatastoreOutputs } from "../datastoreSchema";
import { TIMEOUT_KEYS } from "../timeoutsSchema";

const NATURAL_KEY = ["hciClusterUuid", "clusterId", "name"] as const;

/**
 * The natural key and the datastore type force a replacement; the size grows in place (a PATCH task);
 * the create token, timeouts, adopt and untaint only change state. A tainted datastore (a create that did
 * not finish) is replaced unless the program sets `untaint`. (A create whose outcome was unknown is partial
 * state, and the engine updates partial state on the next up whatever the diff says: that update finds it.) A replacement that keeps the natural key
 * must delete first, since the name is unique per cluster; one that changes it creates first.
 */
export function diffDatastore(olds: Partial<DatastoreOutputs>, news: DatastoreInputs): ResourceDiff {
    const replaces: string[] = NATURAL_KEY.filter((key) => isUnknown(news[key]) || news[key] !== olds[key]);
    if (isUnknown(news.datastoreType) || news.datastoreType !== olds.datastoreType) replaces.push("datastoreType");
    const keepsTaint = olds.tainted === true && news.untaint !== true;
    if (keepsTaint) replaces.push("tainted");

    const changed =
        replaces.length > 0 ||
        isUnknown(news.sizeInBytes) ||
        news.sizeInBytes !== olds.sizeInBytes ||
        news.createToken !== olds.createToken ||
        timeoutsChanged(olds, news) ||
        news.adopt !== (olds.adopt ?? false) ||
        news.untaint !== (olds.untaint ?? false) ||
        olds.tainted === true ||
        unresolved(olds);
    // Unknown during preview counts as unchanged: the unsafe case, which must delete first.
    const keepsKey = NATURAL_KEY.every((key) => isUnknown(news[key]) || news[key] === olds[key]);
    return { changes: changed, replaces, deleteBeforeReplace: replaces.length > 0 && keepsKey };
}

/**
 * A create not resolved yet (nothing on record of what it made) or a task of ours last seen running is
 * always a change: a refresh that clears the init errors of partial state must not strand it, since
 * only an update resolves it.
 */
function unresolved(olds: Partial<DatastoreOutputs>): boolean {
    const running = olds.state === "CREATING" || olds.state === "UPDATING";
    return olds.datastoreId === undefined || (running && olds.taskId !== undefined);
}

/** Timeouts compared duration by duration, so the order of their keys is no change. */
function timeoutsChanged(olds: Partial<DatastoreOutputs>, news: DatastoreInputs): boolean {
    if (isUnknown(news.timeouts)) return true;
    return TIMEOUT_KEYS.some((key) => news.timeouts?.[key] !== olds.timeouts?.[key]);
}
