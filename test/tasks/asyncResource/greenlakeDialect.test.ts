// tasks.AsyncResource in the greenlake dialect, against the package's GreenLake task API server (the
// one tasks.Datastore runs against): any GreenLake data-services resource a program declares itself
// gets the engine's lifecycle. A create followed through its async operation, what it made read back
// at the item path, a create resumed by its token without a duplicate, refresh, and a delete
// confirmed by the API; every request on the server carried the token.

import { strict as assert } from "node:assert";
import { startTaskApiServer, type TaskApiServer } from "../../../provider/taskApiServer/taskApiServer";
import type { AsyncResourceProvider } from "../../../provider/tasks/asyncResourceProvider";
import type { AsyncResourceOutputs } from "../../../provider/tasks/asyncResourceSchema";
import { DATASTORES_PATH, GIB } from "../../../provider/tasks/protocol/wire";
import { greenlakeArgs } from "../../support/greenlakeResource";
import { checked, providerOnFakeTime } from "./dialectFixtures";

const TOKEN = "greenlake-dialect-token";

const providerFor = (): AsyncResourceProvider => providerOnFakeTime({ GREENLAKE_TOKEN: TOKEN });

function args(url: string, name: string, createToken?: string): Record<string, unknown> {
    return { ...greenlakeArgs(url, name), ...(createToken ? { createToken } : {}) };
}

describe("tasks.AsyncResource, greenlake dialect, against the package's GreenLake task API server", () => {
    let server: TaskApiServer;
    beforeEach(async () => {
        server = await startTaskApiServer({ token: TOKEN, testApi: true, taskCompleteAfterPolls: 3 });
    });
    afterEach(async () => server.close());

    it("creates through the async operation, reads what it made at the item path, refreshes and deletes", async () => {
        const provider = providerFor();
        const inputs = await checked(provider, args(server.url, "gl1", "gl-token"));
        const { id, outs } = await provider.create(inputs);
        const [made] = server.datastores();
        assert.equal(id, "gl1", "the id is the natural key");
        const created = outs as AsyncResourceOutputs;
        assert.equal(created.resourceId, made?.id);
        assert.equal(created.tainted, false);
        assert.equal((created.resource as { capacityInBytes?: number }).capacityInBytes, 16 * GIB);
        assert.ok(
            server
                .requests()
                .some((r) => r.method === "GET" && r.path.startsWith("/data-services/v1beta1/async-operations/")),
            "followed its async operation",
        );

        const read = await provider.read(id, created);
        assert.equal((read.props as AsyncResourceOutputs).resourceId, made?.id);

        await provider.delete(id, created);
        assert.equal(server.datastores().length, 0, "the API no longer has it");
        assert.ok(
            server.requests().every((r) => r.status !== 401),
            "every request carried the token",
        );
    });

    it("a create of unknown outcome is resumed by its token: one datastore; one not recorded at all is refused, naming adopt", async () => {
        const provider = providerFor();
        const inputs = await checked(provider, args(server.url, "gl2", "resumed-token"));
        // The answer to the first POST is lost every time: the create's outcome is unknown.
        server.addFault({ match: { method: "POST", path: DATASTORES_PATH }, times: 50, fault: { loseResponse: true } });
        const pending = await provider.create(inputs).then(
            () => assert.fail("the create succeeded"),
            (error: { properties?: AsyncResourceOutputs }) => error.properties as AsyncResourceOutputs,
        );
        assert.equal(pending.resourceId, undefined);
        assert.equal(pending.tainted, false);
        server.clearFaults();
        const resumed = await provider.update("gl2", pending, inputs);
        assert.equal((resumed.outs as AsyncResourceOutputs).resourceId, server.datastores()[0]?.id);
        assert.equal(server.datastores().length, 1, "no duplicate");
        // Nothing recorded (a killed up): an API that may hold two resources with one name gets no
        // second POST; the program is told to adopt it.
        const refused = await providerFor()
            .create(inputs)
            .then(
                () => assert.fail("the create succeeded"),
                (error: Error) => error,
            );
        assert.match(refused.message, /"gl2" at .* already exists .* set `adopt: true`/);
        assert.equal(server.datastores().length, 1, "no duplicate");
    });
});
