// The requests of one AsyncResource, in its dialect: send a call the dialect built (throttling in the
// dialect's own words waited out within the deadline), read a record by id or at a location, look the
// resource up by its natural key, submit a write and follow its operation to its end.

import { followOperation } from "../client/followOperation";
import { doublingWaitMs, nextWait, type PollSchedule } from "../client/pollSchedule";
import type { TaskApiClient, TaskApiResponse } from "../client/taskApiClient";
import { DeletionUnderWayError } from "../errors/deletionUnderWayError";
import { TaskApiContractError } from "../errors/taskApiContractError";
import { TaskApiError } from "../errors/taskApiError";
import { type AsyncSpec, beingDeleted } from "../logic/asyncSpec";
import type { Deadline } from "../logic/deadline";
import type { TaskProcessContext } from "../processContext";
import type {
    ErrorMeaning,
    HttpAnswer,
    HttpCall,
    OperationHandle,
    OperationView,
    Submitted,
    WriteKind,
} from "../protocol/dialects/dialect";

export type { Deadline };

/** How many pages a lookup reads at most: a list that goes on is refused rather than read forever. */
const MAX_LOOKUP_PAGES = 50;

/** How many reads a result that lags behind its operation gets before the read is taken as the truth. */
const SETTLE_LOOKS = 6;

/** A record read from the API: its API id and the record itself. */
export interface Found {
    readonly id: string;
    readonly record: unknown;
}

/**
 * The longest wait between writes refused because another operation runs on the resource. That
 * operation may take minutes (an interrupted create's, someone else's): waits that grow to a minute, as
 * the Azure SDK's retries grow to 64 s, keep a long timeout from sending hundreds of refused writes
 * (dialect chaos seed azure 6592: 2 hours of 409s every 10 s).
 */
export const BUSY_MAX_WAIT_MS = 60_000;

/** The API of one resource, as its spec and dialect describe it. */
export class AsyncApi {
    constructor(
        readonly spec: AsyncSpec,
        private readonly client: TaskApiClient,
        private readonly context: TaskProcessContext,
        private readonly schedule: PollSchedule,
        /** Told of every operation followed (a kind whose state records its last task). */
        private readonly onFollow?: (handle: OperationHandle) => void,
    ) {}

    /** The API's base URL, against which the URIs its answers name are resolved. */
    get baseUrl(): string {
        return this.client.baseUrl;
    }

    /** What an error means in the dialect's words; undefined for anything but an API's error answer. */
    meaning(error: unknown): ErrorMeaning {
        return error instanceof TaskApiError ? this.spec.dialect.meaning(error.status, error.body) : undefined;
    }

    /**
     * Sends a call. A refusal the dialect calls throttling (Cloud Control's ThrottlingException is a 400)
     * did nothing, so it is sent again after a backoff, until the deadline.
     */
    async send(call: HttpCall, deadline: Deadline): Promise<HttpAnswer> {
        return this.retrying(
            deadline,
            (error) =>
                // A 429 was already retried by the client; an answer that may have been acted on is not sent twice.
                !(error instanceof TaskApiError && (error.status === 429 || error.earlierOutcomeUnknown)) &&
                this.meaning(error) === "throttled",
            async () => {
                const answer: TaskApiResponse<unknown> = await this.client.send({
                    method: call.method,
                    path: call.path,
                    ...(call.body === undefined ? {} : { body: call.body }),
                    ...(call.headers ? { headers: call.headers } : {}),
                    repeatable: call.repeatable,
                    signal: this.context.signal,
                    deadline: deadline.at,
                    deadlineSetting: deadline.setting,
                });
                return { status: answer.status, header: answer.header, body: answer.body };
            },
        );
    }

    /**
     * Runs `attempt` until it succeeds, again after each doubling wait of the schedule while `retryable`
     * says its error did nothing worth giving up for, within the deadline (the last error otherwise).
     */
    private async retrying<T>(
        deadline: Deadline,
        retryable: (error: unknown, attempt: number) => boolean,
        attempt: () => Promise<T>,
        schedule: PollSchedule = this.schedule,
    ): Promise<T> {
        for (let count = 0; ; count++) {
            try {
                return await attempt();
            } catch (error) {
                const left = deadline.at - this.context.clock();
                if (left <= 0 || !retryable(error, count)) throw error;
                const wait = nextWait({ attempt: count, schedule, random: this.context.random });
                await this.context.sleep(Math.min(wait, left), this.context.signal);
            }
        }
    }

    /** The record with this API id; undefined when the API has none (404 or its dialect's not-found). */
    async get(id: string, deadline: Deadline): Promise<Found | undefined> {
        return this.recordOf(this.spec.dialect.read(this.spec.target, id), deadline, id);
    }

    /**
     * The record with an id an answer named (a conflict's holder), checked to be of the API's shape
     * (the item path refuses any other) and to have this resource's natural key; undefined when gone.
     */
    async getNamed(id: unknown, deadline: Deadline, namedBy: string): Promise<Found | undefined> {
        if (typeof id !== "string" && typeof id !== "number")
            throw new TaskApiContractError(
                `${namedBy} names ${JSON.stringify(id) ?? String(id)}, which is not an id; nothing was read, adopted or deleted. Check the API (or what stands between us and it).`,
            );
        let call: HttpCall;
        try {
            call = this.spec.dialect.read(this.spec.target, String(id));
        } catch {
            // Not an id of the API's shape: its path would leave the collection, so nothing is sent.
            throw new TaskApiContractError(
                `${namedBy} names ${JSON.stringify(String(id))}, which is not an id of the API; nothing was read, adopted or deleted. Check the API (or what stands between us and it).`,
            );
        }
        const found = await this.recordOf(call, deadline, String(id));
        if (found) this.checkKey(found, namedBy);
        return found;
    }

    /**
     * Refuses a record an answer named that has another natural key: an answer naming another resource
     * is never recorded, adopted or deleted as this one.
     */
    checkKey(found: Found, namedBy: string): void {
        const { spec } = this;
        const key = spec.keyOf(found.record);
        if (spec.keyIsId || key === undefined || key === spec.key) return;
        throw new TaskApiContractError(
            `${namedBy} names ${JSON.stringify(found.id)}, which is not ${spec.label} (its natural key is ${JSON.stringify(key)}): ` +
                "the API answered for another resource, so nothing was recorded, adopted or deleted. Check the API (or what stands between us and it).",
        );
    }

    /** The record at a location an operation named (a path or URL on the API's origin). */
    async getAt(location: string, deadline: Deadline): Promise<Found | undefined> {
        return this.recordOf({ method: "GET", path: location, repeatable: true }, deadline, undefined);
    }

    /** How long `settled`'s looks span at most: a read still absent after it does not lag, it is gone. */
    get settleSpanMs(): number {
        let span = 0;
        for (let look = 1; look < SETTLE_LOOKS; look++) span += doublingWaitMs(look - 1, this.schedule);
        return span;
    }

    /**
     * Reads after an operation said it ended well, as long as the API's reads lag behind it (a replica,
     * an eventually consistent list): looks again, after the poll schedule's doubling waits, until
     * `settled` holds or `looks` reads were made, within the deadline; answers the last read. Without
     * this, a read that lags would make a create that succeeded look like one that made nothing.
     */
    async settled<T>(
        read: () => Promise<T>,
        settled: (value: T) => boolean,
        deadline: Deadline,
        looks = SETTLE_LOOKS,
        /** Told before each wait, with its number (from 1). */
        onWait?: (look: number) => void,
    ): Promise<T> {
        let value = await read();
        for (let look = 1; look < looks && !settled(value); look++) {
            const left = deadline.at - this.context.clock();
            if (left <= 0) break;
            onWait?.(look);
            const wait = Math.min(doublingWaitMs(look - 1, this.schedule), left);
            await this.context.sleep(wait, this.context.signal);
            value = await read();
        }
        return value;
    }

    /**
     * What `read` finds once no deletion is under way: a record being deleted (an interrupted destroy's
     * DELETE that landed after all, another client's) is read again, after the poll schedule's doubling
     * waits (as `settled` does, without a limit on looks), until it is gone (undefined) or back at rest
     * (its deletion failed). Read as present, it would stay in the stack's state and vanish later; read
     * as gone at once, a failed deletion would leave it unknown to the stack. `operation` names the wait in the error when the deadline comes first.
     */
    async present(
        read: () => Promise<Found | undefined>,
        deadline: Deadline,
        operation: string,
    ): Promise<Found | undefined> {
        const startedAt = this.context.clock();
        const deleting = (found: Found | undefined): found is Found =>
            found !== undefined && beingDeleted(this.spec, found.record);
        const found = await this.settled(
            read,
            (value) => !deleting(value),
            deadline,
            Number.POSITIVE_INFINITY,
            (look) => {
                if (look === 1)
                    this.context.report(`${this.spec.label}: being deleted at the API; waiting for that to end`);
            },
        );
        if (deleting(found))
            throw new DeletionUnderWayError(
                this.spec.label,
                found.id,
                operation,
                this.context.clock() - startedAt,
                deadline.setting,
            );
        return found;
    }

    /**
     * The resource with the natural key; undefined when there is none, an error when there are several.
     * A kind whose lookups filter by the whole key refuses an answer holding any other: a server that
     * ignores the filter never makes the provider read, adopt or delete something else.
     */
    async lookUp(deadline: Deadline): Promise<Found | undefined> {
        const { spec } = this;
        if (spec.keyIsId) return this.get(spec.key, deadline);
        const items: unknown[] = [];
        for (let page = 0, path: string | undefined = spec.listPath; path !== undefined; page++) {
            if (page === MAX_LOOKUP_PAGES)
                throw new TaskApiContractError(
                    `${spec.label}: the lookup at ${spec.listPath} goes on past ${MAX_LOOKUP_PAGES} pages; narrow lookup.query so the natural key is found in fewer`,
                );
            const answer = await this.send({ method: "GET", path, repeatable: true }, deadline);
            const pageItems = spec.listItems(answer.body);
            if (!pageItems)
                throw new TaskApiContractError(
                    `${spec.label}: the list at ${path} has no list of items where lookup.items says; set lookup.items to where they are`,
                );
            items.push(...pageItems);
            path = spec.nextPage(answer.body);
        }
        for (const item of items) this.checkRecord(item, "GET", spec.listPath);
        const matches = items.filter((record) => spec.keyOf(record) === spec.key);
        if (spec.rules?.exactLookup && matches.length < items.length)
            throw new TaskApiContractError(
                `the API answered a lookup of ${spec.label} (GET ${spec.listPath}) with ${items.length - matches.length} of ` +
                    `${items.length} records that do not match the filter, so nothing was read, adopted or deleted. ` +
                    "Check that the API honours the `filter` parameter.",
            );
        if (matches.length > 1)
            throw new TaskApiContractError(
                `${spec.label} matches ${matches.length} resources (ids ${matches.map((r) => spec.idOf(r)).join(", ")}); the natural key must name one`,
            );
        if (matches.length === 0) return undefined;
        const id = spec.idOf(matches[0]);
        if (id === undefined)
            throw new TaskApiContractError(
                `${spec.label}: its record at ${spec.listPath} has no id where idField says`,
            );
        if (spec.rules?.exactLookup) return { id, record: matches[0] };
        // The list may be a summary: the item's own record is the truth.
        return (await this.get(id, deadline)) ?? undefined;
    }

    /**
     * The deletes of the resource `id` still running at the API, where the API lists its operations
     * (Dialect.runningDeletes); none where it does not.
     */
    async runningDeletes(id: string, deadline: Deadline): Promise<OperationHandle[]> {
        const { spec } = this;
        const lists = spec.dialect.runningDeletes;
        if (!lists) return [];
        const running: OperationHandle[] = [];
        let page: string | undefined;
        for (let pages = 0; pages === 0 || page !== undefined; pages++) {
            if (pages === MAX_LOOKUP_PAGES)
                throw new TaskApiContractError(
                    `${spec.label}: the API's list of running deletes goes on past ${MAX_LOOKUP_PAGES} pages`,
                );
            const answer = await this.send(lists.call(spec.target, page), deadline);
            const read = lists.read(spec.target, id, answer);
            running.push(...read.running);
            page = read.next;
        }
        return running;
    }

    /**
     * Sends a write and says what it answered: done, or an operation to follow. An update or delete
     * refused as a conflict (409: another operation runs on the resource, ARM's
     * AnotherOperationInProgress, Google's ABORTED; perhaps one of ours an interrupted `up` left) did
     * nothing: it is sent again once the resource is free, after doubling waits, within the deadline,
     * built afresh (`call()`), so with a new idempotency key: an API may replay a refusal for a key.
     * Those waits grow past the poll schedule's longest, to BUSY_MAX_WAIT_MS.
     */
    async submit(kind: WriteKind, call: () => HttpCall, deadline: Deadline): Promise<Submitted> {
        return this.retrying(
            deadline,
            (error, attempt) => {
                const busy = kind !== "create" && this.meaning(error) === "conflict";
                if (busy && attempt === 0)
                    this.context.report(`${this.spec.label}: another operation runs on it; waiting for it to end`);
                return busy;
            },
            async () => {
                const sent = call();
                const answer = await this.send(sent, deadline);
                return this.spec.dialect.submitted(kind, answer, this.context.clock(), sent);
            },
            { ...this.schedule, maxMs: Math.max(this.schedule.maxMs, BUSY_MAX_WAIT_MS) },
        );
    }

    /**
     * Follows an operation to its end (succeeded, failed or canceled); stopping short is an
     * OperationWaitError with its handle. `what`: "the create of ...", for messages and progress.
     */
    async follow(
        handle: OperationHandle,
        first: OperationView | undefined,
        what: string,
        startedAt: number,
        deadline: Deadline,
        observe?: (view: OperationView) => void,
    ): Promise<OperationView> {
        this.onFollow?.(handle);
        const { view } = await followOperation({
            client: this.client,
            dialect: this.spec.dialect,
            handle,
            first,
            what,
            startedAt,
            deadline: deadline.at,
            deadlineSetting: deadline.setting,
            signal: this.context.signal,
            clock: this.context.clock,
            sleep: this.context.sleep,
            random: this.context.random,
            schedule: this.schedule,
            onProgress: (seen) => {
                observe?.(seen);
                const percent = seen.progressPercent === undefined ? "" : ` ${seen.progressPercent}%`;
                this.context.report(`${what}: ${seen.status}${percent}`);
            },
        });
        return view;
    }

    private async recordOf(call: HttpCall, deadline: Deadline, id: string | undefined): Promise<Found | undefined> {
        let answer: HttpAnswer;
        try {
            answer = await this.send(call, deadline);
        } catch (error) {
            if (this.meaning(error) === "not-found") return undefined;
            throw error;
        }
        const record = this.spec.dialect.record(answer);
        if (record !== undefined) this.checkRecord(record, call.method, call.path);
        const found = this.spec.idOf(record) ?? id;
        if (record === undefined || found === undefined)
            throw new TaskApiContractError(
                `${this.spec.label}: the API answered ${call.method} ${call.path} without a record${record === undefined ? "" : " with an id"}`,
            );
        if (id !== undefined && found !== id)
            throw new TaskApiContractError(
                `the API answered ${call.method} ${call.path} with the record of ${JSON.stringify(found)}, not the one asked for, ` +
                    "so nothing of it was used. Check the API (or what stands between us and it).",
            );
        return { id: found, record };
    }

    /** Refuses a record its kind cannot use (a field it reads missing, an id not of the API's shape). */
    private checkRecord(record: unknown, method: string, path: string): void {
        const error = this.spec.rules?.recordError(record, method, path);
        if (error) throw error;
    }
}
