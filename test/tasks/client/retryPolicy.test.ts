// Guards which failed requests the task API client may send again (provider/tasks/core/retryPolicy.ts):
// GET, HEAD and DELETE after a network error or a transient status (408, 429, 500, 502, 503, 504); POST
// and PATCH only when they carry an Idempotency-Key, or when the server declined them (429, 503 with
// Retry-After); never after a status that says the request itself is wrong. And which statuses ask the
// client to slow down (429, 503). Pure tables.

import { strict as assert } from "node:assert";
import { isThrottled, mayRetry, type RequestOutcome } from "../../../provider/tasks/client/retryPolicy";

const NETWORK: RequestOutcome = { networkError: true };
const TRANSIENT = [408, 429, 500, 502, 503, 504];
/** Statuses that say the request is wrong (or, for 501 and 505, that repeating it cannot help). */
const PERMANENT = [400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 501, 505];
/** Success and redirect statuses never reach the policy as failures, but must not read as transient. */
const NOT_FAILURES = [200, 201, 202, 204, 301, 304];

function describeOutcome(outcome: RequestOutcome): string {
    return "networkError" in outcome ? "a network error" : `status ${outcome.status}`;
}

describe("retryPolicy", () => {
    describe("mayRetry", () => {
        const outcomes: RequestOutcome[] = [NETWORK, ...TRANSIENT.map((status) => ({ status }))];

        for (const method of ["GET", "HEAD", "DELETE"]) {
            for (const outcome of outcomes) {
                it(`retries ${method} after ${describeOutcome(outcome)}, with or without a key`, () => {
                    assert.equal(mayRetry(method, false, outcome), true);
                    assert.equal(mayRetry(method, true, outcome), true);
                });
            }
        }

        for (const method of ["POST", "PATCH"]) {
            for (const outcome of outcomes.filter((o) => "networkError" in o || o.status !== 429)) {
                it(`does not retry ${method} after ${describeOutcome(outcome)} without an Idempotency-Key`, () => {
                    assert.equal(mayRetry(method, false, outcome), false);
                });
                it(`retries ${method} after ${describeOutcome(outcome)} with an Idempotency-Key`, () => {
                    assert.equal(mayRetry(method, true, outcome), true);
                });
            }
        }

        for (const method of ["POST", "PATCH"]) {
            it(`retries ${method} without an Idempotency-Key when the server declined it (429, 503 + Retry-After)`, () => {
                assert.equal(mayRetry(method, false, { status: 429 }), true);
                assert.equal(mayRetry(method, false, { status: 503, retryAfter: true }), true);
                assert.equal(mayRetry(method, false, { status: 503 }), false, "a bare 503 may have done it");
            });
        }

        for (const method of ["GET", "DELETE", "POST", "PATCH"]) {
            for (const status of [...PERMANENT, ...NOT_FAILURES]) {
                it(`never retries ${method} after status ${status}`, () => {
                    assert.equal(mayRetry(method, true, { status }), false);
                    assert.equal(mayRetry(method, false, { status }), false);
                });
            }
        }

        it("reads the method in any case", () => {
            assert.equal(mayRetry("get", false, NETWORK), true);
            assert.equal(mayRetry("Delete", false, { status: 503 }), true);
            assert.equal(mayRetry("post", false, NETWORK), false);
            assert.equal(mayRetry("patch", true, { status: 500 }), true);
        });

        it("treats methods it does not know as unsafe to repeat without a key", () => {
            for (const method of ["PUT", "OPTIONS", "CONNECT", ""]) {
                assert.equal(mayRetry(method, false, NETWORK), false, method);
                assert.equal(mayRetry(method, true, NETWORK), true, method);
            }
        });
    });

    describe("isThrottled", () => {
        const table: [status: number, throttled: boolean][] = [
            [429, true],
            [503, true],
            [408, false],
            [500, false],
            [502, false],
            [504, false],
            [400, false],
            [200, false],
        ];
        for (const [status, throttled] of table) {
            it(`${status} ${throttled ? "asks" : "does not ask"} the client to slow down`, () => {
                assert.equal(isThrottled(status), throttled);
            });
        }
    });
});
