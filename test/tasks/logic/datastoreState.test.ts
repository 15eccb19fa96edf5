// Guards outcomeUnknown (provider/tasks/logic/datastoreState.ts), which decides whether a failed create
// is recorded as a pending create (the datastore may exist) or reported as a plain failure (issue 18 §2).
// It is a positive list: no answer, a timeout, a 5xx or 408, a success answer that cannot be read (not
// JSON, no usable Location), an abort while the request was in flight, and any refusal of a retry after an
// attempt of unknown outcome (issue 18, invariant 4 of the chaos suite). A definite 4xx, and any error of
// our own (a RangeError from a stack overflow, a contract error raised before anything was sent) is not
// "outcome unknown". And resumedInputs and keptOutputs: a pending create is resumed by replaying the request
// it was sent as (its createToken, size and type), and a failed resumption keeps that token. Pure.

import { strict as assert } from "node:assert";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { CrossOriginError } from "../../../provider/tasks/errors/crossOriginError";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { TaskApiConfigError } from "../../../provider/tasks/errors/taskApiConfigError";
import { TaskApiContractError } from "../../../provider/tasks/errors/taskApiContractError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { TaskApiUnreachableError } from "../../../provider/tasks/errors/taskApiUnreachableError";
import {
    keptOutputs,
    outcomeUnknown,
    type RawInputs,
    resumedInputs,
} from "../../../provider/tasks/logic/datastoreState";
import { datastoreInputs, GIB } from "../client/support";

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

describe("resumedInputs and keptOutputs: a pending create is resumed as it was sent (issue 18, chaos invariant 4)", () => {
    const pending = (createToken?: string) =>
        ({ ...datastoreInputs(), tainted: false, ...(createToken ? { createToken } : {}) }) as DatastoreOutputs;
    const program = { ...datastoreInputs(), sizeInBytes: 32 * GIB, createToken: "tok-2", adopt: true } as RawInputs;

    it("sent with a token: its token, size and type, with the program's other settings", () => {
        for (const found of [true, false]) {
            const resumed = resumedInputs(pending("tok"), program, found);
            assert.equal(resumed.createToken, "tok");
            assert.equal(resumed.sizeInBytes, 16 * GIB);
            assert.equal(resumed.adopt, true);
        }
    });

    it("sent without one: by its name when one is listed; else the program's token makes a keyed create", () => {
        assert.ok(!("createToken" in resumedInputs(pending(), program, true)));
        assert.equal(resumedInputs(pending(), program, false).createToken, "tok-2");
        assert.equal(resumedInputs(pending(), program, false).sizeInBytes, 32 * GIB);
    });

    it("a failed update keeps a pending create's token, and records the program's for a datastore on record", () => {
        assert.equal(keptOutputs(pending("tok"), program).createToken, "tok");
        assert.equal(keptOutputs({ ...pending("tok"), datastoreId: "d1" }, program).createToken, "tok-2");
    });
});
