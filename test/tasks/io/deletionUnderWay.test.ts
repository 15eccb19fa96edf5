// Guards what a refresh, a create and an update do with a datastore being deleted at the API (chaos
// seeds 30067 and 30597: a `destroy` interrupted after its DELETE was on the wire; the DELETE landed, the
// healing refresh read the datastore in DELETING as present, the `up` changed nothing, and the datastore
// vanished from under the stack). A deletion under way is waited out: gone is gone, a deletion that
// failed leaves the datastore as it was, and a deadline that comes first is an error saying what to do.
// The task API server of the contract, on the test's fake clock, so its tasks end as the waits pass.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import type { TaskApiServer } from "../../../provider/taskApiServer/taskApiServer";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { DeletionUnderWayError } from "../../../provider/tasks/errors/deletionUnderWayError";
import { datastoreUri } from "../../../provider/tasks/protocol/wire";
import { datastoreInputs, FakeTime, GIB, rejection, Servers } from "../client/support";
import { type LifecycleUnderTest, lifecycleOf } from "./hostileApi";

/** How long the server's tasks take, on the fake clock. */
const TASK_MS = 90_000;

describe("a datastore being deleted at the API is waited out, never read as the resource", () => {
    const servers = new Servers();
    let server: TaskApiServer;
    let time: FakeTime;
    let under: LifecycleUnderTest;
    beforeEach(async () => {
        time = new FakeTime();
        server = await servers.start({ clock: time.clock, taskDurationMs: TASK_MS });
        under = lifecycleOf(server.url, time);
    });
    afterEach(() => servers.closeAll());

    /** A datastore made by the lifecycle, then a DELETE of it sent by someone else (an interrupted destroy's). */
    async function createdThenDeleting(options: { deleteFails?: boolean } = {}): Promise<DatastoreOutputs> {
        const { outs } = await under.lifecycle.create(datastoreInputs());
        assert.equal(outs.state, "OK");
        if (options.deleteFails)
            server.addFault({ match: { method: "DELETE" }, fault: { task: { fails: "the array is busy" } } });
        const answer = await fetch(`${server.url}${datastoreUri(outs.datastoreId as string)}`, {
            method: "DELETE",
            headers: { authorization: server.authorization },
        });
        assert.equal(answer.status, 202);
        assert.equal(server.datastores()[0]?.state, "DELETING");
        return outs;
    }

    it("a refresh waits for the deletion to end and finds the datastore gone", async () => {
        const props = await createdThenDeleting();
        const startedAt = time.now;
        const read = await under.lifecycle.read(engineId(props), props);
        assert.deepEqual(read, {}, inspect(read));
        assert.deepEqual(server.datastores(), []);
        assert.ok(time.now - startedAt >= TASK_MS, `waited ${time.now - startedAt} ms`);
        assert.ok(under.reports.some((line) => /being deleted at the API; waiting for that to end/.test(line)));
    });

    it("a refresh keeps a datastore whose deletion failed, as it was before", async () => {
        const props = await createdThenDeleting({ deleteFails: true });
        const read = await under.lifecycle.read(engineId(props), props);
        assert.equal(read.props?.datastoreId, props.datastoreId);
        assert.equal(read.props?.state, "OK");
        assert.equal(read.props?.tainted, false);
    });

    it("a create of the same natural key waits for the deletion to end, then creates it", async () => {
        const props = await createdThenDeleting();
        server.clearRequests();
        const { outs } = await under.lifecycle.create(datastoreInputs({ sizeInBytes: 32 * GIB }));
        assert.notEqual(outs.datastoreId, props.datastoreId);
        assert.equal(outs.sizeInBytes, 32 * GIB);
        assert.equal(server.datastores()[0]?.capacityInBytes, 32 * GIB);
        const [only, ...others] = server.datastores();
        assert.deepEqual(others, []);
        assert.equal(only?.id, outs.datastoreId);
        assert.equal(server.requests().filter((r) => r.method === "POST").length, 1);
    });

    it("an update of it waits for the deletion to end, then says it is gone", async () => {
        const props = await createdThenDeleting();
        const error = await rejection(under.lifecycle.update(props, datastoreInputs({ sizeInBytes: 32 * GIB })));
        assert.match(String(error), /not found|no longer exists|is gone/i, inspect(error));
        assert.deepEqual(
            server.requests().filter((r) => r.method === "PATCH"),
            [],
        );
    });

    it("a refresh whose deadline comes first fails, naming the datastore, its id and what to do; nothing is written", async () => {
        const props = await createdThenDeleting();
        server.clearRequests();
        const withTimeout = { ...props, timeouts: { read: "30s" } } as DatastoreOutputs;
        const error = await rejection(under.lifecycle.read(engineId(props), withTimeout));
        assert.ok(error instanceof DeletionUnderWayError, inspect(error));
        assert.match(
            error.message,
            new RegExp(
                `^datastore "ds19" .* \\(id ${props.datastoreId}\\) is being deleted at the API, and still was after the read waited 30 s for that deletion to end; nothing was changed\\. Run the command again once the deletion has ended .*, or raise \`timeouts\\.read\`\\.$`,
            ),
        );
        assert.deepEqual(
            server.requests().filter((r) => r.method !== "GET"),
            [],
        );
    });
});

function engineId(props: DatastoreOutputs): string {
    return `${props.hciClusterUuid}/${props.clusterId}/${props.name}`;
}
