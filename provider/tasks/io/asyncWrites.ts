// Writes of an AsyncResource to a resource that exists: adopting one with the natural key (sending
// the program's body where it differs), claiming the one an earlier create of unknown outcome made,
// and an update's body sent and followed to its end. Used by AsyncCreates and AsyncLifecycle.

import { randomUUID } from "node:crypto";
import type { AsyncResourceOutputs } from "../asyncResourceSchema";
import { OperationFailedError } from "../errors/operationFailedError";
import { OperationWaitError } from "../errors/operationWaitError";
import { ResourceExistsError } from "../errors/resourceExistsError";
import { brokenReason, recordedBody } from "../logic/asyncSpec";
import { differs, keptOutputs, outputsOf, partialState, type RawAsyncInputs } from "../logic/asyncState";
import { whatTheNextUpDoes } from "../logic/operationErrors";
import type { OperationView } from "../protocol/dialects/dialect";
import type { AsyncApi, Deadline, Found } from "./asyncApi";

/** Writes to what exists. */
export class AsyncWrites {
    constructor(private readonly clock: () => number) {}

    /**
     * A create resumed after an outcome that was unknown, refused because the natural key is taken:
     * without a createToken the natural key is the only identity there is, so what holds it is what
     * the earlier create made (an API that ignores idempotency keys refuses the replay of that create
     * this way). With one, the token's creates did not make it: it is someone else's.
     */
    async claimOrTakeOver(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        holder: Found,
        deadline: Deadline,
    ): Promise<AsyncResourceOutputs> {
        if (inputs.createToken !== undefined) return this.takeOver(api, inputs, holder, deadline);
        const broken = this.brokenTaken(api, inputs, holder, "found as what an earlier create made");
        if (broken) throw broken;
        return outputsOf(inputs, { resourceId: holder.id, resource: holder.record, tainted: false });
    }

    /** The refusal of a resource with the natural key that is not this resource's, with why it may be (`why`). */
    existsError(api: AsyncApi, inputs: RawAsyncInputs, found: Found, why?: string): ResourceExistsError {
        const { spec } = api;
        return new ResourceExistsError(
            spec.label,
            found.id,
            inputs.createToken !== undefined,
            spec.rules?.existsDetail(found.record),
            spec.rules?.adoptNote(found.record),
            why,
        );
    }

    /** A resource with the natural key that this resource did not make: adopt it (sending the program's body), or refuse. */
    async takeOver(
        api: AsyncApi,
        inputs: RawAsyncInputs,
        found: Found,
        deadline: Deadline,
    ): Promise<AsyncResourceOutputs> {
        const { spec } = api;
        if (!inputs.adopt) throw this.existsError(api, inputs, found);
        // A resource beyond repair is taken over tainted, so the next up replaces it.
        const broken = this.brokenTaken(api, inputs, found, `adopted (id ${found.id})`);
        if (broken) throw broken;
        const refusal = spec.rules?.adoptRefusal(inputs.body, found.record, found.id);
        if (refusal) throw refusal;
        // A kind whose adoption must match (its refusal said so) takes it as it is. Any other is sent the
        // program's body, which also joins or waits out an operation still running on it (an interrupted
        // up's create: a PUT sent again joins it, ARM's and Azure's rule) and follows it to its end.
        const current = spec.rules ? found : await this.write(api, inputs, found, deadline, undefined);
        return outputsOf(inputs, { resourceId: current.id, resource: current.record, tainted: false });
    }

    /** A resource taken as this one's that is beyond repair: partial state, tainted, so the next up replaces it. */
    brokenTaken(api: AsyncApi, inputs: RawAsyncInputs, found: Found, what: string): Error | undefined {
        const { spec } = api;
        const broken = brokenReason(spec, found.record);
        if (!broken) return undefined;
        const reason = `${broken}, ${what}; ${whatTheNextUpDoes(spec, { record: found.record })}`;
        const known = { resourceId: found.id, resource: found.record, tainted: true, taintReason: reason };
        return partialState(inputs, spec.key, spec.label, outputsOf(inputs, known), reason);
    }

    /**
     * Sends the body as an update of `found` and follows it to its end. An operation whose end was not
     * seen is recorded with the state before it (`before`, or nothing for an adoption), so the next up
     * follows it and sends the body again; one that failed leaves the state on record as it was.
     */
    async write(
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
            () =>
                spec.dialect.update(
                    spec.target,
                    found.id,
                    spec.rules ? spec.rules.updateBody(inputs.body) : inputs.body,
                    randomUUID(),
                ),
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
            read !== undefined && !differs(recordedBody(spec, inputs.body, read.record), inputs.body);
        return (await api.settled(() => api.get(found.id, deadline), shows, deadline)) ?? found;
    }
}
