// Guards the diff of a tasks.Datastore (provider/tasks/datastoreDiff.ts): each natural-key field
// (hciClusterUuid, clusterId, name) and the datastore type force a replacement; a replacement that keeps
// the natural key deletes first (the name is unique per cluster), one that changes it creates first; a
// tainted datastore is replaced unless the program sets untaint; size, createToken, timeouts, adopt and
// untaint change in place; equal inputs are no change; unknown values during preview count as changed,
// an unknown natural key as kept (the safe, delete-first case). Pure tables.

import { strict as assert } from "node:assert";
import type { DatastoreInputs, DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { diffDatastore } from "../../../provider/tasks/logic/datastoreDiff";
import { datastoreInputs, GIB, OTHER_UUID, UNKNOWN } from "../client/support";

/** Checked inputs, as check returns them. */
const news = datastoreInputs;

/** Stored outputs of a datastore created from `news()`. */
function olds(overrides: Partial<DatastoreOutputs> = {}): DatastoreOutputs {
    return {
        ...news(),
        datastoreId: "0b9e5a52-6a0e-4a47-8f55-2d7f3e1c1a01",
        state: "OK",
        taskId: "7d1e3c5a-2b4f-4a6e-9c8d-0e1f2a3b4c5d",
        tainted: false,
        ...overrides,
    };
}

const NO_CHANGE = { changes: false, replaces: [], deleteBeforeReplace: false };
const IN_PLACE = { changes: true, replaces: [], deleteBeforeReplace: false };

describe("diffDatastore", () => {
    describe("no change", () => {
        it("when the inputs are those stored", () => {
            assert.deepEqual(diffDatastore(olds(), news()), NO_CHANGE);
        });

        it("when the optional inputs are equal too", () => {
            const optional = { createToken: "tok-1", timeouts: { create: "30m", delete: "5m" }, adopt: true };
            assert.deepEqual(diffDatastore(olds(optional), news(optional)), NO_CHANGE);
        });

        it("when only the recorded customTimeouts differ: the option changes no resource, as in Pulumi", () => {
            const recorded = olds({ customTimeouts: { delete: "5m" } });
            assert.deepEqual(diffDatastore(recorded, news({ customTimeouts: { delete: "1h" } })), NO_CHANGE);
            assert.deepEqual(diffDatastore(olds(), news({ customTimeouts: { create: "1m" } })), NO_CHANGE);
        });

        it("when state written before adopt and untaint existed lacks them and they are false", () => {
            const { adopt: _adopt, untaint: _untaint, ...older } = olds();
            assert.deepEqual(diffDatastore(older, news()), NO_CHANGE);
        });

        it("when timeouts go from absent to empty", () => {
            assert.deepEqual(diffDatastore(olds(), news({ timeouts: {} })), NO_CHANGE);
            assert.deepEqual(diffDatastore(olds({ timeouts: {} }), news()), NO_CHANGE);
        });

        it("when timeouts hold the same durations in another key order", () => {
            assert.deepEqual(
                diffDatastore(
                    olds({ timeouts: { create: "30m", delete: "5m" } }),
                    news({ timeouts: { delete: "5m", create: "30m" } }),
                ),
                NO_CHANGE,
            );
        });

        it("a create not resolved yet, or a task of ours last seen running: always a change, so the next up resolves it", () => {
            const changed = (props: Partial<DatastoreOutputs>) => diffDatastore(olds(props), news()).changes;
            assert.equal(changed({ datastoreId: undefined, taskId: "t1" }), true, "pending create with its task");
            assert.equal(changed({ datastoreId: undefined, taskId: undefined }), true, "create of unknown outcome");
            assert.equal(changed({ state: "CREATING", taskId: "t1" }), true);
            assert.equal(changed({ state: "UPDATING", taskId: "t1" }), true, "a resize whose end was not seen");
            assert.equal(changed({ state: "OK", taskId: "t1" }), false, "the last task, seen to its end");
        });

        it("whatever the outputs the API filled in (id, state, task)", () => {
            assert.deepEqual(
                diffDatastore(olds({ state: "UPDATING", datastoreId: "other", taskId: undefined }), news()),
                NO_CHANGE,
            );
        });
    });

    describe("replacements", () => {
        const table: [what: string, change: Partial<DatastoreInputs>, replaces: string[], deleteFirst: boolean][] = [
            ["a new name", { name: "ds20" }, ["name"], false],
            ["another cluster", { clusterId: OTHER_UUID }, ["clusterId"], false],
            ["another HCI cluster", { hciClusterUuid: OTHER_UUID }, ["hciClusterUuid"], false],
            ["another datastore type", { datastoreType: "NFS" }, ["datastoreType"], true],
            ["a new name and type", { name: "ds20", datastoreType: "VVOL" }, ["name", "datastoreType"], false],
            [
                "a whole new natural key",
                { hciClusterUuid: OTHER_UUID, clusterId: OTHER_UUID, name: "ds20" },
                ["hciClusterUuid", "clusterId", "name"],
                false,
            ],
            ["a new name and a bigger size", { name: "ds20", sizeInBytes: 32 * GIB }, ["name"], false],
            ["a name differing only in case", { name: "DS19" }, ["name"], false],
        ];
        for (const [what, change, replaces, deleteFirst] of table) {
            it(`${what}: replaces ${replaces.join(", ")}, ${deleteFirst ? "deleting" : "creating"} first`, () => {
                assert.deepEqual(diffDatastore(olds(), news(change)), {
                    changes: true,
                    replaces,
                    deleteBeforeReplace: deleteFirst,
                });
            });
        }
    });

    describe("a tainted datastore", () => {
        it("is replaced, deleting first (its natural key is kept)", () => {
            assert.deepEqual(diffDatastore(olds({ tainted: true, taintReason: "task failed" }), news()), {
                changes: true,
                replaces: ["tainted"],
                deleteBeforeReplace: true,
            });
        });

        it("is replaced, creating first, when the natural key changes too", () => {
            assert.deepEqual(diffDatastore(olds({ tainted: true }), news({ name: "ds20" })), {
                changes: true,
                replaces: ["name", "tainted"],
                deleteBeforeReplace: false,
            });
        });

        it("is kept with untaint: an in-place update that looks it up", () => {
            assert.deepEqual(diffDatastore(olds({ tainted: true }), news({ untaint: true })), IN_PLACE);
        });

        it("with untaint is still replaced for a new natural key or type", () => {
            assert.deepEqual(diffDatastore(olds({ tainted: true }), news({ untaint: true, datastoreType: "NFS" })), {
                changes: true,
                replaces: ["datastoreType"],
                deleteBeforeReplace: true,
            });
        });

        it("untaint set on a datastore that is not tainted is only an in-place change", () => {
            assert.deepEqual(diffDatastore(olds(), news({ untaint: true })), IN_PLACE);
        });

        it("kept by untaint before is no change while untaint stays", () => {
            assert.deepEqual(diffDatastore(olds({ untaint: true }), news({ untaint: true })), NO_CHANGE);
        });
    });

    describe("in-place changes", () => {
        const table: [what: string, before: Partial<DatastoreOutputs>, after: Partial<DatastoreInputs>][] = [
            ["a bigger size", {}, { sizeInBytes: 32 * GIB }],
            ["a smaller size (check refuses it; diff does not replace)", {}, { sizeInBytes: 8 * GIB }],
            ["a createToken set", {}, { createToken: "tok-1" }],
            ["a createToken changed", { createToken: "tok-1" }, { createToken: "tok-2" }],
            ["a createToken removed", { createToken: "tok-1" }, {}],
            ["timeouts set", {}, { timeouts: { create: "30m" } }],
            ["a timeout changed", { timeouts: { create: "30m" } }, { timeouts: { create: "1h" } }],
            ["a timeout added", { timeouts: { create: "30m" } }, { timeouts: { create: "30m", delete: "5m" } }],
            ["timeouts removed", { timeouts: { create: "30m" } }, {}],
            ["adopt set", {}, { adopt: true }],
            ["adopt cleared", { adopt: true }, { adopt: false }],
            ["untaint set", {}, { untaint: true }],
            ["untaint cleared", { untaint: true }, { untaint: false }],
        ];
        for (const [what, before, after] of table) {
            it(`${what}`, () => {
                assert.deepEqual(diffDatastore(olds(before), news(after)), IN_PLACE);
            });
        }
    });

    describe("unknown values (preview)", () => {
        for (const key of ["hciClusterUuid", "clusterId", "name"] as const) {
            it(`an unknown ${key} replaces, deleting first (the key may be unchanged)`, () => {
                assert.deepEqual(diffDatastore(olds(), news({ [key]: UNKNOWN })), {
                    changes: true,
                    replaces: [key],
                    deleteBeforeReplace: true,
                });
            });
        }

        it("an unknown name with another cluster replaces both, creating first", () => {
            assert.deepEqual(diffDatastore(olds(), news({ name: UNKNOWN, clusterId: OTHER_UUID })), {
                changes: true,
                replaces: ["clusterId", "name"],
                deleteBeforeReplace: false,
            });
        });

        it("an unknown datastoreType replaces, deleting first", () => {
            assert.deepEqual(diffDatastore(olds(), news({ datastoreType: UNKNOWN })), {
                changes: true,
                replaces: ["datastoreType"],
                deleteBeforeReplace: true,
            });
        });

        for (const key of ["sizeInBytes", "createToken", "timeouts", "adopt", "untaint"] as const) {
            it(`an unknown ${key} is an in-place change`, () => {
                assert.deepEqual(diffDatastore(olds(), news({ [key]: UNKNOWN })), IN_PLACE);
            });
        }

        it("an unknown untaint on a tainted datastore replaces it (it may not be set)", () => {
            assert.deepEqual(diffDatastore(olds({ tainted: true }), news({ untaint: UNKNOWN })), {
                changes: true,
                replaces: ["tainted"],
                deleteBeforeReplace: true,
            });
        });

        it("an unknown size that equals nothing stored is still a change, even when the stored size is unknown too", () => {
            assert.deepEqual(
                diffDatastore(olds({ sizeInBytes: UNKNOWN as unknown as number }), news({ sizeInBytes: UNKNOWN })),
                IN_PLACE,
            );
        });
    });
});
