// The requests of one AsyncResource, in its dialect: send a call the dialect built (throttling in the
// dialect's own words waited out within the deadline), read a record by id or at a location, look the
// resource up by its natural key, submit a write and follow its operation to its end.

import { followOperation } from "../client/followOperation";
import type { PollSchedule } from "../client/pollSchedule";
import { nextWait } from "../client/pollSchedule";
import type { TaskApiClient, TaskApiResponse } from "../client/taskApiClient";
import { TaskApiContractError } from "../errors/taskApiContractError";
import { TaskApiError } from "../errors/taskApiError";
import type { AsyncSpec } from "../logic/asyncSpec";
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

/** When an operation must be over, and the setting that says so (for messages). */
export interface Deadline {
    readonly at: number;
    readonly setting: string;
}

/** How many reads a result that lags behind its operation gets before the read is taken as the truth. */
const SETTLE_LOOKS = 6;

/** A record read from the API: its API id and the record itself. */
export interface Found {
    readonly id: string;
    readonly record: unknown;
}

/** The API of one resource, as its spec and dialect describe it. */
export class AsyncApi {
    constructor(
        readonly spec: AsyncSpec,
        private readonly client: TaskApiClient,
        private readonly context: TaskProcessContext,
        private readonly schedule: PollSchedule,
    ) {}

    /** What an error means in the dialect's words; undefined for anything but an API's error answer. */
    meaning(error: unknown): ErrorMeaning {
        return error instanceof TaskApiError ? this.spec.dialect.meaning(error.status, error.body) : undefined;
    }

    /**
     * Sends a call. A refusal the dialect calls throttling (Cloud Control's ThrottlingException is a 400)
     * did nothing, so it is sent again after a backoff, until the deadline.
     */
    async send(call: HttpCall, deadline: Deadline): Promise<HttpAnswer> {
        for (let attempt = 0; ; attempt++) {
            try {
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
            } catch (error) {
                const status = error instanceof TaskApiError ? error.status : 0;
                if (
                    status === 429 ||
                    this.meaning(error) !== "throttled" ||
                    (error instanceof TaskApiError && error.earlierOutcomeUnknown)
                )
                    throw error;
                const left = deadline.at - this.context.clock();
                if (left <= 0) throw error;
                const wait = nextWait({ attempt, schedule: this.schedule, random: this.context.random });
                await this.context.sleep(Math.min(wait, left), this.context.signal);
            }
        }
    }

    /** The record with this API id; undefined when the API has none (404 or its dialect's not-found). */
    async get(id: string, deadline: Deadline): Promise<Found | undefined> {
        return this.recordOf(this.spec.dialect.read(this.spec.target, id), deadline, id);
    }

    /** The record at a location an operation named (a path or URL on the API's origin). */
    async getAt(location: string, deadline: Deadline): Promise<Found | undefined> {
        return this.recordOf({ method: "GET", path: location, repeatable: true }, deadline, undefined);
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
    ): Promise<T> {
        let value = await read();
        for (let look = 1; look < looks && !settled(value); look++) {
            const left = deadline.at - this.context.clock();
            if (left <= 0) break;
            const wait = Math.min(this.schedule.initialMs * 2 ** (look - 1), this.schedule.maxMs, left);
            await this.context.sleep(wait, this.context.signal);
            value = await read();
        }
        return value;
    }

    /** The resource with the natural key; undefined when there is none, an error when there are several. */
    async lookUp(deadline: Deadline): Promise<Found | undefined> {
        const { spec } = this;
        if (spec.keyIsId) return this.get(spec.key, deadline);
        const answer = await this.send({ method: "GET", path: spec.listPath, repeatable: true }, deadline);
        const items = spec.listItems(answer.body);
        if (!items)
            throw new TaskApiContractError(
                `${spec.label}: the list at ${spec.listPath} has no list of items where lookup.items says; set lookup.items to where they are`,
            );
        const matches = items.filter((record) => spec.keyOf(record) === spec.key);
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
        // The list may be a summary: the item's own record is the truth.
        return (await this.get(id, deadline)) ?? undefined;
    }

    /**
     * Sends a write and says what it answered: done, or an operation to follow. An update or delete
     * refused as a conflict (409: another operation runs on the resource, ARM's
     * AnotherOperationInProgress, Google's ABORTED; perhaps one of ours an interrupted `up` left) did
     * nothing: it is sent again once the resource is free, after doubling waits, within the deadline,
     * built afresh (`call()`), so with a new idempotency key: an API may replay a refusal for a key.
     */
    async submit(kind: WriteKind, call: () => HttpCall, deadline: Deadline): Promise<Submitted> {
        for (let attempt = 0; ; attempt++) {
            try {
                const sent = call();
                const answer = await this.send(sent, deadline);
                return this.spec.dialect.submitted(kind, answer, this.context.clock(), sent);
            } catch (error) {
                const busy = kind !== "create" && this.meaning(error) === "conflict";
                const left = deadline.at - this.context.clock();
                if (!busy || left <= 0) throw error;
                if (attempt === 0)
                    this.context.report(`${this.spec.label}: another operation runs on it; waiting for it to end`);
                const wait = nextWait({ attempt, schedule: this.schedule, random: this.context.random });
                await this.context.sleep(Math.min(wait, left), this.context.signal);
            }
        }
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
        const { view } = await followOperation({
            client: this.client,
            dialect: this.spec.dialect,
            handle,
            first,
            what,
            startedAt,
            deadline: deadline.at,
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
        const found = this.spec.idOf(record) ?? id;
        if (record === undefined || found === undefined)
            throw new TaskApiContractError(
                `${this.spec.label}: the API answered ${call.method} ${call.path} without a record${record === undefined ? "" : " with an id"}`,
            );
        return { id: found, record };
    }
}
