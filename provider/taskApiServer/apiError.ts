import type { ErrorCode } from "../tasks/protocol/wire";

/**
 * A request the API refuses, with the status, error code and sentence it answers. Thrown by validation and
 * by the datastore model; the server turns it into `{ "error": code, "message": message, ...body }`.
 */
export class ApiError extends Error {
    override readonly name = "ApiError";

    constructor(
        readonly status: number,
        readonly code: ErrorCode,
        message: string,
        /** Extra headers (Retry-After, Allow, WWW-Authenticate) and body fields (existingId). */
        readonly extra: {
            readonly headers?: Readonly<Record<string, string>>;
            readonly body?: Readonly<Record<string, unknown>>;
        } = {},
    ) {
        super(message);
    }
}

/** A 400 for a malformed request. */
export function badRequest(message: string): ApiError {
    return new ApiError(400, "bad_request", message);
}
