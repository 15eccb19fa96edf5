// An ARM resource whose own record says its provisioning failed (`provisioningState: Failed`, found by
// a refresh) is recorded tainted, so the next up replaces it; with `untaint: true` its body is sent
// again, the idempotent PUT by which ARM retries a failed provisioning, and it is kept. Against the
// Azure Resource Manager server of test/dialects/servers, written from the public contract.

import { strict as assert } from "node:assert";
import type { AsyncResourceInputs, AsyncResourceOutputs } from "../../../provider/tasks/asyncResourceSchema";
import { diffAsyncResource } from "../../../provider/tasks/logic/asyncState";
import type { DialectServer } from "../../dialects/servers/kit";
import { FIXTURES, providerOnFakeTime } from "./dialectFixtures";

const arm = FIXTURES.find((fixture) => fixture.dialect === "azure-arm");

describe("tasks.AsyncResource, azure-arm: a resource whose provisioningState is Failed", () => {
    let server: DialectServer;
    afterEach(async () => server?.close());

    it("refresh records it tainted (the next diff replaces it); untaint sends its body again and keeps it", async () => {
        assert.ok(arm);
        server = await arm.start();
        const provider = providerOnFakeTime();
        const { inputs } = await provider.check(
            {} as AsyncResourceInputs,
            arm.args(server.url, "w1", 3) as unknown as AsyncResourceInputs,
        );
        const { id, outs } = await provider.create(inputs as AsyncResourceInputs);
        const [made] = server.resources();
        server.mutate(String(made?.id), { properties: { provisioningState: "Failed" } });

        const refreshed = (await provider.read(id, outs as AsyncResourceOutputs)).props as AsyncResourceOutputs;
        assert.equal(refreshed.tainted, true);
        assert.match(
            String(refreshed.taintReason),
            /provisioningState is Failed at the API; the next `pulumi up` replaces it/,
        );
        const diff = diffAsyncResource(refreshed, inputs as AsyncResourceInputs);
        assert.ok(diff.replaces.length > 0, "a replacement, unless the program keeps it");

        const kept = await provider.update(id, refreshed, { ...(inputs as AsyncResourceInputs), untaint: true });
        const after = kept.outs as AsyncResourceOutputs;
        assert.equal(after.tainted, false);
        assert.equal(after.resourceId, refreshed.resourceId, "the same resource, not another");
        const [healed] = server.resources() as { properties?: { provisioningState?: string } }[];
        assert.equal(healed?.properties?.provisioningState, "Succeeded", "the PUT retried its provisioning");
        assert.equal(server.counts().live, 1);
        assert.equal(server.counts().duplicates, 0);
    });
});
