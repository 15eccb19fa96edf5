// What the AsyncResource lifecycle finds at its API around what runs there: an operation on record
// followed to its end first; a resource that a delete of ours (whose process never saw it end) still
// runs on read only once that delete has ended; and what an operation that ended made, read past reads
// that lag behind it. Used by AsyncLifecycle (asyncLifecycle.ts) and AsyncCreates (asyncCreates.ts).

import type { AsyncResourceOutputs, PendingOperation } from "../asyncResourceSchema";
import { OperationWaitError } from "../errors/operationWaitError";
import { TaskApiContractError } from "../errors/taskApiContractError";
import type { OperationView } from "../protocol/dialects/dialect";
import type { AsyncApi, Deadline, Found } from "./asyncApi";
import { deleteScopeOf, recordedDelete, type SentCreates } from "./sentCreates";

/** Reads around what runs at the API. */
export class AsyncFinds {
    constructor(
        private readonly clock: () => number,
        /** Where deletes of ours are recorded until their end is seen (sentCreates.ts). */
        private readonly sent: SentCreates,
    ) {}

    /**
     * Follows an operation recorded in state to its end, whatever the end: failed or canceled only means
     * the next step (look up, create again, send again) decides. Stopping short again is an error.
     */
    async followQuietly(
        api: AsyncApi,
        operation: PendingOperation,
        deadline: Deadline,
    ): Promise<OperationView | undefined> {
        const what = `the ${operation.write} of ${api.spec.label} started earlier`;
        try {
            return await api.follow(
                { kind: operation.kind, ref: operation.ref },
                undefined,
                what,
                this.clock(),
                deadline,
            );
        } catch (error) {
            // An operation the API no longer has (expired, or the resource it polled was deleted) is over:
            // what it did is for the next step to find out, as for any other end. [R]
            const gone =
                error instanceof OperationWaitError &&
                error.stop === "polling" &&
                api.meaning(error.cause) === "not-found";
            if (gone) return undefined;
            throw error;
        }
    }

    /**
     * What holds the natural key once the operation on record (if any) has ended; `made`: that operation
     * was a create, seen to succeed.
     */
    async afterOperationOnRecord(
        api: AsyncApi,
        olds: AsyncResourceOutputs,
        deadline: Deadline,
    ): Promise<{ found: Found | undefined; made: boolean }> {
        const ended = olds.operation ? await this.followQuietly(api, olds.operation, deadline) : undefined;
        const found = await this.present(api, () => api.lookUp(deadline), deadline, "the update");
        return { found, made: olds.operation?.write === "create" && ended?.state === "succeeded" };
    }

    /**
     * What `readIt` finds, once a delete of ours on it that its process never saw end (Ctrl-C, a kill)
     * has been followed to its end: a resource that delete removed is not found, though a read that lags
     * behind it still shows it, and though the delete's stack kept it (a destroy stopped while its
     * operation ran, or before its answer was read). A deletion under way at the API is waited out
     * (AsyncApi.present). [6499]
     */
    async present(
        api: AsyncApi,
        readIt: () => Promise<Found | undefined>,
        deadline: Deadline,
        what: string,
    ): Promise<Found | undefined> {
        const found = await api.present(readIt, deadline, what);
        const scope = found && deleteScopeOf(api, found.id);
        const deleting = scope && (await this.sent.unended(scope));
        if (!scope || !deleting) return found;
        // Sent, its answer never read: where the API lists its operations, that delete is found there. [10657]
        const handle = recordedDelete(deleting) ?? (await api.runningDeletes(found.id, deadline))[0];
        if (!handle) {
            // Sent, and its answer never read: read until a read that lags behind it would show it done.
            // Still there then, it did not delete it (or not yet); a deadline that cut the reads short
            // leaves the record for the next read. [7280]
            const lookedFrom = this.clock();
            const after = await api.settled(readIt, (record) => record === undefined, deadline);
            if (!after || this.clock() - lookedFrom >= api.settleSpanMs) await this.sent.ended(scope);
            return after;
        }
        const ended = await this.followQuietly(api, { write: "delete", ...handle }, deadline);
        await this.sent.ended(scope);
        return ended?.state === "succeeded"
            ? await api.settled(readIt, (record) => record === undefined, deadline)
            : await api.present(readIt, deadline, what);
    }

    /** What a create's operation made: the resource, "gone" when the API no longer has it, or undefined when unnamed. */
    async madeBy(
        api: AsyncApi,
        view: OperationView,
        deadline: Deadline,
        lookUpUnnamed: boolean,
        looks?: number,
    ): Promise<Found | "gone" | undefined> {
        const { spec } = api;
        const named = spec.keyIsId
            ? spec.key
            : (this.memberNamed(api, view) ??
              view.resourceId ??
              (view.record === undefined ? undefined : spec.idOf(view.record)));
        // The operation ended: a read that finds nothing may only lag behind it, so it looks again first.
        const exists = (found: Found | undefined) => found !== undefined;
        let made: Found | undefined;
        if (named !== undefined) made = await api.settled(() => api.get(named, deadline), exists, deadline, looks);
        else if (view.resourceLocation) {
            const location = view.resourceLocation;
            made = await api.settled(() => api.getAt(location, deadline), exists, deadline, looks);
        } else
            return lookUpUnnamed ? await api.settled(() => api.lookUp(deadline), exists, deadline, looks) : undefined;
        if (!made) return "gone";
        api.checkKey(made, `the create of ${spec.label}`);
        return made;
    }

    /** The id in the URI an operation names as what it made, for a kind that says where its members are. */
    private memberNamed(api: AsyncApi, view: OperationView): string | undefined {
        const rules = api.spec.rules;
        if (!rules || view.resourceLocation === undefined) return undefined;
        const member = rules.memberId(view.resourceLocation, api.baseUrl);
        if ("problem" in member)
            throw new TaskApiContractError(
                `the create of ${api.spec.label} names what it made as ${member.problem}; nothing was read or recorded. ` +
                    "Check the API (or what stands between us and it).",
            );
        return member.id;
    }
}
