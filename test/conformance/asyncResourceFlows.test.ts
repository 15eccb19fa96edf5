// tasks.AsyncResource through the real dynamic-provider process (programs run by the harness, which
// follows the engine's step rules and keeps state between runs), against every dialect's server at once:
// each program declares one widget per dialect, so each run is one provider process serving all of them,
// as a program talking to several APIs is. Both orders of replacement, refresh after a deletion outside
// Pulumi and after a change made outside it, adopt, untaint, a failed operation replaced by the next up,
// and a create whose answer is lost resolved by the next up. Every assertion names its dialect. Zero
// duplicates and zero zombies are counted on each server; the token never reaches the state.

import { strict as assert } from "node:assert";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { tasks } from "pulumi-lifecycle";
import type { DialectServer, FaultPlan, OperationPlan } from "../dialects/servers/kit";
import { scriptedFaults, scriptedOperations } from "../dialects/servers/kit";
import { Harness, type RunResult } from "../harness/harness";
import { makeProject, resetProject, type TempDir } from "../support/projects";
import { type DialectFixture, FIXTURES, TOKEN_ENV, WIDGETS_TOKEN } from "../tasks/asyncResource/dialectFixtures";

/** The engine's name of the widget on `fixture`'s server. */
const widgetOf = (fixture: DialectFixture) => `widget-${fixture.dialect}`;

/** The provider calls a run made for `fixture`'s widget, as `Create (partial)`. */
function callsOf(result: RunResult, fixture: DialectFixture): string[] {
    return result.calls
        .filter((call) => call.name === widgetOf(fixture))
        .map((call) => `${call.method}${call.outcome === "ok" ? "" : ` (${call.outcome})`}`);
}

/** The provider process's environment: the token, fast polls and every dialect's credentials. */
const ENV = Object.assign(
    { [TOKEN_ENV]: WIDGETS_TOKEN, TASK_POLL_INITIAL_MS: "2", TASK_POLL_MAX_MS: "10" },
    ...FIXTURES.map((fixture) => fixture.env ?? {}),
) as Record<string, string>;

describe("tasks.AsyncResource on every dialect at once: seed 003 flows through the provider process", () => {
    const servers = new Map<DialectFixture, DialectServer>();
    let project: TempDir;
    let harness: Harness;

    const serverOf = (fixture: DialectFixture) => servers.get(fixture) as DialectServer;
    /** A program of one widget per dialect, `name` of `size` (with a stable create token where the API has them). */
    const program =
        (name: string, size: number, extra: Record<string, unknown> = {}) =>
        () => {
            for (const fixture of FIXTURES) {
                const token = fixture.replaysCreate ? { createToken: "5b3c0d2e-0000-4000-8000-0000000000aa" } : {};
                new tasks.AsyncResource(widgetOf(fixture), {
                    ...fixture.args(serverOf(fixture).url, name, size),
                    ...token,
                    ...extra,
                } as unknown as tasks.AsyncResourceArgs);
            }
        };
    const widgetState = (result: RunResult, fixture: DialectFixture) =>
        result.state.resources.find((r) => r.name === widgetOf(fixture));
    /** Starts every dialect's server; `plans` makes each its own fault and operation plans (they keep count). */
    const start = async (plans: () => { faults?: FaultPlan; operations?: OperationPlan } = () => ({})) => {
        for (const fixture of FIXTURES) servers.set(fixture, await fixture.start(plans()));
    };
    const idOf = (fixture: DialectFixture, record: Record<string, unknown> | undefined) =>
        String(record?.id ?? fixture.nameOf(record as Record<string, unknown>));

    // One project for the suite, reset after each test: the runs of consecutive tests then
    // share the provider process the harness parks (the servers' URLs are inputs, not provider config).
    before(async () => {
        project = await makeProject("async-flows");
    });
    after(() => project?.cleanup());
    beforeEach(() => {
        harness = new Harness({ projectDir: project.dir, stateFile: join(project.dir, "state.json"), env: ENV });
    });
    afterEach(async () => {
        const state = await readFile(join(project.dir, "state.json"), "utf8").catch(() => "");
        assert.ok(!state.includes(WIDGETS_TOKEN), "the API token is never stored");
        for (const server of servers.values()) await server.close();
        servers.clear();
        await resetProject(project);
    });

    it("replaces both ways: a new natural key creates first; a replaceOnChanges field keeps the key and deletes first", async () => {
        await start();
        assert.ok((await harness.up({ program: program("w1", 3) })).ok);
        const renamed = await harness.up({ program: program("w2", 3) });
        assert.ok(renamed.ok, renamed.plan);
        for (const fixture of FIXTURES) {
            const calls = callsOf(renamed, fixture);
            assert.deepEqual(calls, ["Check", "Diff", "Check", "Create", "Delete"], `${fixture.dialect}: create first`);
            assert.deepEqual(
                serverOf(fixture)
                    .resources()
                    .map((r) => fixture.nameOf(r)),
                ["w2"],
                fixture.dialect,
            );
        }

        assert.ok((await harness.up({ program: program("w2", 3, { replaceOnChanges: ["guard"] }) })).ok);
        // Each dialect names its size field differently: replace on a change of that field, in its program.
        const resizing = () => {
            for (const fixture of FIXTURES) {
                const body = fixture.args(serverOf(fixture).url, "w2", 9).body as Record<string, unknown>;
                const sizeField = Object.keys(body).find(
                    (name) => name !== "displayName" && name !== "name" && name !== "Name" && name !== "location",
                ) as string;
                new tasks.AsyncResource(widgetOf(fixture), {
                    ...fixture.args(serverOf(fixture).url, "w2", 9),
                    ...(fixture.replaysCreate ? { createToken: "5b3c0d2e-0000-4000-8000-0000000000aa" } : {}),
                    replaceOnChanges: [sizeField],
                } as unknown as tasks.AsyncResourceArgs);
            }
        };
        const resized = await harness.up({ program: resizing });
        assert.ok(resized.ok, resized.plan);
        for (const fixture of FIXTURES) {
            const calls = callsOf(resized, fixture);
            assert.deepEqual(calls, ["Check", "Diff", "Check", "Delete", "Create"], `${fixture.dialect}: delete first`);
            assert.equal(serverOf(fixture).counts().live, 1, fixture.dialect);
            assert.equal(serverOf(fixture).counts().duplicates, 0, fixture.dialect);
        }
        assert.ok((await harness.destroy()).ok);
        for (const fixture of FIXTURES) assert.equal(serverOf(fixture).counts().live, 0, fixture.dialect);
    });

    it("refresh forgets a resource deleted outside Pulumi; the next up creates it again", async () => {
        await start();
        assert.ok((await harness.up({ program: program("w1", 3) })).ok);
        for (const fixture of FIXTURES) {
            const [made] = serverOf(fixture).resources();
            serverOf(fixture).remove(idOf(fixture, made));
        }
        const refreshed = await harness.refresh();
        assert.ok(refreshed.ok, refreshed.plan);
        for (const fixture of FIXTURES) assert.equal(widgetState(refreshed, fixture), undefined, fixture.dialect);
        const again = await harness.up({ program: program("w1", 3) });
        assert.ok(again.ok, again.plan);
        for (const fixture of FIXTURES) {
            assert.deepEqual(callsOf(again, fixture), ["Check", "Create"], fixture.dialect);
            assert.equal(serverOf(fixture).counts().live, 1, fixture.dialect);
        }
    });

    it("a failed create is tainted partial state with the API's reason; the next up replaces it", async () => {
        await start(() => ({ operations: scriptedOperations({ kind: "create", outcome: "failed" }) }));
        const failed = await harness.up({ program: program("w1", 3), continueOnError: true });
        assert.equal(failed.ok, false);
        for (const fixture of FIXTURES) {
            assert.deepEqual(callsOf(failed, fixture), ["Check", "Create (partial)"], fixture.dialect);
            assert.equal(widgetState(failed, fixture)?.outputs.tainted, true, fixture.dialect);
        }
        const replaced = await harness.up({ program: program("w1", 3) });
        assert.ok(replaced.ok, replaced.plan);
        for (const fixture of FIXTURES) {
            assert.equal(widgetState(replaced, fixture)?.outputs.tainted, false, fixture.dialect);
            assert.equal(serverOf(fixture).counts().duplicates, 0, fixture.dialect);
            assert.ok(serverOf(fixture).counts().live <= 1, `${fixture.dialect}: replaced, not kept beside`);
        }
        assert.ok((await harness.destroy()).ok);
        for (const fixture of FIXTURES)
            assert.equal(serverOf(fixture).counts().live, 0, `${fixture.dialect}: no zombie`);
    });

    it("refresh records a change made outside Pulumi; the next up sends the program's body back", async () => {
        await start();
        assert.ok((await harness.up({ program: program("w1", 3) })).ok);
        for (const fixture of FIXTURES) {
            const [made] = serverOf(fixture).resources();
            serverOf(fixture).mutate(idOf(fixture, made), fixture.drift(7));
        }
        const refreshed = await harness.refresh();
        assert.ok(refreshed.ok, refreshed.plan);
        for (const fixture of FIXTURES) {
            const body = JSON.stringify(widgetState(refreshed, fixture)?.outputs.body);
            assert.match(body, /7/, `${fixture.dialect}: the drift is recorded`);
        }
        const restored = await harness.up({ program: program("w1", 3) });
        assert.ok(restored.ok, restored.plan);
        for (const fixture of FIXTURES) {
            assert.deepEqual(callsOf(restored, fixture), ["Check", "Diff", "Update"], fixture.dialect);
            const [record] = serverOf(fixture).resources();
            assert.equal(fixture.sizeOf(record as Record<string, unknown>), 3, `${fixture.dialect}: the body is back`);
            assert.equal(serverOf(fixture).counts().live, 1, fixture.dialect);
        }
    });

    it("a resource made by another program is refused, saying adopt; with adopt: true it is taken over, never doubled", async () => {
        await start();
        assert.ok((await harness.up({ program: program("w1", 3) })).ok);
        const other = await makeProject("async-flows-other");
        try {
            const second = new Harness({ projectDir: other.dir, stateFile: join(other.dir, "state.json"), env: ENV });
            const foreign = { createToken: "0c9e3f00-0000-4000-8000-0000000000bb" };
            const refused = await second.up({ program: program("w1", 3, foreign), continueOnError: true });
            assert.equal(refused.ok, false);
            for (const fixture of FIXTURES) {
                const create = refused.calls.find(
                    (call) => call.name === widgetOf(fixture) && call.method === "Create",
                );
                assert.equal(create?.outcome, "failed", fixture.dialect);
                assert.match(create?.error ?? "", /already exists .* set `adopt: true`/, fixture.dialect);
                assert.equal(serverOf(fixture).counts().live, 1, `${fixture.dialect}: nothing made`);
            }
            const adopted = await second.up({ program: program("w1", 3, { ...foreign, adopt: true }) });
            assert.ok(adopted.ok, adopted.plan);
            for (const fixture of FIXTURES) {
                assert.equal(serverOf(fixture).counts().live, 1, fixture.dialect);
                assert.equal(serverOf(fixture).counts().duplicates, 0, fixture.dialect);
            }
        } finally {
            await other.cleanup();
        }
    });

    it("untaint keeps what a failed create left (or creates it again when it left nothing): no replacement", async () => {
        await start(() => ({ operations: scriptedOperations({ kind: "create", outcome: "failed" }) }));
        const failed = await harness.up({ program: program("w1", 3), continueOnError: true });
        for (const fixture of FIXTURES)
            assert.equal(widgetState(failed, fixture)?.outputs.tainted, true, fixture.dialect);
        const kept = await harness.up({ program: program("w1", 3, { untaint: true }) });
        assert.ok(kept.ok, kept.plan);
        for (const fixture of FIXTURES) {
            const calls = callsOf(kept, fixture);
            assert.ok(!calls.includes("Delete"), `${fixture.dialect}: not replaced: ${calls.join(", ")}`);
            assert.equal(widgetState(kept, fixture)?.outputs.tainted, false, fixture.dialect);
            assert.ok(widgetState(kept, fixture)?.outputs.resourceId, fixture.dialect);
            assert.equal(serverOf(fixture).counts().live, 1, fixture.dialect);
            assert.equal(serverOf(fixture).counts().duplicates, 0, fixture.dialect);
        }
    });

    it("a create whose answers are lost: healed by the client's retries, or partial state (not tainted) that the next up resolves to the one resource", async () => {
        // Six lost answers: all the client's attempts at a create where the retry is a create again.
        await start(() => ({
            faults: scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" }, times: 6 }]),
        }));
        const lost = await harness.up({ program: program("w1", 3), continueOnError: true });
        const unresolved = FIXTURES.filter((fixture) => callsOf(lost, fixture).includes("Create (partial)"));
        for (const fixture of unresolved) {
            assert.deepEqual(callsOf(lost, fixture), ["Check", "Create (partial)"], fixture.dialect);
            assert.equal(widgetState(lost, fixture)?.outputs.tainted, false, fixture.dialect);
            assert.match(String(widgetState(lost, fixture)?.initErrors), /outcome is unknown/, fixture.dialect);
        }
        assert.equal(lost.ok, unresolved.length === 0, lost.plan);
        if (unresolved.length > 0) {
            const resolved = await harness.up({ program: program("w1", 3) });
            assert.ok(resolved.ok, resolved.plan);
        }
        const { resources } = await harness.state();
        for (const fixture of FIXTURES) {
            assert.ok(resources.find((r) => r.name === widgetOf(fixture))?.outputs.resourceId, fixture.dialect);
            assert.equal(serverOf(fixture).counts().live, 1, fixture.dialect);
            assert.equal(serverOf(fixture).counts().duplicates, 0, fixture.dialect);
        }
        assert.ok((await harness.destroy()).ok);
        for (const fixture of FIXTURES) assert.equal(serverOf(fixture).counts().live, 0, fixture.dialect);
    });
});
