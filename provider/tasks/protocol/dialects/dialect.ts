// What a dialect is: how one family of APIs starts long-running writes and tells how they end. The
// engine (io/) sends the calls a dialect builds and hands it the answers; the dialect only reads them.
// So every dialect is pure: no I/O, no clock but the `now` it is given, and each fact of its wire
// format (a header, a status word, a body field) lives in its own file, with the source it was read in.

/** The dialects the package speaks. */
export type DialectName = "generic" | "greenlake" | "azure-arm" | "azure" | "google" | "aws-cloudcontrol";

/** Every DialectName, for validation and documentation. */
export const DIALECT_NAMES: readonly DialectName[] = [
    "generic",
    "greenlake",
    "azure-arm",
    "azure",
    "google",
    "aws-cloudcontrol",
];

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** One request, as a dialect wants it sent. */
export interface HttpCall {
    readonly method: HttpMethod;
    /** A path and query on the API, or an absolute URL on its origin (a monitor the API named). */
    readonly path: string;
    readonly body?: unknown;
    /** Headers of the dialect (`Idempotency-Key`, `X-Amz-Target`, ...); never the credentials. */
    readonly headers?: Readonly<Record<string, string>>;
    /**
     * Whether sending it again cannot do the work twice: GET and DELETE, a PUT (idempotent by HTTP),
     * a write carrying a token the API honours. Only such a call is retried after an unknown outcome.
     */
    readonly repeatable: boolean;
}

/** One answer, as the dialect reads it. */
export interface HttpAnswer {
    readonly status: number;
    /** A header's value, case-insensitively; undefined when absent. */
    readonly header: (name: string) => string | undefined;
    /** The parsed JSON body; undefined when there was none. */
    readonly body: unknown;
}

/** Where an operation is, in the engine's words. */
export type OperationState = "pending" | "succeeded" | "failed" | "canceled";

/** What one look at an operation (or a synchronous answer) says. */
export interface OperationView {
    readonly state: OperationState;
    /** The API's own word for the state, for messages and progress ("Running", "IN_PROGRESS"). */
    readonly status: string;
    readonly progressPercent?: number;
    /** The server's word on when to look again, in ms from now. */
    readonly retryAfterMs?: number;
    /** Why it failed or was canceled, as the API says it (code and message). */
    readonly error?: string;
    /** Where the resource is (a path or URL on the API), when the operation says. */
    readonly resourceLocation?: string;
    /** The resource's id at the API, when the operation says. */
    readonly resourceId?: string;
    /** The resource itself, when the answer carries it (a sync PUT, Google's `response`, a final 200). */
    readonly record?: unknown;
    /** The operation failed before it did anything, for a reason that passes (throttling): submit again. */
    readonly resubmit?: boolean;
}

/** How to look at an operation again. Strings only: it is recorded in the stack's state. */
export interface OperationHandle {
    /** Which way of polling: the dialect's own names ("monitor", "azure-async", "location", ...). */
    readonly kind: string;
    /** What to poll: a URL path on the API, an operation's name, a request token. */
    readonly ref: string;
}

/** What a write answered: it is over already, or an operation to follow. */
export type Submitted =
    | { readonly kind: "done"; readonly view: OperationView }
    | { readonly kind: "operation"; readonly handle: OperationHandle; readonly view?: OperationView };

/** What an error answer means to the engine; undefined: nothing it can act on (the error stands). */
export type ErrorMeaning =
    | "not-found" // the resource (or operation) does not exist
    | "conflict" // a resource with this natural key exists already
    | "token-reused" // the create token was used before with another request
    | "token-in-progress" // the first request with this token is still being handled
    | "throttled" // not now: nothing was done, retry later
    | undefined;

/** Where the resource's collection and items are, filled from the program's inputs. */
export interface Target {
    /** The collection's path and query (`/widgets`, `/v1/projects/p/locations/l/widgets`). */
    readonly collectionPath: string;
    /** The path of the item with this API id. */
    readonly itemPath: (id: string) => string;
    /** The item's id when the program sets it before the create (a PUT, Google's `{resource}_id`). */
    readonly createId?: string;
    /** Cloud Control's resource type name (`AWS::S3::Bucket`). */
    readonly typeName?: string;
}

/** The kinds of write an operation can be. */
export type WriteKind = "create" | "update" | "delete";

/** How one family of APIs writes asynchronously. */
export interface Dialect {
    readonly name: DialectName;
    /**
     * Whether a create sent again with the same token replays the first one (an idempotency key): then
     * a resource found under the natural key may be the one an earlier create of ours made. A create that
     * is a PUT to the item's own path is idempotent without a token, and a token tells nothing.
     */
    readonly tokenReplaysCreate: boolean;
    /** The key the `generation`-th create of `naturalKey` with this create token sends, in the form the API takes (tokenForms.ts). */
    createKey(token: string, generation: number, naturalKey: string): string;
    /** The call that creates the resource; `token` makes a repeat of it replay, where the API allows. */
    create(target: Target, body: unknown, token: string | undefined): HttpCall;
    /** The call that reads the resource with this id. */
    read(target: Target, id: string): HttpCall;
    /** The call that changes the resource with this id to `body`. */
    update(target: Target, id: string, body: unknown, token: string | undefined): HttpCall;
    /** The call that deletes the resource with this id. */
    delete(target: Target, id: string): HttpCall;
    /** What a successful answer to `call`, a write, means: done, or an operation to follow. */
    submitted(kind: WriteKind, answer: HttpAnswer, now: number, call?: HttpCall): Submitted;
    /** The call that looks at an operation. */
    poll(handle: OperationHandle): HttpCall;
    /**
     * What an answer to a poll says. `answer.status` may be an error status only for handles whose
     * dialect reads error statuses as the operation's end (`pollsReadErrors`).
     */
    polled(handle: OperationHandle, answer: HttpAnswer, now: number): OperationView;
    /** Whether error answers (4xx) to polls of this handle are the operation's end, not a failed poll. */
    pollsReadErrors(handle: OperationHandle): boolean;
    /**
     * Whether a record shows the resource at rest, not in the middle of an operation (ARM's non-terminal
     * provisioningState): only then are its values the resource's. Absent: always.
     */
    atRest?(record: unknown): boolean;
    /**
     * Why a record shows that the resource's last provisioning failed (ARM's `provisioningState`
     * Failed or Canceled), or undefined: such a resource is recorded tainted, so the next up replaces
     * it, or, with `untaint`, sends its body again (an idempotent PUT retries the provisioning).
     */
    brokenReason?(record: unknown): string | undefined;
    /**
     * Whether a record shows the resource being deleted (ARM's provisioningState Deleting): it is gone
     * once that deletion ends, or back at rest if it fails, so it is waited out, never read as the
     * resource. Absent: no record says so.
     */
    beingDeleted?(record: unknown): boolean;
    /**
     * Where the API lists its operations (Cloud Control's ListResourceRequests): a delete of ours whose
     * answer was never read (its process was killed) is found there and followed, where reads alone would
     * show the resource until that delete ends, however long it runs. Absent: no such list.
     */
    readonly runningDeletes?: RunningDeletes;
    /** The resource in an answer to `read` (Cloud Control wraps it; most APIs answer it as is). */
    record(answer: HttpAnswer): unknown;
    /**
     * A conflict answered to a keyed create always means the natural key is taken: the API keeps no
     * request in progress by its key (the IETF draft's 409 for one does not apply). Absent: it may.
     */
    readonly keyedConflictIsTaken?: boolean;
    /** The id of what holds the natural key, when a conflict's body names it (GreenLake's `existingId`). */
    conflictHolder?(body: unknown): unknown;
    /** What an error answer means; `body` is its parsed JSON, when there was any. */
    meaning(status: number, body: unknown): ErrorMeaning;
}

/** How a dialect lists the deletes still running at the API, a page at a time. */
export interface RunningDeletes {
    /** The call for one page (`page`: what the previous page said comes next). */
    call(target: Target, page: string | undefined): HttpCall;
    /** The deletes of the resource `id` still running in one page's answer, and the next page, if any. */
    read(
        target: Target,
        id: string,
        answer: HttpAnswer,
    ): { readonly running: OperationHandle[]; readonly next?: string };
}
