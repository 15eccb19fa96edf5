// Guards datastoreSpec (provider/tasks/logic/datastoreSpec.ts): tasks.Datastore as a definition on the
// async engine. Its state keeps the shape stacks already hold (a stack written before the re-base reads
// the same), the task on record is followed only while its end was not seen, and GreenLake's lists
// are paged by offset. Pure.

import { strict as assert } from "node:assert";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { datastoreSpec, datastoreState, engineState } from "../../../provider/tasks/logic/datastoreSpec";
import { type DatastoreRecord, GIB } from "../../../provider/tasks/protocol/wire";
import { CLUSTER, datastoreInputs, HCI } from "../client/support";

const KEY = { hciClusterUuid: HCI, clusterId: CLUSTER, name: "ds19" };

function state(overrides: Partial<DatastoreOutputs> = {}): DatastoreOutputs {
    return { ...datastoreInputs(), tainted: false, ...overrides } as DatastoreOutputs;
}

describe("datastoreSpec", () => {
    describe("the Datastore's state, to and from the engine's", () => {
        it("a datastore on record reads back unchanged (a stack written before the re-base)", () => {
            const before = state({ datastoreId: "d1", state: "OK", taskId: "t1", createToken: "tok" });
            const engine = engineState(before as DatastoreOutputs & Record<string, unknown>);
            assert.equal(engine.resourceId, "d1");
            assert.equal(engine.operation, undefined, "its last task was seen to its end");
            const record = {
                id: "d1",
                name: "ds19",
                hciClusterUuid: HCI.toUpperCase(),
                clusterInfo: { id: CLUSTER },
                capacityInBytes: before.sizeInBytes,
                datastoreType: before.datastoreType,
                state: "OK",
            } as unknown as DatastoreRecord;
            const after = datastoreState({ ...engine, resource: record }, undefined);
            assert.deepEqual(after, before);
        });

        it("a task is followed on while the datastore has no id, or was last seen CREATING or UPDATING", () => {
            const op = (props: Partial<DatastoreOutputs>) =>
                engineState(state(props) as DatastoreOutputs & Record<string, unknown>).operation;
            assert.deepEqual(op({ taskId: "t1" }), { write: "create", kind: "greenlake-operation", ref: "t1" });
            assert.equal(op({ taskId: "t1", datastoreId: "d1", state: "CREATING" })?.write, "create");
            assert.equal(op({ taskId: "t1", datastoreId: "d1", state: "UPDATING" })?.write, "update");
            assert.equal(op({ taskId: "t1", datastoreId: "d1", state: "ERROR" }), undefined);
            assert.equal(op({ datastoreId: undefined }), undefined, "nothing to follow without a task");
        });

        it("a resize whose end was not seen is recorded UPDATING with its task; the size the API has wins", () => {
            const outputs = datastoreState(
                {
                    ...engineState(
                        state({ datastoreId: "d1", state: "OK" }) as DatastoreOutputs & Record<string, unknown>,
                    ),
                    operation: { write: "update", kind: "greenlake-operation", ref: "t9" },
                    resource: {
                        id: "d1",
                        name: "ds19",
                        hciClusterUuid: HCI,
                        clusterInfo: { id: CLUSTER },
                        capacityInBytes: 32 * GIB,
                        datastoreType: "VMFS",
                        state: "OK",
                    },
                },
                undefined,
            );
            assert.deepEqual([outputs.state, outputs.taskId, outputs.sizeInBytes], ["UPDATING", "t9", 32 * GIB]);
        });
    });

    describe("GreenLake's paged lists", () => {
        const spec = datastoreSpec(KEY);
        it("reads on by offset until `total` is reached", () => {
            const next = spec.nextPage({ items: [{}, {}], count: 2, offset: 0, total: 5 });
            assert.ok(next?.startsWith(`${spec.listPath}&offset=2`), next);
            assert.equal(spec.nextPage({ items: [{}], count: 1, offset: 4, total: 5 }), undefined);
            assert.equal(spec.nextPage({ items: [{}, {}], count: 2, offset: 0 }), undefined, "no total: one page");
            assert.equal(spec.nextPage({ items: [], count: 0, offset: 0, total: 5 }), undefined, "an empty page ends");
        });
    });
});
