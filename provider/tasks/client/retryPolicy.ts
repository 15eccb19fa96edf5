// Pure decision of which failed requests may be sent again. Retrying is only safe when repeating the
// request cannot do the work twice: GET and DELETE are idempotent by HTTP's definition; POST and PATCH
// are only when they carry an Idempotency-Key the server honours, or when the server said it declined
// to handle them (429, or 503 with Retry-After: "not now", nothing done).

/** HTTP statuses that mean "try again later", not "this request is wrong". */
const TRANSIENT_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "DELETE"]);

/** What happened to a request; `retryAfter` when the answer carried a valid Retry-After. */
export type RequestOutcome =
    | { readonly status: number; readonly retryAfter?: boolean }
    | { readonly networkError: true };

/** Whether a request with this method may be sent again after this outcome. */
export function mayRetry(method: string, hasIdempotencyKey: boolean, outcome: RequestOutcome): boolean {
    if (declined(outcome)) return true;
    const repeatable = IDEMPOTENT_METHODS.has(method.toUpperCase()) || hasIdempotencyKey;
    if (!repeatable) return false;
    return "networkError" in outcome || TRANSIENT_STATUSES.has(outcome.status);
}

/**
 * Whether the server may have carried out a request that failed with this outcome: no answer (it may have
 * acted before the connection broke), or a 5xx or 408 (a gateway's 502/504 may come after the upstream
 * acted). Not when it declined the request (429, 503 with Retry-After), and never after any other status.
 */
export function mayHaveActed(outcome: RequestOutcome): boolean {
    if ("networkError" in outcome) return true;
    if (declined(outcome)) return false;
    return outcome.status >= 500 || outcome.status === 408;
}

/** The server declined the request without handling it: 429, or 503 with a Retry-After. */
function declined(outcome: RequestOutcome): boolean {
    if ("networkError" in outcome) return false;
    return outcome.status === 429 || (outcome.status === 503 && outcome.retryAfter === true);
}

/** Whether a status asks the client to slow down (its Retry-After is then to be honoured). */
export function isThrottled(status: number): boolean {
    return status === 429 || status === 503;
}
