// Guards afterFailedPost (provider/tasks/logic/createFailure.ts), which decides what a create's failed POST
// calls for (issue 18, invariant 4 of the chaos suite). A 409 is the name taken, and a 422
// idempotency_key_reused a spent key, only when no attempt of the POST may have made the datastore; after an
// attempt of unknown outcome, every refusal leaves the outcome unknown: a pending create (partial state,
// not tainted, no datastore id), or, when a datastore had the name before the POST, CreateOutcomeUnknownError.
// Pure.

import { strict as assert } from "node:assert";
import { CreateOutcomeUnknownError } from "../../../provider/tasks/errors/createOutcomeUnknownError";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { afterFailedPost } from "../../../provider/tasks/logic/createFailure";
import type { RawInputs } from "../../../provider/tasks/logic/datastoreState";
import { datastoreInputs } from "../client/support";
import { record } from "../io/hostileApi";

const inputs = { ...datastoreInputs(), createToken: "tok" } as RawInputs;
const post = (found = false) => ({
    inputs,
    key: { hciClusterUuid: inputs.hciClusterUuid, clusterId: inputs.clusterId, name: inputs.name },
    label: 'datastore "ds19"',
    idempotencyKey: "tok",
    found: found ? record() : undefined,
});
const refusal = (status: number, code: string | undefined, earlierOutcomeUnknown: boolean) =>
    new TaskApiError("POST", "/x", status, code, "m", undefined, undefined, earlierOutcomeUnknown);

describe("afterFailedPost", () => {
    it("a definite 409 is the name taken; a definite 422 idempotency_key_reused, with nothing listed, a spent key", () => {
        assert.equal(afterFailedPost(refusal(409, "conflict", false), false, post()).kind, "conflict");
        assert.equal(afterFailedPost(refusal(422, "idempotency_key_reused", false), false, post()).kind, "spent");
        const definite = afterFailedPost(refusal(400, "bad_request", false), false, post());
        assert.ok(definite.kind === "fail" && definite.error instanceof TaskApiError);
    });

    for (const [status, code] of [
        [409, "conflict"],
        [422, "idempotency_key_reused"],
        [400, "bad_request"],
        [429, "rate_limited"],
    ] as const) {
        it(`a ${status} after an attempt of unknown outcome is a pending create, not tainted`, () => {
            const failure = afterFailedPost(refusal(status, code, true), false, post());
            assert.equal(failure.kind, "fail");
            const error = failure.kind === "fail" ? failure.error : undefined;
            assert.ok(error instanceof PartialStateError, String(error));
            assert.match(error.message, /the create request's outcome is unknown/);
            assert.equal(error.properties.tainted, false);
            assert.equal(error.properties.datastoreId, undefined);
        });
    }

    it("after an attempt of unknown outcome, with a datastore listed before the POST: CreateOutcomeUnknownError", () => {
        const failure = afterFailedPost(refusal(409, "conflict", true), false, post(true));
        assert.ok(failure.kind === "fail" && failure.error instanceof CreateOutcomeUnknownError);
    });
});
