// Pure decision of which failed requests may be sent again. Retrying is only safe when repeating the
// request cannot do the work twice: GET and DELETE are idempotent by HTTP's definition; POST and PATCH
// are only when they carry an Idempotency-Key the server honours.

/** HTTP statuses that mean "try again later", not "this request is wrong". */
const TRANSIENT_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "DELETE"]);

/** What happened to a request. */
export type RequestOutcome = { readonly status: number } | { readonly networkError: true };

/** Whether a request with this method may be sent again after this outcome. */
export function mayRetry(method: string, hasIdempotencyKey: boolean, outcome: RequestOutcome): boolean {
    const repeatable = IDEMPOTENT_METHODS.has(method.toUpperCase()) || hasIdempotencyKey;
    if (!repeatable) return false;
    return "networkError" in outcome || TRANSIENT_STATUSES.has(outcome.status);
}

/** Whether a status asks the client to slow down (its Retry-After is then to be honoured). */
export function isThrottled(status: number): boolean {
    return status === 429 || status === 503;
}
