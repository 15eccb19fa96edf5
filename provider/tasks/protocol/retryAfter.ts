// The server's word on when to come back, in each form APIs use: a `Retry-After` header of
// delay-seconds or an HTTP date (RFC 9110 section 10.2.3), or a timestamp in the body (AWS Cloud
// Control's `RetryAfter`). Pure: the caller gives `now`.

/**
 * Parses a Retry-After header: delay-seconds or an HTTP date (relative to `now`). Undefined when absent
 * or unreadable.
 */
export function parseRetryAfter(header: string | null | undefined, now: number): number | undefined {
    if (!header) return undefined;
    const trimmed = header.trim();
    if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
    // An HTTP date starts with the day's name ("Sun, 06 Nov 1994 08:49:37 GMT"); Date.parse would also
    // read "1.5" or "-1" as dates, turning a malformed header into a wait of 0.
    if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
    const date = Date.parse(trimmed);
    return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A timestamp in a body as a wait from `now`: epoch seconds (a number, as AWS JSON encodes timestamps)
 * or an ISO 8601 string. Undefined when it is neither.
 */
export function parseRetryAt(value: unknown, now: number): number | undefined {
    let at: number;
    if (typeof value === "number" && Number.isFinite(value) && value > 0) at = value * 1000;
    else if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value)) at = Date.parse(value);
    else return undefined;
    return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
