// The create of an AsyncResource: the create-token chain, the operation followed to its end, what it
// made read back (and checked to be this resource), every failure after the request recorded as
// partial state. What exists already is left to AsyncWrites (asyncWrites.ts). Used by AsyncLifecycle
// (asyncLifecycle.ts), which decides when each is called.

import { randomUUID } from "node:crypto";
import { messageOf } from "../../shared/text";
import type { AsyncResourceOutputs, PendingOperation } from "../asyncResourceSchema";
import { doublingWaitMs, type PollSchedule } from "../client/pollSchedule";
import { CreateOutcomeUnknownError } from "../errors/createOutcomeUnknownError";
import { CreateTokenSpentError } from "../errors/createTokenSpentError";
import { OperationFailedError } from "../errors/operationFailedError";
import { OperationWaitError } from "../errors/operationWaitError";
import { PartialStateError } from "../errors/partialStateError";
import { TaskApiContractError } from "../errors/taskApiContractError";
import { TaskApiError } from "../errors/taskApiError";
import { heldPartial, outputsOf, partialState, type RawAsyncInputs, stillOutstanding } from "../logic/asyncState";
import { MAX_CREATE_GENERATIONS } from "../logic/createKeys";
import { whatTheNextUpDoes } from "../logic/operationErrors";
import { outcomeUnknown } from "../logic/outcomeUnknown";
import type { OperationView } from "../protocol/dialects/dialect";
import type { AsyncApi, Deadline, Found } from "./asyncApi";
import type { AsyncFinds } from "./asyncFinds";
import type { AsyncWrites } from "./asyncWrites";
import { createScopeOf, recordedSpent, type SentCreates, spentRecord, spentScopeOf } from "./sentCreates";

/**
 * One create attempt's end: the outputs, or why the next key (or a resubmit) is tried. "spent": the key's
 * operation ended and left nothing; "reused": the API refused the key as sent before with another body;
 * "absent": what the key's operation made reads as gone, but the deadline came before the reads could
 * rule out a lag; "outstanding": the API said a request with this key is still being processed;
 * "in-progress": a conflict that may be that, or a refusal stored for the key.
 */
type Attempt = AsyncResourceOutputs | "spent" | "reused" | "absent" | "resubmit" | "in-progress" | "outstanding";

/**
 * Whether a create sent again joins its operation still running, or answers how it ended: an idempotent
 * PUT to the item (Azure), where no key is replayed.
 */
export function rejoins(api: AsyncApi, body: Record<string, unknown>): boolean {
    const { spec } = api;
    return (
        spec.keyIsId &&
        !spec.dialect.tokenReplaysCreate &&
        spec.dialect.create(spec.target, body, undefined).method === "PUT"
    );
}

/** How many times a key refused as in progress is sent again before the refusal is taken as stored. [F] */
const IN_PROGRESS_LOOKS = 6;

/** Creates, and writes to what exists. */
export class AsyncCreates {
    constructor(
        private readonly clock: () => number,
        private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
        private readonly signal: AbortSignal,
        private readonly report: (message: string) => void,
        private readonly schedule: PollSchedule,
        private readonly writes: AsyncWrites,
        /** What the operation made is read through it (asyncFinds.ts). */
        private readonly finds: AsyncFinds,
        /** Where keyed creates are recorded until their outcome is known (sentCreates.ts). */
        private readonly sent: SentCreates,
    ) {}

    /**
     * Creates the resource, or finds the one an earlier create of this resource made. With a create token
     * the dialect replays, the keys form a chain (token, token~1, ...), one per create of the resource
     * (see createKeys.ts): a replayed operation whose resource exists names ours; one whose resource is
     * gone, or that failed without one, spent its key, and the next is tried. `claimed`: the state says
     * an earlier create of this resource may have made `found` (a pending create resumed); unclaimed,
     * `found` held the key before this create, and a partial state names it as such (keyHeldBy). [O]
     */
    async createOrFollow(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        deadline: Deadline,
        found: Found | undefined,
        claimed: boolean,
        /** The key an earlier create of unknown outcome was sent with (no createToken): replayed first. [G] */
        sentKey?: string,
    ): Promise<AsyncResourceOutputs> {
        const walk = { found, claimed, sentKey, follow: false };
        try {
            return (await this.walkChain(api, inputs, deadline, walk)) as AsyncResourceOutputs; // Only a follow ends with none.
        } catch (error) {
            if (found && !claimed && error instanceof PartialStateError) throw heldPartial(error, found.id);
            throw error;
        }
    }

    /**
     * What an earlier create of unknown outcome made, for its delete: a createToken's chain is walked as a
     * create walks it (a later key may be a later create's); a create without one had one key, which is
     * sent again and nothing more. Undefined when it made none: a delete never makes one. [8344]
     */
    followEarlier(api: AsyncApi, inputs: RawAsyncInputs, deadline: Deadline, sentKey: string | undefined) {
        return this.walkChain(api, inputs, deadline, { found: undefined, claimed: true, sentKey, follow: true });
    }

    /** createOrFollow, but for what a partial state says of `found`; `follow`: followEarlier. */
    private async walkChain(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        deadline: Deadline,
        walk: { found: Found | undefined; claimed: boolean; sentKey: string | undefined; follow: boolean },
    ): Promise<AsyncResourceOutputs | undefined> {
        const { found, claimed, sentKey, follow } = walk;
        const replays = api.spec.dialect.tokenReplaysCreate;
        const keyed = (inputs.createToken !== undefined || sentKey !== undefined) && replays;
        // A resumed create that rejoins its operation is followed to its end, not taken at a lookup's word
        // (the create may yet fail and remove what the lookup shows). [S]
        const resend = claimed && rejoins(api, inputs.body);
        if (found && !keyed && !resend) {
            if (claimed) {
                const broken = this.writes.brokenTaken(api, inputs, found, "found as what an earlier create made");
                if (broken) throw broken;
                return outputsOf(inputs, { resourceId: found.id, resource: found.record, tainted: false });
            }
            return this.writes.takeOver(api, inputs, found, deadline);
        }
        // Keys this machine saw spent are not walked again: a create whose deadline is shorter than the
        // chain (a delete of a pending create) goes on from where the last one stopped.
        const chain = keyed ? spentScopeOf(api, inputs, sentKey) : undefined;
        const spent = chain ? recordedSpent(await this.sent.unended(chain)) : { below: 0 };
        const first = spent.below;
        if (first > 0 && inputs.createToken !== undefined)
            this.report(
                `${api.spec.label}: the first ${first} keys of its createToken were spent earlier; going on from there`,
            );
        // Waits for a key the API says is still being processed, and looks at a key refused as a conflict
        // that may be that: counted apart, since only the second gives the key up. [7505]
        let outstandingWaits = 0;
        let conflictLooks = 0;
        for (let generation = first; generation < MAX_CREATE_GENERATIONS; generation++) {
            // Without a createToken, a key of this request alone: its retries after a lost answer replay
            // (and an API that requires the key gets one); a later `up` finds it by its natural key.
            const again = sentKey !== undefined && generation === 0;
            const token =
                inputs.createToken !== undefined
                    ? api.spec.dialect.createKey(inputs.createToken, generation, api.spec.key)
                    : again
                      ? sentKey
                      : replays
                        ? randomUUID()
                        : undefined;
            const attemptKeyed = inputs.createToken !== undefined ? keyed : again && replays;
            const startedAt = this.clock();
            const absentSince = spent.absent?.generation === generation ? spent.absent.since : undefined;
            const attempt = await this.createOnce(
                api,
                inputs,
                deadline,
                token,
                found,
                attemptKeyed,
                claimed,
                absentSince,
            );
            if (typeof attempt !== "string") return attempt;
            if (chain && attempt === "spent") await this.sent.sending(chain, spentRecord({ below: generation + 1 }));
            if (attempt === "absent") {
                // Its operation ended before this attempt began, so the absence dates from then at the latest.
                const since = absentSince ?? startedAt;
                if (chain)
                    await this.sent.sending(chain, spentRecord({ below: generation, absent: { generation, since } }));
                throw new CreateTokenSpentError(api.spec.label, generation + 1, deadline.setting);
            }
            const left = deadline.at - this.clock();
            if (attempt === "outstanding") {
                // The API says the first request with this key is still being processed: only its end tells
                // what it made, and a next key could make a second resource meanwhile. Waited out within
                // the deadline; past it, the outcome is unknown, and the next up replays the key again.
                if (left <= 0) throw stillOutstanding(inputs, api.spec.key, api.spec.label, token);
                // Still being processed: a refusal stored for the key would not say so.
                conflictLooks = 0;
                const wait = doublingWaitMs(Math.min(outstandingWaits++, 16), this.schedule);
                await this.sleep(Math.min(wait, left), this.signal);
                generation--;
                continue;
            }
            if (left <= 0) throw new CreateTokenSpentError(api.spec.label, generation + 1, deadline.setting);
            if (attempt === "in-progress" && conflictLooks >= IN_PROGRESS_LOOKS) {
                // Refused every time: a refusal stored for the key (the draft replays the first answer,
                // whatever it was), not a request still running. What holds the key now is someone
                // else's, or nothing (the key is spent). [F]
                conflictLooks = 0;
                const holder = await api.lookUp(deadline);
                if (holder) return this.writes.takeOver(api, inputs, holder, deadline);
            } else if (attempt === "in-progress") {
                // The first request with this key is still being handled (an interrupted up's): the same key
                // again, once it has ended, replays it.
                const wait = doublingWaitMs(Math.min(conflictLooks++, 16), this.schedule);
                await this.sleep(Math.min(wait, left), this.signal);
                generation--;
                continue;
            }
            // A key without a token was the one request's: a follow stops there, a create makes a new one.
            if (follow && inputs.createToken === undefined) {
                if (attempt === "spent") return undefined;
                throw new CreateTokenSpentError(api.spec.label, generation + 1, deadline.setting);
            }
            if ((attempt === "spent" || attempt === "reused") && generation === first)
                this.report(
                    `${api.spec.label}: createToken ${inputs.createToken} was spent earlier; trying its next key`,
                );
            await this.sleep(Math.min(doublingWaitMs(generation - first, this.schedule), left), this.signal);
            // A wait that reached the deadline sends no further create: nothing more is made.
            if (deadline.at - this.clock() <= 0)
                throw new CreateTokenSpentError(api.spec.label, generation + 1, deadline.setting);
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
        claimed: boolean,
        /** Since when (the clock's ms) what this key's operation made has read as gone, as recorded. */
        absentSince: number | undefined,
    ): Promise<Attempt> {
        const { spec } = api;
        const what = `the create of ${spec.label}`;
        const startedAt = this.clock();
        let view: OperationView;
        let handle: PendingOperation | undefined;
        let endedAtFirstLook: boolean | undefined;
        const scope = keyed && token !== undefined ? createScopeOf(api, inputs) : undefined;
        const heldBy = found && !claimed ? { heldBy: found.id } : {};
        if (scope && token !== undefined) await this.sent.sending(scope, { key: token, body: inputs.body, ...heldBy });
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
                    : `${error.message}; ${whatTheNextUpDoes(spec, "unseen")}`;
                const known = {
                    operation: handle,
                    tainted: !interrupted,
                    ...(interrupted ? {} : { taintReason: reason }),
                };
                throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, known), reason);
            }
            // Refused before it did anything, its outcome is known; one of unknown outcome stays recorded.
            if (scope && !outcomeUnknown(error, this.signal.aborted)) await this.sent.ended(scope);
            return this.afterFailedSubmit(api, inputs, deadline, error, { found, keyed, claimed, token });
        }
        // The record stays until what the operation made has been read: a process killed before that
        // leaves the next create a request to replay, not a lookup that may lag behind the operation.
        const outcomeKnown = async () => {
            if (scope) await this.sent.ended(scope);
        };
        if (view.resubmit) {
            await outcomeKnown();
            return "resubmit";
        }
        // Over at the first answer (Google answers a repeated requestId with the done operation itself)
        // or at the first look: with a key the API replays, that is an earlier create of ours.
        const replayed = keyed && endedAtFirstLook === true;
        if (view.state === "pending") {
            // Accepted, with nothing to follow it by: the next up finds it by its natural key.
            const how = inputs.createToken ? "replaying its createToken" : "its natural key";
            const reason = `the create request's outcome is unknown (the API accepted it, ${view.status}, but gave no way to follow it). The resource may exist: the next \`pulumi up\` finds it by ${how} and records it, or creates it`;
            throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, { tainted: false }), reason);
        }
        // Gone for longer than a read may lag: one read tells. [5756]
        const settledLongAgo = absentSince !== undefined && this.clock() - absentSince >= api.settleSpanMs;
        const settleFrom = this.clock();
        let made: Found | "gone" | undefined;
        try {
            made = await this.finds.madeBy(
                api,
                view,
                deadline,
                view.state === "succeeded" && !replayed,
                settledLongAgo ? 1 : undefined,
            );
        } catch (error) {
            const next =
                view.state === "succeeded" ? "the next `pulumi up` reads it again" : whatTheNextUpDoes(spec, "unseen");
            const reason = `${what} ended ${view.state}, but reading what it made failed: ${messageOf(error)}; ${next}`;
            const failed = view.state !== "succeeded";
            const known = { operation: handle, tainted: failed, ...(failed ? { taintReason: reason } : {}) };
            throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, known), reason);
        }
        const resource = made === "gone" ? undefined : made;
        // The deadline cut the reads short: the key is not known spent, and the next create reads it again.
        if (replayed && made === "gone" && !settledLongAgo && this.clock() - settleFrom < api.settleSpanMs)
            return "absent";
        await outcomeKnown();
        // A create that failed while a resource held the key before it (Cloud Control's FAILED
        // AlreadyExists): what the key names now is that resource, which this create did not make. [O]
        if (view.state !== "succeeded" && found !== undefined && resource?.id === found.id)
            return this.writes.takeOver(api, inputs, found, deadline);
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
        const next = whatTheNextUpDoes(spec, resource ? { record: resource.record } : "unseen");
        const reason = new OperationFailedError(what, view, next).message;
        const known = { resourceId: resource?.id, resource: resource?.record, tainted: true, taintReason: reason };
        throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, known), reason);
    }

    /** What a refused or unanswered create request calls for. */
    private async afterFailedSubmit(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        deadline: Deadline,
        error: unknown,
        attempt: {
            readonly found: Found | undefined;
            readonly keyed: boolean;
            readonly claimed: boolean;
            readonly token: string | undefined;
        },
    ): Promise<Attempt> {
        const { spec } = api;
        const { found, keyed, claimed, token } = attempt;
        if (outcomeUnknown(error, this.signal.aborted)) {
            // With the natural key taken before the request, the request made no other.
            if (found) throw new CreateOutcomeUnknownError(spec.label, found.id, messageOf(error));
            const how = inputs.createToken ? "replaying its createToken" : "its natural key";
            const reason = `the create request's outcome is unknown (${messageOf(error)}). The resource may exist: the next \`pulumi up\` finds it by ${how} and records it, or creates it`;
            // Without a createToken, the key this request went with is what can replay it. [G]
            const createKey = inputs.createToken === undefined ? token : undefined;
            throw partialState(inputs, spec.key, spec.label, outputsOf(inputs, { tainted: false, createKey }), reason);
        }
        const meaning = api.meaning(error);
        if (meaning === "token-in-progress" && keyed) return "outstanding";
        if (meaning === "conflict") {
            // The refusal names what holds the natural key (GreenLake's existingId): that one, once read
            // and found to have this natural key, is what the create ran into.
            const named = error instanceof TaskApiError ? spec.dialect.conflictHolder?.(error.body) : undefined;
            const holder =
                named === undefined
                    ? undefined
                    : await api.getNamed(named, deadline, "the conflict refusing the create");
            if (holder)
                return claimed
                    ? this.writes.claimOrTakeOver(api, inputs, holder, deadline)
                    : this.writes.takeOver(api, inputs, holder, deadline);
            // Nothing had the natural key before this keyed request: a 409 is the IETF draft's "a request
            // with this key is being processed" (the create an interrupted up left), or the name that
            // request has just taken: the same key again tells (a lookup would take it for someone
            // else's). [F]
            if (keyed && !found && !spec.dialect.keyedConflictIsTaken) return "in-progress";
            const existing = found ?? (await api.lookUp(deadline));
            if (!existing)
                throw new TaskApiContractError(
                    `${spec.label}: the API refused the create as a conflict, but has no resource with this natural key; retry once it does`,
                );
            return claimed
                ? this.writes.claimOrTakeOver(api, inputs, existing, deadline)
                : this.writes.takeOver(api, inputs, existing, deadline);
        }
        if (meaning === "token-reused" && keyed && !found) return "reused";
        // The key was sent before with another body (an earlier create of this resource, whose body the
        // program has changed since): the user is the one to say whether what holds the key is theirs. [J]
        if (meaning === "token-reused" && keyed && found)
            throw this.writes.existsError(
                api,
                inputs,
                found,
                "this resource's createToken was sent before with another body, so it may be what that create made; if it is, set `adopt: true` to keep it",
            );
        throw error;
    }
}
