// Guards outcomeUnknown (provider/tasks/logic/outcomeUnknown.ts), which decides whether a failed create
// is recorded as a pending create (the datastore may exist) or reported as a plain failure (issue 18 §2).
// It is a positive list: no answer, a timeout, a 5xx or 408, a success answer that cannot be read (not
// JSON, no usable Location), an abort while the request was in flight, and any refusal of a retry after an
// attempt of unknown outcome (issue 18, invariant 4 of the chaos suite). A definite 4xx, and any error of
// our own (a RangeError from a stack overflow, a contract error raised before anything was sent) is not
// "outcome unknown". Pure.

import { strict as assert } from "node:assert";
import { CrossOriginError } from "../../../provider/tasks/errors/crossOriginError";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { TaskApiConfigError } from "../../../provider/tasks/errors/taskApiConfigError";
import { TaskApiContractError } from "../../../provider/tasks/errors/taskApiContractError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { TaskApiUnreachableError } from "../../../provider/tasks/errors/taskApiUnreachableError";
import { outcomeUnknown } from "../../../provider/tasks/logic/outcomeUnknown";

const apiError = (status: number) => new TaskApiError("POST", "/x", status, undefined, "m", undefined);

describe("outcomeUnknown (issue 18 §2: a definite 4xx is never outcome unknown)", () => {
    for (const status of [400, 401, 403, 404, 409, 413, 415, 422, 429]) {
        it(`is false for a ${status}`, () => {
            assert.equal(outcomeUnknown(apiError(status)), false);
            assert.equal(outcomeUnknown(apiError(status), true), false, "even when aborted after the answer");
        });
    }

    for (const status of [408, 500, 502, 503, 504]) {
        it(`is true for a ${status}`, () => {
            assert.equal(outcomeUnknown(apiError(status)), true);
        });
    }

    for (const status of [400, 409, 422, 429]) {
        it(`is true for a ${status} to a retry after an attempt of unknown outcome (the refusal does not undo it)`, () => {
            const refusal = new TaskApiError("POST", "/x", status, undefined, "m", undefined, undefined, true);
            assert.equal(outcomeUnknown(refusal), true);
        });
    }

    it("is true when the API could not be reached (or did not answer in time)", () => {
        assert.equal(outcomeUnknown(new TaskApiUnreachableError("POST", "/x", 1, "no answer within 30000 ms")), true);
    });

    it("is true for a 2xx (a 202 above all) whose answer cannot be used, false for a malformed answer without a status", () => {
        assert.equal(outcomeUnknown(new MalformedResponseError("POST", "/x", "no Location", 202)), true);
        assert.equal(outcomeUnknown(new MalformedResponseError("POST", "/x", "not JSON", 200)), true);
        assert.equal(outcomeUnknown(new MalformedResponseError("GET", "/x", "not a task")), false);
    });

    it("is false for our own errors, however they arise: a RangeError, a contract error, a refused origin, config", () => {
        assert.equal(outcomeUnknown(new RangeError("Maximum call stack size exceeded")), false);
        assert.equal(outcomeUnknown(new TaskApiContractError("the API answered for another request")), false);
        assert.equal(outcomeUnknown(new CrossOriginError("http://elsewhere/x", "http://api")), false);
        assert.equal(outcomeUnknown(new TaskApiConfigError("token")), false);
    });

    it("is true for an abort while the request was in flight (the signal's reason is any error)", () => {
        assert.equal(outcomeUnknown(new Error("interrupted by SIGINT"), true), true);
        assert.equal(outcomeUnknown(new Error("interrupted by SIGINT"), false), false);
    });
});
