// Guards how a datastore in ERROR (its create task failed) reaches a state the next `up` can converge from
// (found by the chaos suite: an update PATCHed an ERROR datastore, which the API refuses with 409, on six
// ups in a row). A create whose task FAILED is tainted even when reading what it made fails; an update that
// finds its datastore in ERROR taints it instead of resizing it, so the next up replaces it; a refresh that
// finds it in ERROR (a pending create whose task failed since: chaos finding
// 4-state-refresh-keeps-failed-datastore) records it tainted, so the next up's diff replaces it. The task
// API server of the contract, fake time.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import type { TaskApiServer } from "../../../provider/taskApiServer/taskApiServer";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { diffDatastore } from "../../../provider/tasks/logic/datastoreDiff";
import type { RawInputs } from "../../../provider/tasks/logic/datastoreState";
import { DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { datastoreInputs, FakeTime, GIB, rejection, Servers } from "../client/support";
import { lifecycleOf } from "./hostileApi";

describe("a datastore in ERROR leads to a replacement, never to a loop of refused resizes", () => {
    const servers = new Servers();
    let server: TaskApiServer;
    let time: FakeTime;
    beforeEach(async () => {
        time = new FakeTime();
        server = await servers.start({ taskCompleteAfterPolls: 1 });
    });
    afterEach(() => servers.closeAll());

    it("a create whose task FAILED is tainted even when reading its datastore fails", async () => {
        server.addFault({ match: { method: "POST" }, fault: { task: { fails: "array offline" } } });
        server.addFault({ match: { method: "GET", path: `${DATASTORES_PATH}/` }, times: 100, fault: { status: 500 } });
        const { lifecycle } = lifecycleOf(server.url, time, { maxAttempts: 1 });
        const error = await rejection(lifecycle.create({ ...datastoreInputs(), createToken: "tok" } as RawInputs));
        assert.ok(error instanceof PartialStateError, inspect(error));
        assert.equal(error.properties.tainted, true);
        assert.match(
            String(error.properties.taintReason),
            /^the create of datastore "ds19" .* ended failed, but reading what it made failed: the task API answered GET .* with 500/,
        );
        assert.equal(server.datastores()[0]?.state, "ERROR");
    });

    for (const untaint of [false, true]) {
        it(`an update that finds its datastore in ERROR taints it (${untaint ? "with" : "without"} untaint), sending no PATCH`, async () => {
            server.addFault({ match: { method: "POST" }, fault: { task: { fails: "array offline" } } });
            const { lifecycle } = lifecycleOf(server.url, time);
            const failed = await rejection(lifecycle.create(datastoreInputs() as RawInputs));
            assert.ok(failed instanceof PartialStateError, inspect(failed));
            const [broken] = server.datastores();
            assert.equal(broken?.state, "ERROR");
            // As a refresh records it: its id known, not tainted.
            const olds = { ...failed.properties, tainted: untaint, datastoreId: broken?.id } as DatastoreOutputs;
            server.clearRequests();
            const news = { ...datastoreInputs(), sizeInBytes: 32 * GIB, untaint } as RawInputs;
            const error = await rejection(lifecycle.update(olds, news));
            assert.ok(error instanceof PartialStateError, inspect(error));
            assert.equal(error.properties.tainted, true);
            assert.match(
                error.message,
                untaint
                    ? /in state ERROR at the API; remove untaint so the next up replaces it/
                    : /in state ERROR at the API; the next `pulumi up` replaces it/,
            );
            assert.deepEqual(
                server.requests().filter((r) => r.method === "PATCH"),
                [],
            );
        });
    }

    describe("a refresh of a pending create whose task failed since", () => {
        /** A create whose answer was lost: pending (no datastore id, not tainted); then its task fails. */
        async function pendingThenFailed(inputs: RawInputs) {
            const failing = await servers.start({ failureRate: 1, taskDurationMs: 1000 });
            failing.addFault({ match: { method: "POST" }, fault: { loseResponse: true } });
            const { lifecycle } = lifecycleOf(failing.url, time, { maxAttempts: 1 });
            const pending = await rejection(lifecycle.create(inputs));
            assert.ok(pending instanceof PartialStateError, inspect(pending));
            assert.equal(pending.properties.tainted, false);
            assert.equal(pending.properties.datastoreId, undefined);
            failing.advanceClock(2000);
            const [broken] = failing.datastores();
            assert.equal(broken?.state, "ERROR");
            return { lifecycle, props: pending.properties as unknown as DatastoreOutputs, broken };
        }

        it("records it tainted, saying the next up replaces it; the next diff replaces it (delete first)", async () => {
            const inputs = datastoreInputs() as RawInputs;
            const { lifecycle, props, broken } = await pendingThenFailed(inputs);
            const read = await lifecycle.read(engineId(props), props);
            assert.equal(read.props?.datastoreId, broken?.id);
            assert.equal(read.props?.state, "ERROR");
            assert.equal(read.props?.tainted, true);
            assert.match(
                String(read.props?.taintReason),
                /is in state ERROR at the API; the next `pulumi up` replaces it \(deletes it, then creates it again\); `untaint: true` cannot keep it: the API has it in a state it does not recover from/,
            );
            const diff = diffDatastore(read.props as DatastoreOutputs, inputs);
            assert.deepEqual(diff, { changes: true, replaces: ["tainted"], deleteBeforeReplace: true });
        });

        it("with untaint set, records it tainted too, saying how to let the next up replace it; the diff keeps it", async () => {
            const inputs = datastoreInputs({ untaint: true }) as RawInputs;
            const { lifecycle, props } = await pendingThenFailed(inputs);
            const read = await lifecycle.read(engineId(props), props);
            assert.equal(read.props?.tainted, true);
            assert.match(
                String(read.props?.taintReason),
                /in state ERROR at the API; remove untaint so the next up replaces it/,
            );
            assert.deepEqual(diffDatastore(read.props as DatastoreOutputs, inputs).replaces, []);
        });

        it("keeps the reason of a taint already on record", async () => {
            const inputs = datastoreInputs() as RawInputs;
            const { lifecycle, props } = await pendingThenFailed(inputs);
            const tainted = { ...props, tainted: true, taintReason: "the create task failed: array offline" };
            const read = await lifecycle.read(engineId(props), tainted);
            assert.equal(read.props?.tainted, true);
            assert.equal(read.props?.taintReason, "the create task failed: array offline");
        });
    });
});

/** The id the engine holds for a datastore: its natural key. */
function engineId(props: DatastoreOutputs): string {
    return `${props.hciClusterUuid}/${props.clusterId}/${props.name}`;
}
