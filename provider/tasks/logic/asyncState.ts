// Pure state of an AsyncResource: the outputs recorded after each operation, partial state for the
// engine, the diff against new inputs, and what a pending create is resumed with.

import { canonicalJson } from "../../shared/canonicalJson";
import type { ResourceDiff } from "../../shared/resourceDiff";
import { stamped } from "../../shared/stateShape";
import { isUnknown } from "../../shared/unknown";
import type { AsyncResourceInputs, AsyncResourceOutputs, PendingOperation } from "../asyncResourceSchema";
import { PartialStateError } from "../errors/partialStateError";
import { isSelectorProblem, parseSelector, select } from "../protocol/selector";
import { TIMEOUT_KEYS } from "../timeoutsSchema";

/** Inputs as the engine hands them over: the checked inputs plus `__provider`. */
export type RawAsyncInputs = AsyncResourceInputs & Record<string, unknown>;

/** What an operation knows besides the inputs. */
export interface Known {
    readonly resourceId?: string | undefined;
    readonly resource?: unknown;
    readonly operation?: PendingOperation | undefined;
    readonly tainted: boolean;
    readonly taintReason?: string | undefined;
    readonly createKey?: string | undefined;
}

/** State from the inputs and what the API says. */
export function outputsOf(inputs: AsyncResourceInputs, known: Known): AsyncResourceOutputs {
    const { __provider: _, ...settings } = inputs as RawAsyncInputs;
    const outputs: AsyncResourceOutputs = { ...(settings as AsyncResourceInputs), tainted: known.tainted };
    if (known.resourceId !== undefined) outputs.resourceId = known.resourceId;
    if (known.resource !== undefined) outputs.resource = known.resource;
    if (known.operation !== undefined) outputs.operation = known.operation;
    if (known.taintReason !== undefined) outputs.taintReason = known.taintReason;
    if (known.createKey !== undefined) outputs.createKey = known.createKey;
    return outputs;
}

/** A create that was interrupted, or whose outcome was unknown: nothing on record, not tainted. */
export function isPendingCreate(olds: Partial<AsyncResourceOutputs>): boolean {
    return olds.resourceId === undefined && !olds.tainted;
}

/**
 * The inputs a pending create is resumed with: the program's settings, and the request as it was sent
 * (its body and createToken), since only a replay of that request with its token is recognised by the
 * API as the same create. Changes to the body since are sent by the update that follows.
 */
export function resumedInputs(olds: AsyncResourceOutputs, news: RawAsyncInputs): RawAsyncInputs {
    // The token as sent, or none when the create was sent without one (a token the program added since
    // would make a key the API never saw, and its 409 would refuse this resource's own create). [P]
    const { createToken: _, ...rest } = news;
    const sent = { ...rest, body: olds.body ?? news.body } as RawAsyncInputs;
    return olds.createToken === undefined ? sent : { ...sent, createToken: olds.createToken };
}

/**
 * Whether `found` is what already held the natural key when this resource's create was sent, and that
 * create was not seen to make it (`made`: its operation was followed to success): someone else's, which
 * no read records as this resource and no delete removes. [O]
 */
export function heldByAnother(
    props: Partial<AsyncResourceOutputs>,
    found: { readonly id: string } | undefined,
    made = false,
): boolean {
    return props.resourceId === undefined && props.keyHeldBy !== undefined && found?.id === props.keyHeldBy && !made;
}

/**
 * The partial state of a create sent while `holder` held its natural key, naming the holder (see
 * heldByAnother). A partial state that names what the create made is left as it is.
 */
export function heldPartial(error: PartialStateError, holder: string): PartialStateError {
    if (error.properties.resourceId !== undefined) return error;
    return new PartialStateError(error.message, error.id, { ...error.properties, keyHeldBy: holder }, error.reasons);
}

/** The outputs a failed update leaves on record: the old state, with the operation it was waiting on. */
export function keptOutputs(
    olds: AsyncResourceOutputs,
    news: AsyncResourceInputs,
    operation?: PendingOperation,
): AsyncResourceOutputs {
    const { __provider: _, ...rest } = olds as AsyncResourceOutputs & { __provider?: unknown };
    const kept: AsyncResourceOutputs = { ...rest, untaint: news.untaint, timeouts: news.timeouts };
    if (news.timeouts === undefined) delete kept.timeouts;
    if (operation) kept.operation = operation;
    return kept;
}

/**
 * Partial state for the engine: the raw inputs (with `__provider`) and what is known, under the natural
 * key. Undefined values are left out: the SDK server cannot encode them.
 */
export function partialState(
    inputs: RawAsyncInputs,
    key: string,
    label: string,
    outputs: AsyncResourceOutputs,
    reason: string,
): PartialStateError {
    const message = `${label}: ${reason}`;
    const properties = Object.fromEntries(
        Object.entries({ ...inputs, ...stamped(outputs) }).filter(([, value]) => value !== undefined),
    );
    return new PartialStateError(message, key, properties, [message]);
}

/** A create whose key the API still processed at the deadline: its outcome unknown, recorded as a pending create. */
export function stillOutstanding(inputs: RawAsyncInputs, key: string, label: string, sentKey: string | undefined) {
    const reason =
        `the API still processes an earlier create request with this resource's key${sentKey === undefined ? "" : ` (${sentKey})`} ` +
        "at the create's deadline, so its outcome is unknown and no other was sent. The resource may exist: the next " +
        "`pulumi up` replays the key and records what that request made, or creates it";
    const createKey = inputs.createToken === undefined ? sentKey : undefined;
    return partialState(inputs, key, label, outputsOf(inputs, { tainted: false, createKey }), reason);
}

/**
 * The body as the API has it now: each value the program's body sets, taken from the API's record where
 * the record has it at the same place (an object walked into, anything else taken whole). What the
 * record does not show (a write-only secret, a field the API renames) keeps the body's value. So a
 * refresh that finds a change made outside Pulumi records it in `body`, the diff of the next `up` shows
 * it, and the update sends the program's body back.
 */
export function bodyAsRecorded(body: Record<string, unknown>, record: unknown): Record<string, unknown> {
    if (typeof record !== "object" || record === null || Array.isArray(record)) return body;
    const recorded = record as Record<string, unknown>;
    const result: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) {
        if (!Object.hasOwn(recorded, name)) result[name] = value;
        else if (isObject(value) && isObject(recorded[name])) result[name] = bodyAsRecorded(value, recorded[name]);
        else result[name] = recorded[name];
    }
    return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Settings whose change moves the resource elsewhere: each replaces it. */
const LOCATION = ["collectionPath", "itemPath", "pathParameters", "naturalKey", "idField"] as const;

/**
 * The API, its location and the natural key replace; so do the body properties the program names in
 * replaceOnChanges; other body changes update in place (the dialect's update call). Settings only the
 * state knows change nothing at the API. A tainted resource is replaced unless the program sets untaint.
 * A replacement that keeps the natural key deletes first (the key is unique at the API).
 */
export function diffAsyncResource(olds: Partial<AsyncResourceOutputs>, news: AsyncResourceInputs): ResourceDiff {
    const replaces: string[] = [];
    const oldApi = olds.api;
    if (!oldApi || differs(oldApi.url, news.api.url)) replaces.push("api.url");
    if (!oldApi || differs(oldApi.dialect, news.api.dialect)) replaces.push("api.dialect");
    if (differs(oldApi?.typeName, news.api.typeName)) replaces.push("api.typeName");
    for (const name of LOCATION) if (differs(olds[name], news[name])) replaces.push(name);
    const newKey = keyIn(news);
    const keyChanged = differs(keyIn(olds), newKey);
    if (keyChanged) replaces.push(news.key !== undefined || olds.key !== undefined ? "key" : `body.${news.naturalKey}`);
    for (const name of Array.isArray(news.replaceOnChanges) ? news.replaceOnChanges : []) {
        if (differs(olds.body?.[name], isUnknown(news.body) ? news.body : news.body[name]))
            replaces.push(`body.${name}`);
    }
    if (olds.tainted === true && news.untaint !== true) replaces.push("tainted");
    const settingsChanged =
        differs(olds.body, news.body) ||
        differs(oldApi, news.api) ||
        differs(olds.lookup, news.lookup) ||
        differs(olds.replaceOnChanges ?? [], news.replaceOnChanges) ||
        news.createToken !== olds.createToken ||
        isUnknown(news.timeouts) ||
        TIMEOUT_KEYS.some((key) => differs(olds.timeouts?.[key], news.timeouts?.[key])) ||
        news.adopt !== (olds.adopt ?? false) ||
        news.untaint !== (olds.untaint ?? false) ||
        olds.tainted === true ||
        // Something left to resolve (a create not seen to its end, an operation of ours on record): the
        // next up must call update even after a refresh has cleared the engine's init errors. [N]
        olds.resourceId === undefined ||
        olds.operation !== undefined;
    return {
        changes: replaces.length > 0 || settingsChanged,
        replaces,
        // Unknown during preview counts as unchanged: the unsafe case, which must delete first.
        deleteBeforeReplace:
            replaces.length > 0 &&
            (isUnknown(newKey) || !keyChanged) &&
            (isUnknown(news.api) || isUnknown(news.api.url) || !differs(oldApi?.url, news.api.url)),
    };
}

/** Whether the update must send the body: it changed since it was last sent. */
export function bodyChanged(olds: Partial<AsyncResourceOutputs>, news: AsyncResourceInputs): boolean {
    return differs(olds.body, news.body);
}

function keyIn(values: Partial<AsyncResourceInputs>): unknown {
    if (values.key !== undefined) return values.key;
    if (!values.body || isUnknown(values.body) || !values.naturalKey) return values.body;
    const at = parseSelector(values.naturalKey);
    return isSelectorProblem(at) ? undefined : select(values.body, at);
}

/** Whether two JSON values differ (object keys compared in any order); unknown differs from everything. */
export function differs(a: unknown, b: unknown): boolean {
    if (isUnknown(a) || isUnknown(b)) return true;
    return canonicalJson(a) !== canonicalJson(b);
}
