// tasks.AsyncResource on a Google API that names the resource itself (AIP-133 without `{resource}Id`):
// the id comes from the finished operation's `response.name` (its last segment, AIP-122), and the
// resource is found by its natural key in the collection's list, paged by nextPageToken (AIP-158).
// Against the Google AIP server of test/dialects/servers, written from the public contract.

import { strict as assert } from "node:assert";
import type { AsyncResourceProvider } from "../../../provider/tasks/asyncResourceProvider";
import type { AsyncResourceInputs, AsyncResourceOutputs } from "../../../provider/tasks/asyncResourceSchema";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { startGoogleAipServer } from "../../dialects/servers/googleAip";
import { type DialectServer, scriptedFaults } from "../../dialects/servers/kit";
import { providerOnFakeTime, TOKEN_ENV, WIDGETS_TOKEN } from "./dialectFixtures";

const COLLECTION = "/v1/projects/p1/locations/us-central1/widgets";

const providerFor = (): AsyncResourceProvider => providerOnFakeTime();

async function widget(provider: AsyncResourceProvider, url: string, name: string, size: number) {
    const given = {
        api: { url, dialect: "google", tokenEnv: TOKEN_ENV },
        collectionPath: COLLECTION,
        itemPath: `${COLLECTION}/{id}`,
        naturalKey: "displayName",
        // One widget a page, so a lookup must follow nextPageToken to find any but the first.
        lookup: { query: "pageSize=1" },
        body: { displayName: name, size },
        createToken: `5b3c0d2e-0000-4000-8000-00000000${name.padStart(4, "0")}`,
    };
    const { inputs, failures } = await provider.check(
        {} as AsyncResourceInputs,
        given as unknown as AsyncResourceInputs,
    );
    assert.deepEqual(failures, []);
    return inputs as AsyncResourceInputs;
}

describe("tasks.AsyncResource, google dialect, with names the server chooses", () => {
    let server: DialectServer;
    afterEach(async () => server?.close());

    it("takes the id from the operation's response.name; reads, updates and deletes it by that id", async () => {
        server = await startGoogleAipServer({ token: WIDGETS_TOKEN });
        const provider = providerFor();
        const inputs = await widget(provider, server.url, "alpha", 3);
        const { id, outs } = await provider.create(inputs);
        const created = outs as AsyncResourceOutputs;
        const [made] = server.resources();
        assert.equal(id, "alpha", "the Pulumi id is the natural key");
        assert.equal(`${COLLECTION.slice(4)}/${created.resourceId}`, made?.name, "the id the server chose");
        const resized = await provider.update(id, created, await widget(provider, server.url, "alpha", 5));
        assert.equal((resized.outs as AsyncResourceOutputs).resourceId, created.resourceId);
        assert.equal(server.resources()[0]?.size, 5);
        await provider.delete(id, resized.outs as AsyncResourceOutputs);
        assert.equal(server.counts().live, 0);
        assert.equal(server.counts().requestsOutsideApi, 0);
    });

    it("finds it on a later page by its natural key: a create of unknown outcome resumes onto it, no duplicate", async () => {
        server = await startGoogleAipServer({ token: WIDGETS_TOKEN });
        const provider = providerFor();
        for (const name of ["w1", "w2"]) await provider.create(await widget(provider, server.url, name, 1));
        // Every answer to the create is lost: its outcome is unknown, though the server made it.
        server.setFaults(scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" }, times: 10 }]));
        const inputs = await widget(provider, server.url, "w3", 1);
        const error = await provider.create(inputs).then(
            () => assert.fail("the create succeeded"),
            (caught: unknown) => caught,
        );
        assert.ok(error instanceof PartialStateError, String(error));
        const pending = error.properties as unknown as AsyncResourceOutputs;
        assert.equal(pending.resourceId, undefined);
        server.setFaults(scriptedFaults([]));
        const resumed = await provider.update("w3", pending, inputs);
        const third = server.resources().find((r) => r.displayName === "w3");
        assert.equal(`${COLLECTION.slice(4)}/${(resumed.outs as AsyncResourceOutputs).resourceId}`, third?.name);
        // Read back by a lookup alone (an import: no id on record): w3 is on page 3 of the list.
        const { resourceId: _, ...unrecorded } = resumed.outs as AsyncResourceOutputs;
        const read = await provider.read("w3", unrecorded as AsyncResourceOutputs);
        assert.equal(
            (read.props as AsyncResourceOutputs).resourceId,
            (resumed.outs as AsyncResourceOutputs).resourceId,
        );
        assert.equal(server.counts().live, 3);
        assert.equal(server.counts().duplicates, 0);
    });
});
