// tasks.AsyncResource through the real dynamic-provider process (programs run by the harness, which
// follows the engine's step rules and keeps state between runs), against each dialect's server: both
// orders of replacement, refresh after a deletion outside Pulumi and after a change made outside it,
// adopt, untaint, a failed operation replaced by the next up, and a create whose answer is lost
// resolved by the next up. Zero duplicates and zero zombies
// are counted on each server; the token never reaches the state.

import { strict as assert } from "node:assert";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { tasks } from "pulumi-lifecycle";
import type { DialectServer } from "../dialects/servers/kit";
import { scriptedFaults, scriptedOperations } from "../dialects/servers/kit";
import { Harness, type RunResult } from "../harness/harness";
import { makeProject, type TempDir } from "../support/projects";
import { FIXTURES, TOKEN_ENV, WIDGETS_TOKEN } from "../tasks/asyncResource/dialectFixtures";

function callsOf(result: RunResult): string[] {
    return result.calls.map((call) => `${call.method}${call.outcome === "ok" ? "" : ` (${call.outcome})`}`);
}

for (const fixture of FIXTURES) {
    describe(`tasks.AsyncResource, ${fixture.dialect} dialect: seed 003 flows through the provider process`, () => {
        let server: DialectServer;
        let project: TempDir;
        let harness: Harness;

        /** A program of one widget `name` of `size` (with a stable create token where the API has them). */
        const program =
            (name: string, size: number, extra: Record<string, unknown> = {}) =>
            () => {
                const args = fixture.args(server.url, name, size);
                const token = fixture.replaysCreate ? { createToken: "5b3c0d2e-0000-4000-8000-0000000000aa" } : {};
                const widget = new tasks.AsyncResource("widget", {
                    ...args,
                    ...token,
                    ...extra,
                } as unknown as tasks.AsyncResourceArgs);
                return { resourceId: widget.resourceId, tainted: widget.tainted };
            };
        const widgetState = (result: RunResult) => result.state.resources.find((r) => r.name === "widget");
        const start = async (options: Parameters<typeof fixture.start>[0] = {}) => {
            server = await fixture.start(options);
        };

        beforeEach(async () => {
            project = await makeProject("async-flows");
            harness = new Harness({
                projectDir: project.dir,
                stateFile: join(project.dir, "state.json"),
                env: { [TOKEN_ENV]: WIDGETS_TOKEN, TASK_POLL_INITIAL_MS: "2", TASK_POLL_MAX_MS: "10", ...fixture.env },
            });
        });
        afterEach(async () => {
            const state = await readFile(join(project.dir, "state.json"), "utf8").catch(() => "");
            assert.ok(!state.includes(WIDGETS_TOKEN), "the API token is never stored");
            await server?.close();
            await project.cleanup();
        });

        it("replaces both ways: a new natural key creates first; a replaceOnChanges field keeps the key and deletes first", async () => {
            await start();
            assert.ok((await harness.up({ program: program("w1", 3) })).ok);
            const renamed = await harness.up({ program: program("w2", 3) });
            assert.ok(renamed.ok, renamed.plan);
            assert.deepEqual(callsOf(renamed), ["Check", "Diff", "Check", "Create", "Delete"], "create before delete");
            assert.deepEqual(
                server.resources().map((r) => fixture.nameOf(r)),
                ["w2"],
            );

            const guarded = await harness.up({ program: program("w2", 3, { replaceOnChanges: ["guard"] }) });
            assert.ok(guarded.ok, guarded.plan);
            const body = fixture.args(server.url, "w2", 3).body as Record<string, unknown>;
            const sizeField = Object.keys(body).find(
                (name) => name !== "displayName" && name !== "name" && name !== "Name" && name !== "location",
            ) as string;
            const resized = await harness.up({ program: program("w2", 9, { replaceOnChanges: [sizeField] }) });
            assert.ok(resized.ok, resized.plan);
            assert.deepEqual(
                callsOf(resized),
                ["Check", "Diff", "Check", "Delete", "Create"],
                "the key stays: delete first",
            );
            assert.equal(server.counts().live, 1);
            assert.equal(server.counts().duplicates, 0);
            assert.ok((await harness.destroy()).ok);
            assert.equal(server.counts().live, 0);
        });

        it("refresh forgets a resource deleted outside Pulumi; the next up creates it again", async () => {
            await start();
            assert.ok((await harness.up({ program: program("w1", 3) })).ok);
            const [made] = server.resources();
            server.remove(String(made?.id ?? fixture.nameOf(made as Record<string, unknown>)));
            const refreshed = await harness.refresh();
            assert.ok(refreshed.ok, refreshed.plan);
            assert.equal(widgetState(refreshed), undefined);
            const again = await harness.up({ program: program("w1", 3) });
            assert.ok(again.ok, again.plan);
            assert.deepEqual(callsOf(again), ["Check", "Create"]);
            assert.equal(server.counts().live, 1);
        });

        it("a failed create is tainted partial state with the API's reason; the next up replaces it", async () => {
            await start({ operations: scriptedOperations({ kind: "create", outcome: "failed" }) });
            const failed = await harness.up({ program: program("w1", 3) });
            assert.equal(failed.ok, false);
            assert.deepEqual(callsOf(failed), ["Check", "Create (partial)"]);
            assert.equal(widgetState(failed)?.outputs.tainted, true);
            const replaced = await harness.up({ program: program("w1", 3) });
            assert.ok(replaced.ok, replaced.plan);
            assert.equal(widgetState(replaced)?.outputs.tainted, false);
            assert.equal(server.counts().duplicates, 0);
            assert.ok(server.counts().live <= 1, "what the failed create left was replaced, not kept beside");
            assert.ok((await harness.destroy()).ok);
            assert.equal(server.counts().live, 0, "no zombie");
        });

        it("refresh records a change made outside Pulumi; the next up sends the program's body back", async () => {
            await start();
            assert.ok((await harness.up({ program: program("w1", 3) })).ok);
            const [made] = server.resources();
            const id = String(made?.id ?? fixture.nameOf(made as Record<string, unknown>));
            server.mutate(id, fixture.drift(7));
            const refreshed = await harness.refresh();
            assert.ok(refreshed.ok, refreshed.plan);
            assert.match(JSON.stringify(widgetState(refreshed)?.outputs.body), /7/, "the drift is recorded");
            const restored = await harness.up({ program: program("w1", 3) });
            assert.ok(restored.ok, restored.plan);
            assert.deepEqual(callsOf(restored), ["Check", "Diff", "Update"]);
            assert.equal(
                fixture.sizeOf(server.resources()[0] as Record<string, unknown>),
                3,
                "the program's body is back",
            );
            assert.equal(server.counts().live, 1);
        });

        it("a resource made by another program is refused, saying adopt; with adopt: true it is taken over, never doubled", async () => {
            await start();
            assert.ok((await harness.up({ program: program("w1", 3) })).ok);
            const other = await makeProject("async-flows-other");
            try {
                const second = new Harness({
                    projectDir: other.dir,
                    stateFile: join(other.dir, "state.json"),
                    env: {
                        [TOKEN_ENV]: WIDGETS_TOKEN,
                        TASK_POLL_INITIAL_MS: "2",
                        TASK_POLL_MAX_MS: "10",
                        ...fixture.env,
                    },
                });
                const foreign = { createToken: "0c9e3f00-0000-4000-8000-0000000000bb" };
                const refused = await second.up({ program: program("w1", 3, foreign) });
                assert.equal(refused.ok, false);
                assert.match(refused.plan, /already exists .* set `adopt: true`/);
                assert.equal(server.counts().live, 1, "nothing made");
                const adopted = await second.up({ program: program("w1", 3, { ...foreign, adopt: true }) });
                assert.ok(adopted.ok, adopted.plan);
                assert.equal(server.counts().live, 1);
                assert.equal(server.counts().duplicates, 0);
            } finally {
                await other.cleanup();
            }
        });

        it("untaint keeps what a failed create left (or creates it again when it left nothing): no replacement", async () => {
            await start({ operations: scriptedOperations({ kind: "create", outcome: "failed" }) });
            const failed = await harness.up({ program: program("w1", 3) });
            assert.equal(widgetState(failed)?.outputs.tainted, true);
            const kept = await harness.up({ program: program("w1", 3, { untaint: true }) });
            assert.ok(kept.ok, kept.plan);
            assert.ok(!callsOf(kept).includes("Delete"), `not replaced: ${callsOf(kept).join(", ")}`);
            assert.equal(widgetState(kept)?.outputs.tainted, false);
            assert.ok(widgetState(kept)?.outputs.resourceId);
            assert.equal(server.counts().live, 1);
            assert.equal(server.counts().duplicates, 0);
        });

        it("a create whose answers are lost: healed by the client's retries, or partial state (not tainted) that the next up resolves to the one resource", async () => {
            // Six lost answers: all the client's attempts at a create where the retry is a create again.
            await start({
                faults: scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" }, times: 6 }]),
            });
            const lost = await harness.up({ program: program("w1", 3) });
            if (!lost.ok) {
                assert.deepEqual(callsOf(lost), ["Check", "Create (partial)"]);
                assert.equal(widgetState(lost)?.outputs.tainted, false);
                assert.match(String(widgetState(lost)?.initErrors), /outcome is unknown/);
                const resolved = await harness.up({ program: program("w1", 3) });
                assert.ok(resolved.ok, resolved.plan);
            }
            assert.ok((await harness.state()).resources.find((r) => r.name === "widget")?.outputs.resourceId);
            assert.equal(server.counts().live, 1);
            assert.equal(server.counts().duplicates, 0);
            assert.ok((await harness.destroy()).ok);
            assert.equal(server.counts().live, 0);
        });
    });
}
