// The state-shape version and the inputs a refresh records (pure).

import { strict as assert } from "node:assert";
import { NewerStateError } from "../../provider/shared/errors/newerStateError";
import {
    driftedInputs,
    keepingVersion,
    readAnswer,
    STATE_VERSION,
    stamped,
    stateVersionOf,
} from "../../provider/shared/stateShape";

describe("the state's shape across versions of the package", () => {
    it("every write records the version; state without one reads as version 1", () => {
        assert.deepEqual(stamped({ a: 1 }), { a: 1, stateVersion: STATE_VERSION });
        assert.equal(stateVersionOf({ a: 1 }, "x"), 1);
        assert.equal(stateVersionOf(undefined, "x"), 1);
        assert.equal(stateVersionOf({ stateVersion: STATE_VERSION }, "x"), STATE_VERSION);
    });

    it("state a newer package wrote is refused, naming the resource and what to install", () => {
        assert.throws(
            () => stateVersionOf({ stateVersion: STATE_VERSION + 1 }, 'datastore "ds19"'),
            (error: unknown) =>
                error instanceof NewerStateError &&
                error.message.startsWith('datastore "ds19": its state was written by a newer pulumi-lifecycle') &&
                /nothing was done\. Install/.test(error.message),
        );
    });

    it("a read keeps the version on record, or its absence (a refresh of an unchanged stack changes nothing)", () => {
        assert.deepEqual(keepingVersion({ a: 1, stateVersion: 1 }, {}), { a: 1 });
        assert.deepEqual(keepingVersion({ a: 1 }, { stateVersion: 1 }), { a: 1, stateVersion: 1 });
    });

    it("inputs are recorded only when a field drifted, whatever the order of keys", () => {
        const stored = { size: 1, tags: { a: 1, b: 2 }, line: 3 };
        assert.equal(driftedInputs({ size: 1, tags: { b: 2, a: 1 }, line: 9 }, stored, ["size", "tags"]), undefined);
        assert.deepEqual(driftedInputs({ size: 2, tags: { a: 1, b: 2 }, line: 3 }, stored, ["size", "tags"]), {
            size: 2,
            tags: { a: 1, b: 2 },
        });
        assert.equal(driftedInputs({ size: 2 }, undefined, ["size"]), undefined, "nothing on record to drift from");
        assert.deepEqual(readAnswer("id", { a: 1 }, undefined), { id: "id", props: { a: 1 } });
        assert.deepEqual(readAnswer("id", { a: 1 }, { a: 2 }), { id: "id", props: { a: 1 }, inputs: { a: 2 } });
    });
});
