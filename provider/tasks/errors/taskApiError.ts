import { LifecycleError } from "../../shared/errors/lifecycleError";
import { type ApiSettingNames, storedConfigNote } from "./apiSettings";
import { readableQuery, requestLine } from "./requestLine";

/**
 * The task API answered a request with an error status. Carries the status, the API's error code and
 * its message (the token is never part of any of them); `advice`, when given, says why the client gave
 * up and what to do. `earlierOutcomeUnknown`: an earlier attempt of this same request (a retry with the
 * same Idempotency-Key) got no definite answer (no answer, a 5xx, a 408), so the API may have carried the
 * request out whatever this last answer says. `settings`: where the token is set, which a 401 or 403
 * names. The message names the request by method and path; `path` keeps its query too.
 */
export class TaskApiError extends LifecycleError {
    override readonly name = "TaskApiError";

    constructor(
        readonly method: string,
        readonly path: string,
        readonly status: number,
        readonly code: string | undefined,
        readonly apiMessage: string,
        readonly body: unknown,
        readonly advice?: string,
        readonly earlierOutcomeUnknown = false,
        settings?: ApiSettingNames,
    ) {
        // The API's own sentence may end with a period: one is enough.
        const said = apiMessage.replace(/\.$/, "");
        // A refused query is worth reading (a lookup.query the API does not take); otherwise it is noise.
        const query = status === 400 ? readableQuery(path) : undefined;
        super(
            `the task API answered ${requestLine(method, path)} with ${status}${code ? ` (${code})` : ""}: ${said}` +
                (query ? ` (the request's query: ${query})` : "") +
                (advice ? `. ${advice}` : "") +
                (earlierOutcomeUnknown
                    ? ". An earlier attempt of this request got no definite answer, so the API may have carried it out"
                    : "") +
                credentialsAdvice(status, settings),
        );
    }
}

/** For a 401 or 403: which setting holds the token, and that destroy and refresh use the stored one. */
function credentialsAdvice(status: number, settings: ApiSettingNames | undefined): string {
    if ((status !== 401 && status !== 403) || !settings?.token) return "";
    const what =
        status === 401
            ? "The API did not accept the token: check the token in"
            : "The API refused this request to the token: check that the token has the permissions it needs, in";
    const stored = settings.tokenInConfig ? `. ${storedConfigNote("token")}` : "";
    return `. ${what} ${settings.token}${stored}`;
}
