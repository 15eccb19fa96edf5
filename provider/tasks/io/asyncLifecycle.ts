// What each operation of an AsyncResource does at its API, in any dialect: the create (the natural key
// looked up first, the create-token chain, the operation followed to its end, the resource read back),
// the read, the update (a pending create resumed, untaint, the body sent), and the delete confirmed by
// the API no longer having the resource. Every outcome that may have made something is recorded.

import type { EngineCall } from "../../shared/engineCalls";
import { messageOf } from "../../shared/text";
import type { AsyncResourceInputs, AsyncResourceOutputs, PendingOperation } from "../asyncResourceSchema";
import type { PollSchedule } from "../client/pollSchedule";
import { DeleteUnconfirmedError } from "../errors/deleteUnconfirmedError";
import { OperationFailedError } from "../errors/operationFailedError";
import { OperationWaitError } from "../errors/operationWaitError";
import { PartialStateError } from "../errors/partialStateError";
import { ResourceMissingError } from "../errors/resourceMissingError";
import { type AsyncSpec, atRest, brokenReason, recordedBody } from "../logic/asyncSpec";
import {
    bodyChanged,
    heldByAnother,
    isPendingCreate,
    keptOutputs,
    outputsOf,
    partialState,
    type RawAsyncInputs,
    resumedInputs,
} from "../logic/asyncState";
import { type Deadline, deadlineOf } from "../logic/deadline";
import { putRetriesProvisioning, whatTheNextUpDoes } from "../logic/operationErrors";
import { outcomeUnknown } from "../logic/outcomeUnknown";
import type { WriteKind } from "../protocol/dialects/dialect";
import type { AsyncApi, Found } from "./asyncApi";
import { AsyncCreates, rejoins } from "./asyncCreates";
import { AsyncFinds } from "./asyncFinds";
import { AsyncWrites } from "./asyncWrites";
import {
    createScopeOf,
    deleteRecord,
    deleteScopeOf,
    lookedScopeOf,
    NO_SENT_CREATES,
    type SentCreates,
} from "./sentCreates";

/** Builds the API of a resource from its inputs (one client per API per process). */
export type ApiFor = (inputs: AsyncResourceInputs) => AsyncApi;

/** A create not resolved yet: its outcome unknown (not tainted), or its operation recorded and not seen to its end. */
function unresolvedCreate(props: AsyncResourceOutputs): boolean {
    return props.resourceId === undefined && (props.tainted === false || props.operation?.write === "create");
}

/**
 * `body` as the API's record of the resource shows it; `body` itself without a record, or with one in
 * the middle of an operation (a lagging one, or one whose operation may still fail and be undone), which
 * does not say what the resource is. [L]
 */
function shownBody(spec: AsyncSpec, body: Record<string, unknown>, record: unknown): Record<string, unknown> {
    return record !== undefined && atRest(spec, record) ? recordedBody(spec, body, record) : body;
}

/** What comes of a resource beyond repair, as the API has it (`record`): what the next up and untaint do. */
function replacesIt(spec: AsyncSpec, record: unknown, untaint: boolean | undefined): string {
    return untaint ? "remove untaint so the next up replaces it" : whatTheNextUpDoes(spec, { record });
}

/** The AsyncResource operations. */
export class AsyncLifecycle {
    constructor(
        private readonly apiFor: ApiFor,
        private readonly clock: () => number,
        sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
        private readonly signal: AbortSignal,
        private readonly report: (message: string) => void,
        /** The backoff between create keys that proved spent, and before a resubmit. */
        schedule: PollSchedule,
        /** The engine's call the operation runs under: its customTimeouts entry wins over `timeouts`. */
        private readonly engineCall: () => EngineCall | undefined = () => undefined,
        /** Where keyed creates are recorded until their outcome is known (sentCreates.ts). */
        private readonly sent: SentCreates = NO_SENT_CREATES,
    ) {
        this.writes = new AsyncWrites(clock);
        this.finds = new AsyncFinds(clock, sent);
        this.creates = new AsyncCreates(clock, sleep, signal, report, schedule, this.writes, this.finds, sent);
    }

    /** Creates (asyncCreates.ts). */
    private readonly creates: AsyncCreates;
    /** Writes to what exists (asyncWrites.ts). */
    private readonly writes: AsyncWrites;
    /** Reads around what runs at the API (asyncFinds.ts). */
    private readonly finds: AsyncFinds;

    /** Read: the resource as the API has it now; nothing when it is gone. */
    async read(props: AsyncResourceOutputs): Promise<{ id: string; props: AsyncResourceOutputs } | undefined> {
        const api = this.apiFor(props);
        const deadline = this.deadline("read", props);
        const byId = props.resourceId !== undefined && !api.spec.rules?.readsByKey;
        const readIt = () => (byId ? api.get(props.resourceId as string, deadline) : api.lookUp(deadline));
        // A pending create's resource may show in reads only a while after its create ended (an eventually
        // consistent list, a lagging replica): it is looked for again before it is taken as not made, or
        // an `--import-pending-creates` would leave it to no one. [6625]
        const readPending = () => api.settled(readIt, (record) => record !== undefined, deadline);
        const found = await this.finds.present(
            api,
            props.resourceId === undefined ? readPending : readIt,
            deadline,
            "the read",
        );
        // A pending create's resource found in the middle of its creation is recorded once the create is
        // resolved, which the next up does by following it to its end: it may yet fail. [32411]
        if (found && props.resourceId === undefined && !atRest(api.spec, found.record))
            return { id: api.spec.key, props };
        // What held the natural key before a pending create was sent is someone else's until that create
        // is seen to make it, which only the next up's following of it tells. [O]
        if (!found || heldByAnother(props, found)) {
            // A create not resolved yet (its outcome unknown, or its operation not seen to its end) stays on
            // record until an `up` resolves it: dropped, it could still make the resource (a create in
            // progress is not listed by every API), which nothing would then know of. [C, G]
            if (unresolvedCreate(props)) return { id: api.spec.key, props };
            return undefined;
        }
        // A resource beyond repair never heals: it comes back tainted (keeping the reason of a taint on
        // record), so the next up replaces it, as a create that saw it so would have recorded. Else a
        // pending create whose operation failed since would be recorded healthy, and never replaced.
        const broken = props.tainted === true ? undefined : brokenReason(api.spec, found.record);
        const known = {
            resourceId: found.id,
            resource: found.record,
            operation: props.operation,
            // Props that never went through create (a `get`, an imported pending create) have no `tainted`. [K]
            tainted: props.tainted === true || broken !== undefined,
            taintReason:
                broken === undefined
                    ? props.taintReason
                    : `${broken}; ${replacesIt(api.spec, found.record, props.untaint)}`,
        };
        // A change made outside Pulumi shows in `body`, so the next up's diff sends the program's back. [L]
        const body = shownBody(api.spec, props.body, found.record);
        const { keyHeldBy: _claimed, ...ours } = props;
        return { id: api.spec.key, props: outputsOf({ ...ours, body }, known) };
    }

    /** Create: the outputs recorded under the natural key. */
    async create(inputs: RawAsyncInputs): Promise<{ id: string; outs: AsyncResourceOutputs }> {
        const api = this.apiFor(inputs);
        const deadline = this.deadline("create", inputs);
        // A deletion of the natural key under way ends before anything is sent: its resource is not this one.
        const found = await this.finds.present(api, () => api.lookUp(deadline), deadline, "the create");
        const keyed = inputs.createToken !== undefined && api.spec.dialect.tokenReplaysCreate;
        const scope = keyed && !inputs.adopt ? createScopeOf(api, inputs) : undefined;
        const unended = scope && (await this.sent.unended(scope));
        if (unended) {
            // A create of this resource was sent by a process that never saw it end (killed): the same
            // request again follows it (or makes it now) before the program's body is written, so it never
            // ends later as a second resource. What held the key when it was sent is not what it made. [9877]
            this.report(
                `${api.spec.label}: following an earlier create (key ${unended.key}) whose process did not see it end`,
            );
            const resumed = { ...inputs, body: unended.body };
            const claimed = unended.heldBy === undefined || found?.id !== unended.heldBy;
            const outs = await this.creates.createOrFollow(api, resumed, deadline, found, claimed);
            if (!this.bodyToSend(api, resumed, outs, inputs))
                return { id: api.spec.key, outs: outputsOf(inputs, outs) };
            try {
                return { id: api.spec.key, outs: await this.updated(api, inputs, outs, deadline) };
            } catch (error) {
                if (error instanceof PartialStateError) throw error;
                // What it made is recorded, with the body it was made with: the next up sends the program's.
                const reason = `${messageOf(error)}; it was made with the body of the earlier create, which the next \`pulumi up\` changes`;
                throw partialState(resumed, api.spec.key, api.spec.label, outs, reason);
            }
        }
        // With a resource holding the natural key, a create is sent (to replay the token, which tells
        // whether it is ours) only where the API cannot make a second one with that key (the key names
        // the item: a PUT, Google's id, Cloud Control's identifier); a POST to a collection could make a
        // duplicate. Adopting takes it over in any case. [A]
        const outs =
            found && (!keyed || inputs.adopt || !(api.spec.keyIsId || api.spec.rules?.uniqueKey))
                ? await this.writes.takeOver(api, inputs, found, deadline)
                : await this.creates.createOrFollow(api, inputs, deadline, found, false);
        return { id: api.spec.key, outs };
    }

    /** Update: resume a create that did not finish, untaint, or send the changed body. */
    async update(olds: AsyncResourceOutputs, news: RawAsyncInputs): Promise<{ outs: AsyncResourceOutputs }> {
        const api = this.apiFor(news);
        const deadline = this.deadline("update", news);
        const keep = (reason: string, operation?: PendingOperation) =>
            partialState(news, api.spec.key, api.spec.label, keptOutputs(olds, news, operation), reason);
        if (isPendingCreate(olds)) {
            // Let its operation end, then find what it made (by the token it was sent with), or create it now.
            const resumed = resumedInputs(olds, news);
            const { found, made } = await this.keeping(keep, () =>
                this.finds.afterOperationOnRecord(api, olds, deadline),
            );
            const outs = await this.creates.createOrFollow(
                this.apiFor(resumed),
                resumed,
                deadline,
                found,
                !heldByAnother(olds, found, made),
                olds.createKey,
            );
            if (!this.bodyToSend(api, resumed, outs, news)) return { outs: outputsOf(news, outs) };
            return { outs: await this.updated(api, news, outs, deadline) };
        }
        let current: Found | undefined;
        if ((olds.tainted && news.untaint) || olds.resourceId === undefined) {
            const looked = await this.keeping(keep, () => this.finds.afterOperationOnRecord(api, olds, deadline));
            current = looked.found;
            // Untaint keeps what this resource's create made, not what held the key before it. [O]
            if (current && heldByAnother(olds, current, looked.made))
                return { outs: await this.writes.takeOver(api, news, current, deadline) };
            if (!current) {
                this.report(`${api.spec.label}: not found at the API; creating it again`);
                return { outs: await this.creates.createOrFollow(api, news, deadline, undefined, false) };
            }
        } else {
            if (olds.operation)
                await this.keeping(
                    keep,
                    () => this.finds.followQuietly(api, olds.operation as PendingOperation, deadline),
                    olds.operation,
                );
            current = await this.finds.present(
                api,
                () => api.get(olds.resourceId as string, deadline),
                deadline,
                "the update",
            );
            if (!current) throw new ResourceMissingError(api.spec.label, olds.resourceId);
        }
        let broken = brokenReason(api.spec, current.record);
        if (broken && news.untaint && putRetriesProvisioning(api.spec)) {
            // Kept: its body is sent again, a PUT that retries the provisioning (ARM's own remedy).
            current = await this.writes.write(api, news, current, deadline, undefined);
            broken = brokenReason(api.spec, current.record);
        }
        if (broken) {
            const reason = `${broken}; ${replacesIt(api.spec, current.record, news.untaint)}`;
            const known = { resourceId: current.id, resource: current.record, tainted: true, taintReason: reason };
            throw partialState(news, api.spec.key, api.spec.label, outputsOf(news, known), reason);
        }
        // The operation on record has been followed to its end, and the resource is not tainted any more. [E]
        const {
            operation: _followed,
            taintReason: _untainted,
            createKey: _replayed,
            keyHeldBy: _resolved,
            ...settled
        } = olds;
        const base = outputsOf(settled as AsyncResourceOutputs, {
            resourceId: current.id,
            resource: current.record,
            tainted: false,
        });
        if (!bodyChanged(olds, news)) return { outs: outputsOf(news, base) };
        return { outs: await this.updated(api, news, base, deadline) };
    }

    /**
     * Whether the program's body must be sent to what a resumed create made: the API's record of it
     * differs from the program's body, which changed since the create was sent, or the resource did
     * (changed outside Pulumi while the create was pending). [6529]
     */
    private bodyToSend(
        api: AsyncApi,
        resumed: RawAsyncInputs,
        made: AsyncResourceOutputs,
        news: RawAsyncInputs,
    ): boolean {
        return bodyChanged({ body: shownBody(api.spec, resumed.body, made.resource) }, news);
    }

    /** Sends the program's body to the resource on record and answers the outputs after it. */
    private async updated(
        api: AsyncApi,
        news: RawAsyncInputs,
        before: AsyncResourceOutputs,
        deadline: Deadline,
    ): Promise<AsyncResourceOutputs> {
        const id = before.resourceId as string;
        const current = await this.writes.write(api, news, { id, record: before.resource }, deadline, before);
        return outputsOf(news, { resourceId: current.id, resource: current.record, tainted: false });
    }

    /** Delete: after any operation of ours still running on it; gone already is success. */
    async delete(props: AsyncResourceOutputs): Promise<void> {
        const api = this.apiFor(props);
        const { spec } = api;
        const deadline = this.deadline("delete", props);
        const began = this.clock();
        const ended = props.operation ? await this.finds.followQuietly(api, props.operation, deadline) : undefined;
        let id = props.resourceId;
        // A create of unknown outcome with nothing to follow, whose key the API replays: the replay follows
        // that create to its end (or makes it now), so it is deleted instead of appearing later [G]; so does
        // one that rejoins its operation, whose resource may not show in reads before that ends. [10407]
        const unknown = isPendingCreate(props) && !props.operation;
        const keyed = props.createToken !== undefined || props.createKey !== undefined;
        const replays = unknown && keyed && spec.dialect.tokenReplaysCreate;
        if (id === undefined) {
            // Else what a pending create made may show in reads only a while after its create ended (one seen
            // to succeed, or one whose read-back was cut short): reads that lag behind it are read again. [I, 7867]
            const made = props.operation?.write === "create" && ended?.state === "succeeded";
            const lookedFrom = this.clock();
            const found = replays
                ? await api.lookUp(deadline)
                : await api.settled(
                      () => api.lookUp(deadline),
                      (record) => record !== undefined,
                      deadline,
                  );
            // The deadline cut those reads short: what the create made may yet show, so the delete is not done
            // [7054]; the next reads again, counting from the first look, or a short timeout never ends. [8535]
            if (made && !found && props.operation) {
                const looked = lookedScopeOf(api, props.operation.ref);
                const since = Number((await this.sent.unended(looked))?.key) || lookedFrom;
                if (this.clock() - since < api.settleSpanMs) {
                    await this.sent.sending(looked, { key: String(since), body: {} });
                    throw new OperationWaitError("deadline", props.operation, ended, {
                        what: `what the create of ${spec.label} made to show in the API's reads`,
                        timeoutMs: this.clock() - began,
                        setting: deadline.setting,
                    });
                }
                await this.sent.ended(looked);
            }
            if (found && heldByAnother(props, found, made)) {
                this.report(
                    `${spec.label}: left ${found.id} alone: it held the natural key before this resource's create was sent, and that create was not seen to make it`,
                );
                return;
            }
            id = found?.id;
        }
        if (id === undefined && (replays || (unknown && rejoins(api, props.body)))) {
            const resumed = resumedInputs(props, props as unknown as RawAsyncInputs);
            id = (await this.creates.followEarlier(api, resumed, deadline, props.createKey))?.resourceId;
        }
        if (id === undefined) return;
        const what = `the delete of ${spec.label}`;
        const startedAt = this.clock();
        // Recorded from before it is sent until its end is known: a process stopped before its answer, or
        // while its operation runs, leaves the next read something to follow or to read past, where a read
        // alone may show the resource as it was (a lagging replica).
        const scope = deleteScopeOf(api, id);
        await this.sent.sending(scope, deleteRecord(undefined));
        let submitted: Awaited<ReturnType<AsyncApi["submit"]>>;
        try {
            submitted = await api.submit("delete", () => spec.dialect.delete(spec.target, id), deadline);
        } catch (error) {
            // Refused, it did nothing; an answer never read may hide one that did.
            if (!outcomeUnknown(error, this.signal.aborted)) await this.sent.ended(scope);
            if (api.meaning(error) === "not-found") return;
            throw error;
        }
        if (submitted.kind === "operation") await this.sent.sending(scope, deleteRecord(submitted.handle));
        const view =
            submitted.kind === "operation"
                ? await api.follow(submitted.handle, submitted.view, what, startedAt, deadline)
                : submitted.view;
        // A delete that ended failed because there was nothing to delete (Cloud Control's NotFound) did its job. [B]
        if ((view.state === "failed" || view.state === "canceled") && (await api.get(id, deadline)) !== undefined) {
            await this.sent.ended(scope);
            throw new OperationFailedError(what, view, "it stays in the stack's state; run `pulumi destroy` again");
        }
        // The API's word is not enough: only a resource the API no longer has is forgotten. Its record stays
        // till then: a process stopped sooner leaves the next read to read past one that lags. [8484]
        const left = await api.settled(
            () => api.get(id, deadline),
            (found) => found === undefined,
            deadline,
        );
        await this.sent.ended(scope);
        if (!left) return;
        throw new DeleteUnconfirmedError(
            spec.label,
            id,
            submitted.kind === "operation" ? submitted.handle.ref : undefined,
        );
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

    /** When the operation must end (deadlineOf), with the engine's customTimeouts entry for this call. */
    private deadline(operation: WriteKind | "read", settings: AsyncResourceInputs): Deadline {
        return deadlineOf(operation, settings, this.clock(), this.engineCall()?.timeoutMs);
    }
}
