// tasks.AsyncResource's provider against each dialect's server (written from the API's public contract,
// not from our client), in-process so each scenario is fast: every scenario of seed 003 in each
// dialect, with zero duplicates and zero strays counted on the server itself. The real-CLI suite runs
// the same resources through `pulumi up`; this one covers the scenario matrix.

import { strict as assert } from "node:assert";
import type { AsyncResourceProvider } from "../../../provider/tasks/asyncResourceProvider";
import type { AsyncResourceInputs, AsyncResourceOutputs } from "../../../provider/tasks/asyncResourceSchema";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { ResourceExistsError } from "../../../provider/tasks/errors/resourceExistsError";
import { type DialectServer, randomFaults, scriptedFaults, scriptedOperations } from "../../dialects/servers/kit";
import { checked, FIXTURES, processOnFakeTime } from "./dialectFixtures";

/** A create that must succeed, with its outputs. */
async function create(provider: AsyncResourceProvider, inputs: AsyncResourceInputs) {
    const result = await provider.create(inputs);
    return { id: result.id, outs: result.outs as AsyncResourceOutputs };
}

/** The state a failed operation asked the engine to record. */
async function partial(work: Promise<unknown>): Promise<{ error: PartialStateError; outs: AsyncResourceOutputs }> {
    const error = await work.then(
        () => assert.fail("the operation succeeded"),
        (caught: unknown) => caught,
    );
    assert.ok(error instanceof PartialStateError, `a PartialStateError, not ${String(error)}`);
    return { error, outs: error.properties as unknown as AsyncResourceOutputs };
}

function assertClean(server: DialectServer, live: number): void {
    const counts = server.counts();
    assert.equal(counts.duplicates, 0, "no duplicates on the server");
    assert.equal(counts.live, live, "the server's live resources");
    assert.equal(counts.requestsOutsideApi, 0, "no request strayed off the API");
    assert.equal(counts.unauthorized, 0, "every request carried the token");
}

for (const fixture of FIXTURES) {
    describe(`tasks.AsyncResource, ${fixture.dialect} dialect: the lifecycle against its server`, () => {
        let server: DialectServer;
        afterEach(async () => server?.close());

        it("creates, reads, updates in place, refreshes drift and deletes (confirmed gone)", async () => {
            server = await fixture.start();
            const { provider, reports } = processOnFakeTime({ env: fixture.env });
            const inputs = await checked(provider, fixture.args(server.url, "w1", 3));
            const created = await create(provider, inputs);
            assert.equal(created.id, "w1");
            assert.ok(created.outs.resourceId);
            assert.equal(created.outs.tainted, false);
            assert.equal(fixture.sizeOf(server.resources()[0] as Record<string, unknown>), 3);
            assert.ok(reports.length > 0 || server.counts().requests > 0);

            const read = await provider.read(created.id, created.outs);
            assert.equal(read.id, "w1");
            assert.equal(fixture.sizeOf(read.props?.resource as Record<string, unknown>), 3);

            const news = await checked(provider, fixture.args(server.url, "w1", 5));
            const diff = await provider.diff(created.id, created.outs, news);
            assert.deepEqual([diff.changes, diff.replaces], [true, []], "a size change updates in place");
            const updated = await provider.update(created.id, created.outs, news);
            assert.equal(fixture.sizeOf(server.resources()[0] as Record<string, unknown>), 5);
            assert.equal(fixture.sizeOf(updated.outs?.resource as Record<string, unknown>), 5);

            const renamed = await checked(provider, fixture.args(server.url, "w2", 5));
            assert.ok(
                (await provider.diff(created.id, updated.outs as AsyncResourceOutputs, renamed)).replaces?.length,
            );

            await provider.delete(created.id, updated.outs as AsyncResourceOutputs);
            assertClean(server, 0);
            const gone = await provider.read(created.id, updated.outs as AsyncResourceOutputs);
            assert.deepEqual(gone, {}, "refresh forgets what the API no longer has");
        });

        it("a failed create is tainted partial state holding what exists; untaint finds it, or creates it again", async () => {
            server = await fixture.start({ operations: scriptedOperations({ kind: "create", outcome: "failed" }) });
            const { provider } = processOnFakeTime({ env: fixture.env });
            const inputs = await checked(provider, fixture.args(server.url, "w1", 3));
            const { outs, error } = await partial(provider.create(inputs));
            assert.equal(outs.tainted, true);
            assert.match(error.message, /replaces it/);
            assert.ok((await provider.diff("w1", outs, inputs)).replaces?.includes("tainted"));
            const untainted = { ...inputs, untaint: true };
            const kept = await provider.update("w1", outs, untainted);
            assert.equal(kept.outs?.tainted, false);
            assert.ok(kept.outs?.resourceId);
            assertClean(server, 1);
        });

        it("an answer lost on the way back leaves a pending create; the next up finds it: one resource", async () => {
            server = await fixture.start({
                faults: scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" }, times: 6 }]),
            });
            const { provider } = processOnFakeTime({ env: fixture.env });
            const inputs = await checked(provider, {
                ...fixture.args(server.url, "w1", 3),
                createToken: "7d1f0c3e-0000-4000-8000-00000000000a",
            });
            const first = await create(provider, inputs).then(
                (result) => ({ done: result.outs }),
                (error: unknown) => ({ error }),
            );
            if ("error" in first) {
                assert.ok(first.error instanceof PartialStateError, String(first.error));
                const outs = first.error.properties as unknown as AsyncResourceOutputs;
                assert.equal(outs.tainted, false, "an unknown outcome is not a failure");
                const resumed = await provider.update("w1", outs, inputs);
                assert.ok(resumed.outs?.resourceId);
            } else {
                assert.ok(first.done.resourceId, "a create retried after lost answers replays to one resource");
            }
            assertClean(server, 1);
        });

        it("Ctrl-C while the operation runs: partial state with its handle; the next up follows it to its end", async () => {
            server = await fixture.start({ operations: scriptedOperations({ kind: "create", pollsToFinish: 4 }) });
            const interrupted = processOnFakeTime({
                env: fixture.env,
                onWait: (count) => count === 2 && interrupted.controller.abort(new Error("cancelled (Ctrl-C)")),
            });
            const inputs = await checked(interrupted.provider, fixture.args(server.url, "w1", 3));
            const { outs, error } = await partial(interrupted.provider.create(inputs));
            assert.equal(outs.tainted, false);
            assert.match(error.message, /follows it to its end/);
            if (fixture.dialect !== "azure-arm" || outs.operation)
                assert.ok(outs.operation?.ref, "the handle is recorded");
            const next = processOnFakeTime({ env: fixture.env });
            const resumed = await next.provider.update("w1", outs, inputs);
            assert.ok(resumed.outs?.resourceId);
            assert.equal(resumed.outs?.operation, undefined);
            assertClean(server, 1);
        });

        it("a resource made outside the stack is refused without adopt, and taken over with it", async () => {
            server = await fixture.start();
            const outsider = processOnFakeTime({ env: fixture.env });
            await outsider.provider.create(await checked(outsider.provider, fixture.args(server.url, "w1", 3)));
            const { provider } = processOnFakeTime({ env: fixture.env });
            const inputs = await checked(provider, fixture.args(server.url, "w1", 4));
            await assert.rejects(
                provider.create(inputs),
                (error: unknown) => error instanceof ResourceExistsError && /adopt: true/.test(error.message),
            );
            const adopted = await create(provider, { ...inputs, adopt: true });
            assert.ok(adopted.outs.resourceId);
            assert.equal(
                fixture.sizeOf(server.resources()[0] as Record<string, unknown>),
                4,
                "adopting sends the program's body",
            );
            assertClean(server, 1);
        });

        it("a canceled create is tainted like a failed one; the next up replaces it, one resource at most", async () => {
            server = await fixture.start({ operations: scriptedOperations({ kind: "create", outcome: "canceled" }) });
            const { provider } = processOnFakeTime({ env: fixture.env });
            const inputs = await checked(provider, fixture.args(server.url, "w1", 3));
            const { outs, error } = await partial(provider.create(inputs));
            assert.equal(outs.tainted, true);
            assert.match(error.message, /canceled/i);
            await provider.delete("w1", outs);
            const fresh = await create(provider, inputs);
            assert.ok(fresh.outs.resourceId);
            assertClean(server, 1);
        });

        it("a result that arrives late (the read after success still shows the old state) is waited out, never recorded wrong", async () => {
            server = await fixture.start({
                operations: scriptedOperations(
                    { kind: "create", resultLate: true },
                    { kind: "update", resultLate: true },
                ),
            });
            const { provider } = processOnFakeTime({ env: fixture.env });
            const created = await create(provider, await checked(provider, fixture.args(server.url, "w1", 3)));
            assert.ok(created.outs.resourceId);
            const news = await checked(provider, fixture.args(server.url, "w1", 8));
            const updated = await provider.update("w1", created.outs, news);
            assert.equal(fixture.sizeOf(server.resources()[0] as Record<string, unknown>), 8);
            const read = await provider.read("w1", updated.outs as AsyncResourceOutputs);
            assert.equal(fixture.sizeOf(read.props?.resource as Record<string, unknown>), 8);
            assertClean(server, 1);
        });

        // Only the generic server lets time pass for an operation nobody polls (each request it turns away
        // 409 is a step, as its contract says); the others advance an operation only when it is polled.
        if (fixture.dialect === "generic")
            it("an update while an operation an interrupted up left runs on the resource waits for it, then sends the body", async () => {
                server = await fixture.start({ operations: scriptedOperations({ kind: "update", pollsToFinish: 6 }) });
                const { provider } = processOnFakeTime({ env: fixture.env });
                const created = await create(provider, await checked(provider, fixture.args(server.url, "w1", 3)));
                // An up killed while its update ran: the engine kept the state from before it.
                const killed = processOnFakeTime({
                    env: fixture.env,
                    onWait: (count) => count === 1 && killed.controller.abort(new Error("killed")),
                });
                await killed.provider
                    .update("w1", created.outs, await checked(killed.provider, fixture.args(server.url, "w1", 5)))
                    .catch(() => undefined);
                const next = processOnFakeTime({ env: fixture.env });
                const updated = await next.provider.update(
                    "w1",
                    created.outs,
                    await checked(next.provider, fixture.args(server.url, "w1", 9)),
                );
                assert.equal(fixture.sizeOf(updated.outs?.resource as Record<string, unknown>), 9);
                assert.equal(fixture.sizeOf(server.resources()[0] as Record<string, unknown>), 9);
                assertClean(server, 1);
            });

        it("30% of requests throttled: create, update and delete still end well, within the deadline", async () => {
            server = await fixture.start({ faults: randomFaults({ seed: 19, rate: 0.3, kinds: ["throttle"] }) });
            const { provider } = processOnFakeTime({ env: fixture.env });
            const inputs = await checked(provider, fixture.args(server.url, "w1", 3));
            const created = await create(provider, inputs);
            const news = await checked(provider, fixture.args(server.url, "w1", 6));
            const updated = await provider.update("w1", created.outs, news);
            assert.equal(fixture.sizeOf(server.resources()[0] as Record<string, unknown>), 6);
            await provider.delete("w1", updated.outs as AsyncResourceOutputs);
            assertClean(server, 0);
            assert.ok(server.counts().faultsInjected > 0);
        });
    });
}
