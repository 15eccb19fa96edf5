// What each operation of an AsyncResource does at its API, in any dialect: the create (the natural key
// looked up first, the create-token chain, the operation followed to its end, the resource read back),
// the read, the update (a pending create resumed, untaint, the body sent), and the delete confirmed by
// the API no longer having the resource. Every outcome that may have made something is recorded.

import { parseDuration } from "../../shared/duration";
import { messageOf } from "../../shared/text";
import type { AsyncResourceInputs, AsyncResourceOutputs, PendingOperation } from "../asyncResourceSchema";
import type { PollSchedule } from "../client/pollSchedule";
import { DeleteUnconfirmedError } from "../errors/deleteUnconfirmedError";
import { OperationFailedError } from "../errors/operationFailedError";
import { ResourceMissingError } from "../errors/resourceMissingError";
import {
    bodyAsRecorded,
    bodyChanged,
    isPendingCreate,
    keptOutputs,
    outputsOf,
    partialState,
    type RawAsyncInputs,
    resumedInputs,
} from "../logic/asyncState";
import type { WriteKind } from "../protocol/dialects/dialect";
import type { AsyncApi, Deadline, Found } from "./asyncApi";
import { AsyncCreates } from "./asyncCreates";

/** How long create, update and delete may take by default: long-running operations take minutes. */
const DEFAULT_TIMEOUT_MS = 20 * 60_000;
/** How long a read may take by default. */
const DEFAULT_READ_TIMEOUT_MS = 5 * 60_000;
/** Builds the API of a resource from its inputs (one client per API per process). */
export type ApiFor = (inputs: AsyncResourceInputs) => AsyncApi;

/** The AsyncResource operations. */
export class AsyncLifecycle {
    constructor(
        private readonly apiFor: ApiFor,
        private readonly clock: () => number,
        sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
        signal: AbortSignal,
        private readonly report: (message: string) => void,
        /** The backoff between create keys that proved spent, and before a resubmit. */
        schedule: PollSchedule,
    ) {
        this.creates = new AsyncCreates(clock, sleep, signal, report, schedule);
    }

    /** Creates, and writes to what exists (asyncCreates.ts). */
    private readonly creates: AsyncCreates;

    /** Read: the resource as the API has it now; nothing when it is gone. */
    async read(props: AsyncResourceOutputs): Promise<{ id: string; props: AsyncResourceOutputs } | undefined> {
        const api = this.apiFor(props);
        const deadline = this.deadline("read", props.timeouts?.read, DEFAULT_READ_TIMEOUT_MS);
        const found = props.resourceId ? await api.get(props.resourceId, deadline) : await api.lookUp(deadline);
        if (!found) {
            // A create whose end was not seen stays on record until an `up` resolves it: dropped, its
            // operation could still make the resource, which nothing would then know of.
            if (isPendingCreate(props) && props.operation) return { id: api.spec.key, props };
            return undefined;
        }
        const known = {
            resourceId: found.id,
            resource: found.record,
            operation: props.operation,
            tainted: props.tainted,
            taintReason: props.taintReason,
        };
        // A change made outside Pulumi shows in `body`, so the next up's diff sends the program's back.
        const body = bodyAsRecorded(props.body, found.record);
        return { id: api.spec.key, props: outputsOf({ ...props, body }, known) };
    }

    /** Create: the outputs recorded under the natural key. */
    async create(inputs: RawAsyncInputs): Promise<{ id: string; outs: AsyncResourceOutputs }> {
        const api = this.apiFor(inputs);
        const deadline = this.deadline("create", inputs.timeouts?.create);
        const found = await api.lookUp(deadline);
        const keyed = inputs.createToken !== undefined && api.spec.dialect.tokenReplaysCreate;
        const outs =
            found && !keyed
                ? await this.creates.takeOver(api, inputs, found, deadline)
                : await this.creates.createOrFollow(api, inputs, deadline, found, false);
        return { id: api.spec.key, outs };
    }

    /** Update: resume a create that did not finish, untaint, or send the changed body. */
    async update(olds: AsyncResourceOutputs, news: RawAsyncInputs): Promise<{ outs: AsyncResourceOutputs }> {
        const api = this.apiFor(news);
        const deadline = this.deadline("update", news.timeouts?.update);
        const keep = (reason: string, operation?: PendingOperation) =>
            partialState(news, api.spec.key, api.spec.label, keptOutputs(olds, news, operation), reason);
        if (isPendingCreate(olds)) {
            // Let its operation end, then find what it made (by the token it was sent with), or create it now.
            const resumed = resumedInputs(olds, news);
            const found = await this.keeping(keep, async () => {
                if (olds.operation) await this.followQuietly(api, olds.operation, deadline);
                return api.lookUp(deadline);
            });
            const outs = await this.creates.createOrFollow(this.apiFor(resumed), resumed, deadline, found, true);
            if (!bodyChanged(resumed, news)) return { outs: outputsOf(news, outs) };
            return { outs: await this.updated(api, news, outs, deadline) };
        }
        let current: Found | undefined;
        if ((olds.tainted && news.untaint) || olds.resourceId === undefined) {
            current = await this.keeping(keep, async () => {
                if (olds.operation) await this.followQuietly(api, olds.operation, deadline);
                return api.lookUp(deadline);
            });
            if (!current) {
                this.report(`${api.spec.label}: not found at the API; creating it again`);
                return { outs: await this.creates.createOrFollow(api, news, deadline, undefined, false) };
            }
        } else {
            if (olds.operation)
                await this.keeping(
                    keep,
                    () => this.followQuietly(api, olds.operation as PendingOperation, deadline),
                    olds.operation,
                );
            current = await api.get(olds.resourceId, deadline);
            if (!current) throw new ResourceMissingError(api.spec.label, olds.resourceId);
        }
        const base = outputsOf(olds, { resourceId: current.id, resource: current.record, tainted: false });
        if (!bodyChanged(olds, news)) return { outs: outputsOf(news, base) };
        return { outs: await this.updated(api, news, base, deadline) };
    }

    /** Sends the program's body to the resource on record and answers the outputs after it. */
    private async updated(
        api: AsyncApi,
        news: RawAsyncInputs,
        before: AsyncResourceOutputs,
        deadline: Deadline,
    ): Promise<AsyncResourceOutputs> {
        const id = before.resourceId as string;
        const current = await this.creates.write(api, news, { id, record: before.resource }, deadline, before);
        return outputsOf(news, { resourceId: current.id, resource: current.record, tainted: false });
    }

    /** Delete: after any operation of ours still running on it; gone already is success. */
    async delete(props: AsyncResourceOutputs): Promise<void> {
        const api = this.apiFor(props);
        const { spec } = api;
        const deadline = this.deadline("delete", props.timeouts?.delete);
        if (props.operation) await this.followQuietly(api, props.operation, deadline);
        const id = props.resourceId ?? (await api.lookUp(deadline))?.id;
        if (id === undefined) return;
        const what = `the delete of ${spec.label}`;
        const startedAt = this.clock();
        let submitted: Awaited<ReturnType<AsyncApi["submit"]>>;
        try {
            submitted = await api.submit("delete", () => spec.dialect.delete(spec.target, id), deadline);
        } catch (error) {
            if (api.meaning(error) === "not-found") return;
            throw error;
        }
        const view =
            submitted.kind === "operation"
                ? await api.follow(submitted.handle, submitted.view, what, startedAt, deadline)
                : submitted.view;
        if (view.state === "failed" || view.state === "canceled")
            throw new OperationFailedError(what, view, "it stays in the stack's state; run `pulumi destroy` again");
        // The API's word is not enough: only a resource the API no longer has is forgotten.
        if (
            !(await api.settled(
                () => api.get(id, deadline),
                (found) => found === undefined,
                deadline,
            ))
        )
            return;
        throw new DeleteUnconfirmedError(spec.label, id);
    }

    /**
     * Follows an operation recorded in state to its end, whatever the end: failed or canceled only means
     * the next step (look up, create again, send again) decides. Stopping short again is an error.
     */
    private async followQuietly(api: AsyncApi, operation: PendingOperation, deadline: Deadline): Promise<void> {
        const what = `the ${operation.write} of ${api.spec.label} started earlier`;
        await api.follow({ kind: operation.kind, ref: operation.ref }, undefined, what, this.clock(), deadline);
    }

    /** Runs a look-up of an update; when it fails, the state on record stays, as partial state. */
    private async keeping<T>(
        keep: (reason: string, operation?: PendingOperation) => Error,
        work: () => Promise<T>,
        operation?: PendingOperation,
    ): Promise<T> {
        try {
            return await work();
        } catch (error) {
            throw keep(`could not look it up: ${messageOf(error)}`, operation);
        }
    }

    private deadline(
        operation: WriteKind | "read",
        timeout: string | undefined,
        byDefault = DEFAULT_TIMEOUT_MS,
    ): Deadline {
        const parsed = timeout === undefined ? byDefault : parseDuration(timeout);
        return {
            at: this.clock() + (typeof parsed === "number" ? parsed : byDefault),
            setting: `timeouts.${operation}`,
        };
    }
}
