// A lookup by natural key reads every page of the list (issue 19: "lookup reads one page" was a gap):
// on an API that accepts two resources with one name, a create that missed the one on page 3 would
// make a duplicate. Pages follow the list answer's `nextLink` (or `lookup.next`), on the API's origin
// only, and a list that goes on past 50 pages is refused rather than read forever.

import { strict as assert } from "node:assert";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { AsyncResourceProvider } from "../../../provider/tasks/asyncResourceProvider";
import type { AsyncResourceInputs, AsyncResourceOutputs } from "../../../provider/tasks/asyncResourceSchema";
import { ResourceExistsError } from "../../../provider/tasks/errors/resourceExistsError";
import { TaskApiContractError } from "../../../provider/tasks/errors/taskApiContractError";
import { type GenericServer, startGenericServer } from "../../dialects/servers/generic";
import { providerOnFakeTime, TOKEN_ENV, WIDGETS_TOKEN } from "./dialectFixtures";

const providerFor = (): AsyncResourceProvider => providerOnFakeTime();

/** A widget found by listing the whole collection (no filter), as APIs without one are looked up. */
async function widget(provider: AsyncResourceProvider, url: string, name: string, next?: string) {
    const given = {
        api: { url, dialect: "generic", tokenEnv: TOKEN_ENV },
        collectionPath: "/widgets",
        itemPath: "/widgets/{id}",
        naturalKey: "name",
        idField: "id",
        ...(next ? { lookup: { next } } : {}),
        body: { name, size: 1 },
    };
    const { inputs, failures } = await provider.check(
        {} as AsyncResourceInputs,
        given as unknown as AsyncResourceInputs,
    );
    assert.deepEqual(failures, []);
    return inputs as AsyncResourceInputs;
}

describe("tasks.AsyncResource: a lookup reads every page of the list", () => {
    let server: GenericServer;
    afterEach(async () => server?.close());

    it("finds the resource on page 3: a create without state refuses it instead of making a duplicate", async () => {
        server = await startGenericServer({ token: WIDGETS_TOKEN, pageSize: 2, allowDuplicateNames: true });
        const provider = providerFor();
        let target: AsyncResourceOutputs | undefined;
        for (const name of ["w1", "w2", "w3", "w4", "w5", "target"]) {
            const { outs } = await provider.create(await widget(provider, server.url, name));
            if (name === "target") target = outs as AsyncResourceOutputs;
        }
        // The first page does not show it: only reading on (nextLink) finds it.
        const first = (await (
            await fetch(`${server.url}/widgets`, { headers: { authorization: `Bearer ${WIDGETS_TOKEN}` } })
        ).json()) as { items: { name: string }[]; nextLink?: string };
        assert.deepEqual(
            first.items.map((item) => item.name),
            ["w1", "w2"],
        );
        assert.equal(first.nextLink, "/widgets?page=1");
        // A create whose earlier up was killed before anything was recorded: the lookup must see page 3.
        const error = await providerFor()
            .create(await widget(provider, server.url, "target"))
            .then(
                () => assert.fail("the create succeeded"),
                (caught: unknown) => caught,
            );
        assert.ok(error instanceof ResourceExistsError, String(error));
        assert.equal(error.existingId, target?.resourceId);
        assert.equal(server.counts().duplicates, 0, "no second widget named target");
        // An import-like read (no id on record) finds it on page 3 too.
        const { resourceId: _, ...unrecorded } = target as AsyncResourceOutputs;
        const read = await provider.read("target", unrecorded as AsyncResourceOutputs);
        assert.equal((read.props as AsyncResourceOutputs).resourceId, target?.resourceId);
    });

    it("a list that goes on past 50 pages is refused, naming what to narrow", async () => {
        let lists = 0;
        const endless = createServer((request, response) => {
            lists++;
            response.writeHead(200, { "content-type": "application/json" });
            response.end(JSON.stringify({ items: [], links: { next: `/widgets?page=${lists}` } }));
            void request;
        });
        endless.listen(0, "127.0.0.1");
        await once(endless, "listening");
        try {
            const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
            const provider = providerFor();
            const inputs = await widget(provider, url, "w1", "links.next");
            const error = await provider.create(inputs).then(
                () => assert.fail("the create succeeded"),
                (caught: unknown) => caught,
            );
            assert.ok(error instanceof TaskApiContractError, String(error));
            assert.match(error.message, /goes on past 50 pages; narrow lookup\.query/);
            assert.equal(lists, 50, "50 pages read, no more, and nothing created");
        } finally {
            endless.close();
        }
    });
});
