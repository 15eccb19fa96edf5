// Pure: what a create's failed POST means. The name taken (409), the key spent on other inputs (422
// idempotency_key_reused), a definite refusal, or an outcome that is unknown: then the datastore may exist,
// and it is recorded as a pending create that the next `up` resolves.

import { messageOf } from "../../shared/text";
import type { NaturalKey } from "../datastoreSchema";
import { CreateOutcomeUnknownError } from "../errors/createOutcomeUnknownError";
import { TaskApiError } from "../errors/taskApiError";
import type { DatastoreRecord } from "../protocol/wire";
import { outcomeUnknown, pendingCreate, type RawInputs } from "./datastoreState";

/** What a failed POST of a create calls for. */
export type PostFailure =
    /** The name is taken by a datastore none of this resource's creates made: take it over, or refuse. */
    | { readonly kind: "conflict"; readonly conflict: TaskApiError }
    /** The key made an earlier create of other inputs, and no datastore has the name: try the next key. */
    | { readonly kind: "spent" }
    /** Fail with this error. */
    | { readonly kind: "fail"; readonly error: unknown };

/**
 * What to do after the POST of a create failed with `error`.
 *
 * Once an attempt of the POST may have made the datastore (outcomeUnknown: an earlier attempt of unknown
 * outcome included), no later refusal says otherwise: a 409 to the retried key may be that very request
 * still in progress, and a 400 or a 429 past the deadline does not undo it. The outcome is then unknown:
 * a pending create (partial state, not tainted), resolved by the next up through the key or the name.
 * `post.found`: the datastore listed with the name before the POST; `post.idempotencyKey`: the POST's key.
 */
export function afterFailedPost(
    error: unknown,
    aborted: boolean,
    post: {
        readonly inputs: RawInputs;
        readonly key: NaturalKey;
        readonly label: string;
        readonly idempotencyKey: string | undefined;
        readonly found: DatastoreRecord | undefined;
    },
): PostFailure {
    const { inputs, key, label, idempotencyKey, found } = post;
    if (!outcomeUnknown(error, aborted)) {
        if (error instanceof TaskApiError && error.status === 409) return { kind: "conflict", conflict: error };
        // The key made an earlier create of other inputs (the program changed since), and no datastore has
        // the name: whatever that create made is gone, so the key is spent like a replayed one.
        if (error instanceof TaskApiError && error.code === "idempotency_key_reused" && idempotencyKey && !found) {
            return { kind: "spent" };
        }
        return { kind: "fail", error };
    }
    // Names are unique: with one listed before the POST, the POST made none. Recording a pending create
    // would let a refresh or destroy take that one (perhaps someone else's) by its name.
    if (found) return { kind: "fail", error: new CreateOutcomeUnknownError(label, found.id, messageOf(error)) };
    return { kind: "fail", error: pendingCreate(inputs, key, error, idempotencyKey) };
}
