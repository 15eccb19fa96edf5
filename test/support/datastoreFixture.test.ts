// Guards startTaskApiServerOn, which the Datastore flows use so that a suite's tests keep one provider
// process: a new server takes the previous one's port when it is free, so the URL the process was
// configured with reaches it; and when another socket holds that port it starts anyway, on a new one,
// instead of failing the test (a URL that changed only costs a new provider process).

import { strict as assert } from "node:assert";
import { once } from "node:events";
import { createServer } from "node:net";
import { startTaskApiServerOn, TOKEN } from "./datastoreFixture";

describe("startTaskApiServerOn: a suite's servers on one port", () => {
    it("takes the previous server's port once it is closed, and answers there", async () => {
        const first = await startTaskApiServerOn(undefined, { token: TOKEN });
        await first.close();
        const second = await startTaskApiServerOn(first.port, { token: TOKEN });
        try {
            assert.equal(second.port, first.port);
            assert.equal(second.url, first.url);
            const answer = await fetch(`${second.url}/no-such-path`, { headers: { authorization: `Bearer ${TOKEN}` } });
            assert.equal(answer.status, 404);
        } finally {
            await second.close();
        }
    });

    it("starts on another port when something else holds that one", async () => {
        const holder = createServer();
        holder.listen(0, "127.0.0.1");
        await once(holder, "listening");
        const taken = (holder.address() as { port: number }).port;
        try {
            const server = await startTaskApiServerOn(taken, { token: TOKEN });
            try {
                assert.notEqual(server.port, taken);
                assert.ok(server.port > 0);
            } finally {
                await server.close();
            }
        } finally {
            holder.close();
        }
    });
});
