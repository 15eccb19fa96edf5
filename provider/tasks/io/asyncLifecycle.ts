// What each operation of an AsyncResource does at its API, in any dialect: the create (the natural key
// looked up first, the create-token chain, the operation followed to its end, the resource read back),
// the read, the update (a pending create resumed, untaint, the body sent), and the delete confirmed by
// the API no longer having the resource. Every outcome that may have made something is recorded.

import { randomUUID } from "node:crypto";
import { parseDuration } from "../../shared/duration";
import { messageOf } from "../../shared/text";
import type { AsyncResourceInputs, AsyncResourceOutputs, PendingOperation } from "../asyncResourceSchema";
import type { PollSchedule } from "../client/pollSchedule";
import { CreateOutcomeUnknownError } from "../errors/createOutcomeUnknownError";
import { CreateTokenSpentError } from "../errors/createTokenSpentError";
import { DeleteUnconfirmedError } from "../errors/deleteUnconfirmedError";
import { OperationFailedError } from "../errors/operationFailedError";
import { OperationWaitError } from "../errors/operationWaitError";
import { ResourceExistsError } from "../errors/resourceExistsError";
import { ResourceMissingError } from "../errors/resourceMissingError";
import { TaskApiContractError } from "../errors/taskApiContractError";
import {
    bodyAsRecorded,
    bodyChanged,
    differs,
    isPendingCreate,
    keptOutputs,
    outputsOf,
    partialState,
    type RawAsyncInputs,
    resumedInputs,
} from "../logic/asyncState";
import { MAX_CREATE_GENERATIONS, spentKeyBackoffMs } from "../logic/createKeys";
import { outcomeUnknown } from "../logic/datastoreState";
import type { OperationView, WriteKind } from "../protocol/dialects/dialect";
import type { AsyncApi, Deadline, Found } from "./asyncApi";

/** How long create, update and delete may take by default: long-running operations take minutes. */
const DEFAULT_TIMEOUT_MS = 20 * 60_000;
/** How long a read may take by default. */
const DEFAULT_READ_TIMEOUT_MS = 5 * 60_000;
/** Builds the API of a resource from its inputs (one client per API per process). */
export type ApiFor = (inputs: AsyncResourceInputs) => AsyncApi;

/** One create attempt's end: the outputs, or why the next key (or a resubmit) is tried. */
type Attempt = AsyncResourceOutputs | "spent" | "resubmit" | "in-progress";

/** The AsyncResource operations. */
export class AsyncLifecycle {
    constructor(
        private readonly apiFor: ApiFor,
        private readonly clock: () => number,
        private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
        private readonly signal: AbortSignal,
        private readonly report: (message: string) => void,
        /** The backoff between create keys that proved spent, and before a resubmit. */
        private readonly schedule: PollSchedule,
    ) {}

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
                ? await this.takeOver(api, inputs, found, deadline)
                : await this.createOrFollow(api, inputs, deadline, found, false);
        return { id: api.spec.key, outs };
    }

    /**
     * Creates the resource, or finds the one an earlier create of this resource made. With a create token
     * the dialect replays, the keys form a chain (token, token~1, ...), one per create of the resource
     * (see createKeys.ts): a replayed operation whose resource exists names ours; one whose resource is
     * gone, or that failed without one, spent its key, and the next is tried. `claimed`: the state says
     * an earlier create of this resource may have made `found` (a pending create resumed).
     */
    private async createOrFollow(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        deadline: Deadline,
        found: Found | undefined,
        claimed: boolean,
    ): Promise<AsyncResourceOutputs> {
        const keyed = inputs.createToken !== undefined && api.spec.dialect.tokenReplaysCreate;
        if (found && !keyed) {
            if (claimed) return outputsOf(inputs, { resourceId: found.id, resource: found.record, tainted: false });
            return this.takeOver(api, inputs, found, deadline);
        }
        for (let generation = 0, waits = 0; generation < MAX_CREATE_GENERATIONS; generation++) {
            // Without a createToken, a key of this request alone: its retries after a lost answer replay
            // (and an API that requires the key gets one); a later `up` finds it by its natural key.
            const token =
                inputs.createToken !== undefined
                    ? api.spec.dialect.createKey(inputs.createToken, generation, api.spec.key)
                    : api.spec.dialect.tokenReplaysCreate
                      ? randomUUID()
                      : undefined;
            const attempt = await this.createOnce(api, inputs, deadline, token, found, keyed);
            if (attempt !== "spent" && attempt !== "resubmit" && attempt !== "in-progress") return attempt;
            const left = deadline.at - this.clock();
            if (left <= 0) throw new CreateTokenSpentError(api.spec.label, generation + 1, deadline.setting);
            if (attempt === "in-progress") {
                // The first request with this key is still being handled (an interrupted up's): the same key
                // again, once it has ended, replays it.
                await this.sleep(Math.min(spentKeyBackoffMs(Math.min(waits++, 16), this.schedule), left), this.signal);
                generation--;
                continue;
            }
            if (attempt === "spent" && generation === 0)
                this.report(
                    `${api.spec.label}: createToken ${inputs.createToken} was spent earlier; trying its next key`,
                );
            await this.sleep(Math.min(spentKeyBackoffMs(generation, this.schedule), left), this.signal);
        }
        throw new CreateTokenSpentError(api.spec.label, MAX_CREATE_GENERATIONS);
    }

    /** One create request and its operation. Every failure after the request may have made something: partial state. */
    private async createOnce(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        deadline: Deadline,
        token: string | undefined,
        found: Found | undefined,
        keyed: boolean,
    ): Promise<Attempt> {
        const { spec } = api;
        const what = `the create of ${spec.label}`;
        const startedAt = this.clock();
        let view: OperationView;
        let handle: PendingOperation | undefined;
        let endedAtFirstLook: boolean | undefined;
        try {
            const submitted = await api.submit(
                "create",
                () => spec.dialect.create(spec.target, inputs.body, token),
                deadline,
            );
            if (submitted.kind === "done") {
                view = submitted.view;
                endedAtFirstLook = true;
            } else {
                handle = { write: "create", ...submitted.handle };
                view = await api.follow(submitted.handle, submitted.view, what, startedAt, deadline, (seen) => {
                    endedAtFirstLook ??= seen.state !== "pending";
                });
            }
        } catch (error) {
            if (error instanceof OperationWaitError) {
                const interrupted = error.stop === "interrupted";
                const reason = interrupted
                    ? `${error.message}; the next \`pulumi up\` follows it to its end`
                    : `${error.message}; the next \`pulumi up\` replaces it (set \`untaint: true\` to keep it)`;
                const known = {
                    operation: handle,
                    tainted: !interrupted,
                    ...(interrupted ? {} : { taintReason: reason }),
                };
                throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, known), reason);
            }
            return this.afterFailedSubmit(api, inputs, deadline, error, found, keyed);
        }
        if (view.resubmit) return "resubmit";
        // Over at the first answer (Google answers a repeated requestId with the done operation itself)
        // or at the first look: with a key the API replays, that is an earlier create of ours.
        const replayed = keyed && endedAtFirstLook === true;
        if (view.state === "pending") {
            // Accepted, with nothing to follow it by: the next up finds it by its natural key.
            const reason = `the API accepted the create (${view.status}) but gave no way to follow it; the next \`pulumi up\` looks it up`;
            throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, { tainted: false }), reason);
        }
        let made: Found | "gone" | undefined;
        try {
            made = await this.madeBy(api, view, deadline, view.state === "succeeded" && !replayed);
        } catch (error) {
            const next = view.state === "succeeded" ? "reads it again" : "replaces it (set `untaint: true` to keep it)";
            const reason = `${what} ended ${view.state}, but reading what it made failed: ${messageOf(error)}; the next \`pulumi up\` ${next}`;
            const failed = view.state !== "succeeded";
            const known = { operation: handle, tainted: failed, ...(failed ? { taintReason: reason } : {}) };
            throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, known), reason);
        }
        const resource = made === "gone" ? undefined : made;
        // A replayed create whose resource is gone (deleted since) or that made none spent its key.
        if (replayed && !resource) return "spent";
        if (view.state === "succeeded") {
            if (resource)
                return outputsOf(inputs, { resourceId: resource.id, resource: resource.record, tainted: false });
            const reason = `${what} succeeded, but the API has no such resource; the next \`pulumi up\` creates it again`;
            throw partialState(
                inputs,
                spec.key,
                spec.label,
                outputsOf(inputs, { tainted: true, taintReason: reason }),
                reason,
            );
        }
        const reason = new OperationFailedError(
            what,
            view,
            "the next `pulumi up` replaces it (set `untaint: true` to keep it)",
        ).message;
        const known = { resourceId: resource?.id, resource: resource?.record, tainted: true, taintReason: reason };
        throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, known), reason);
    }

    /** What a refused or unanswered create request calls for. */
    private async afterFailedSubmit(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        deadline: Deadline,
        error: unknown,
        found: Found | undefined,
        keyed: boolean,
    ): Promise<Attempt> {
        const { spec } = api;
        if (outcomeUnknown(error, this.signal.aborted)) {
            // With the natural key taken before the request, the request made no other.
            if (found) throw new CreateOutcomeUnknownError(spec.label, found.id, messageOf(error));
            const how = inputs.createToken ? "replaying its createToken" : "its natural key";
            const reason = `the create request's outcome is unknown (${messageOf(error)}). The resource may exist: the next \`pulumi up\` finds it by ${how} and records it, or creates it`;
            throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, { tainted: false }), reason);
        }
        const meaning = api.meaning(error);
        if (meaning === "token-in-progress" && keyed) return "in-progress";
        if (meaning === "conflict") {
            const existing = found ?? (await api.lookUp(deadline));
            // Nothing has the natural key: with a key, a 409 is the IETF draft's "a request with this key
            // is being processed" (the create an interrupted up left), not a name taken.
            if (!existing && keyed) return "in-progress";
            if (!existing)
                throw new TaskApiContractError(
                    `${spec.label}: the API refused the create as a conflict, but has no resource with this natural key; retry once it does`,
                );
            return this.takeOver(api, inputs, existing, deadline);
        }
        if (meaning === "token-reused" && keyed && !found) return "spent";
        throw error;
    }

    /** What a create's operation made: the resource, "gone" when the API no longer has it, or undefined when unnamed. */
    private async madeBy(
        api: AsyncApi,
        view: OperationView,
        deadline: Deadline,
        lookUpUnnamed: boolean,
    ): Promise<Found | "gone" | undefined> {
        const { spec } = api;
        const named = spec.keyIsId
            ? spec.key
            : (view.resourceId ?? (view.record === undefined ? undefined : spec.idOf(view.record)));
        // The operation ended: a read that finds nothing may only lag behind it, so it looks again first.
        const exists = (found: Found | undefined) => found !== undefined;
        if (named !== undefined) return (await api.settled(() => api.get(named, deadline), exists, deadline)) ?? "gone";
        const location = view.resourceLocation;
        if (location) return (await api.settled(() => api.getAt(location, deadline), exists, deadline)) ?? "gone";
        return lookUpUnnamed ? await api.settled(() => api.lookUp(deadline), exists, deadline) : undefined;
    }

    /** A resource with the natural key that this resource did not make: adopt it (sending the program's body), or refuse. */
    private async takeOver(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        found: Found,
        deadline: Deadline,
    ): Promise<AsyncResourceOutputs> {
        if (!inputs.adopt) throw new ResourceExistsError(api.spec.label, found.id, inputs.createToken !== undefined);
        const current = await this.write(api, inputs, found, deadline, undefined);
        return outputsOf(inputs, { resourceId: current.id, resource: current.record, tainted: false });
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
            const outs = await this.createOrFollow(this.apiFor(resumed), resumed, deadline, found, true);
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
                return { outs: await this.createOrFollow(api, news, deadline, undefined, false) };
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
        const current = await this.write(api, news, { id, record: before.resource }, deadline, before);
        return outputsOf(news, { resourceId: current.id, resource: current.record, tainted: false });
    }

    /**
     * Sends the body as an update of `found` and follows it to its end. An operation whose end was not
     * seen is recorded with the state before it (`before`, or nothing for an adoption), so the next up
     * follows it and sends the body again; one that failed leaves the state on record as it was.
     */
    private async write(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        found: Found,
        deadline: Deadline,
        before: AsyncResourceOutputs | undefined,
    ): Promise<Found> {
        const { spec } = api;
        const what = `the update of ${spec.label}`;
        const startedAt = this.clock();
        const submitted = await api.submit(
            "update",
            () => spec.dialect.update(spec.target, found.id, inputs.body, randomUUID()),
            deadline,
        );
        if (submitted.kind === "operation") {
            let view: OperationView;
            try {
                view = await api.follow(submitted.handle, submitted.view, what, startedAt, deadline);
            } catch (error) {
                if (!(error instanceof OperationWaitError) || !before) throw error;
                const operation = { write: "update" as const, ...submitted.handle };
                const kept = keptOutputs(before, inputs, operation);
                throw partialState(
                    inputs,
                    spec.key,
                    spec.label,
                    kept,
                    `${error.message}; the next \`pulumi up\` follows it, then sends the body again`,
                );
            }
            if (view.state !== "succeeded")
                throw new OperationFailedError(
                    what,
                    view,
                    "the state on record is as before it; fix the cause and run `pulumi up` again",
                );
        } else if (submitted.view.state === "failed" || submitted.view.state === "canceled") {
            throw new OperationFailedError(what, submitted.view, "the state on record is as before it");
        }
        // A read that lags still shows the resource as before the update: look again until it shows the body.
        const shows = (read: Found | undefined) =>
            read !== undefined && !differs(bodyAsRecorded(inputs.body, read.record), inputs.body);
        return (await api.settled(() => api.get(found.id, deadline), shows, deadline)) ?? found;
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
