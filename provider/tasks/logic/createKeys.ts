// The chain of create keys behind one createToken: the token itself, then token~1, token~2, ... Each
// create of the resource (a replacement, or a re-creation after its datastore was deleted) uses the next
// key once the previous one has proved spent, so a retried create never makes a second datastore.

import { chainKey } from "../protocol/dialects/tokenForms";

/** How many creates one createToken may stand for (each replacement or re-creation uses one). */
export const MAX_CREATE_GENERATIONS = 1000;

/** The idempotency key of the `generation`-th create of a resource with this token: token, token~1, ... */
export const createKey = chainKey;
