// Guards the createToken's key chain against the task API server of the contract when the program changed
// between creates (found by the chaos suite: six ups in a row failed with 422). A resource whose datastore
// was made with one size and is gone since is created again with another size and the same createToken:
// its first key was used with other inputs, so the server answers 422 (idempotency_key_reused) instead of
// replaying it. With no datastore of the name, that key is spent like a replayed one and the next key
// creates; with one of the name, 422 stays an error (that datastore may be what the key made): a
// ResourceExistsError, the next key never tried. Fake time.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import type { TaskApiServer } from "../../../provider/taskApiServer/taskApiServer";
import { ResourceExistsError } from "../../../provider/tasks/errors/resourceExistsError";
import type { RawInputs } from "../../../provider/tasks/logic/datastoreState";
import { DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { datastoreInputs, FakeTime, GIB, rejection, Servers } from "../client/support";
import { lifecycleOf } from "./hostileApi";

describe("a createToken whose first key made a create of other inputs", () => {
    const servers = new Servers();
    let server: TaskApiServer;
    let time: FakeTime;
    beforeEach(async () => {
        time = new FakeTime();
        server = await servers.start({ taskCompleteAfterPolls: 1 });
    });
    afterEach(() => servers.closeAll());

    const inputs = (sizeInBytes: number) => ({ ...datastoreInputs(), sizeInBytes, createToken: "tok" }) as RawInputs;

    async function deleteAtTheApi(id: string): Promise<void> {
        const answer = await fetch(`${server.url}${DATASTORES_PATH}/${id}`, {
            method: "DELETE",
            headers: { authorization: server.authorization },
        });
        assert.equal(answer.status, 202);
        const task = answer.headers.get("location") ?? "";
        await fetch(`${server.url}${task}`, { headers: { authorization: server.authorization } });
        assert.deepEqual(server.datastores(), []);
    }

    it("is spent when no datastore has the name: the next key creates, one datastore", async () => {
        const { lifecycle } = lifecycleOf(server.url, time);
        const first = await lifecycle.create(inputs(16 * GIB));
        await deleteAtTheApi(String(first.outs.datastoreId));
        const again = await lifecycle.create(inputs(32 * GIB));
        assert.equal(again.outs.sizeInBytes, 32 * GIB);
        assert.equal(server.datastores().length, 1);
        const keys = server
            .requests()
            .filter((r) => r.method === "POST")
            .map((r) => [r.idempotencyKey, r.status]);
        assert.deepEqual(keys, [
            ["tok", 202],
            ["tok", 422],
            ["tok~1", 202],
        ]);
    });

    it("stays an error when a datastore has the name (it may be what the key made)", async () => {
        const { lifecycle } = lifecycleOf(server.url, time);
        const { outs } = await lifecycle.create(inputs(16 * GIB));
        const error = await rejection(lifecycle.create(inputs(32 * GIB)));
        // The engine refuses it as an existing datastore the user has to claim (adopt) or leave.
        assert.ok(error instanceof ResourceExistsError, inspect(error));
        assert.equal(error.existingId, outs.datastoreId);
        assert.equal(error.hasToken, true);
        assert.equal(server.datastores().length, 1);
        const keys = server
            .requests()
            .filter((r) => r.method === "POST")
            .map((r) => [r.idempotencyKey, r.status]);
        assert.deepEqual(
            keys,
            [
                ["tok", 202],
                ["tok", 422],
            ],
            "the next key is not tried",
        );
    });

    it("says that datastore may be what the key made, and what adopting a datastore asks", async () => {
        const { lifecycle } = lifecycleOf(server.url, time);
        await lifecycle.create(inputs(16 * GIB));
        const error = await rejection(lifecycle.create(inputs(32 * GIB)));
        assert.ok(error instanceof ResourceExistsError, inspect(error));
        // The token's first key made it (POST "tok" answered 202): saying none of them did points the user
        // at "choose another natural key", which leaves their own datastore behind, managed by nothing.
        assert.doesNotMatch(error.message, /none of the creates of this resource's createToken made it/);
        // Adopting a datastore asks its size and type to match (the Datastore's adoptNote), not a body sent to it.
        assert.match(error.message, /its size and type must match the program/);
    });
});
