// tasks.AsyncResource under the REAL Pulumi CLI: one program declaring a widget on each dialect's server
// (test/dialects/servers, written from each API's public contract), as a user's program that talks to
// several APIs at once does, so every operation below is one engine operation and one provider process
// serving every dialect together: a Ctrl-C while every create's operation runs and the up after it; an
// up killed outright (SIGKILL) mid-create and the up after it; refresh after a change made outside
// Pulumi, the preview that names it and the up that undoes it; destroy. Duplicates and zombies are
// counted on each server; the API token (a secret config key the program names) is looked for in the
// stored state and in everything the CLI printed.

import { strict as assert } from "node:assert";
import { type DialectServer, type HeldOperations, heldOperations } from "../dialects/servers/kit";
import { assertOk, CliProject, type CliRun, type ResourceSpec, type StateResource } from "../support/cliProject";
import { providersIn, until } from "../support/processes";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { type DialectFixture, FIXTURES, WIDGETS_TOKEN } from "../tasks/asyncResource/dialectFixtures";

const TOKEN_CONFIG = "widgets:token";
const ASYNC_RESOURCE = "pulumi-nodejs:dynamic/tasks:AsyncResource";

/** The engine's name of the widget `key` ("w1") on `fixture`'s server. */
const nameOn = (fixture: DialectFixture, key: string) => `${key}-${fixture.dialect}`;

describe("tasks.AsyncResource on every dialect at once, under the real Pulumi CLI", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    const servers = new Map<DialectFixture, DialectServer>();
    let project: CliProject;
    const printed: string[] = [];
    /** Every fixture's credentials the provider process needs (the CLI hands it its environment). */
    const credentials = Object.assign({}, ...FIXTURES.map((fixture) => fixture.env ?? {})) as Record<string, string>;

    const serverOf = (fixture: DialectFixture) => servers.get(fixture) as DialectServer;
    /** The widget `key` of `size` on every dialect's server (`extra` for the dialects `which` picks). */
    const widgets = (
        key: string,
        size: number,
        extra: Record<string, unknown> = {},
        which: (fixture: DialectFixture) => boolean = () => true,
    ): ResourceSpec[] =>
        FIXTURES.map((fixture, index) => {
            const args = fixture.args(serverOf(fixture).url, key, size) as { api: Record<string, unknown> };
            const { tokenEnv: _, ...api } = args.api;
            return {
                type: "AsyncResource",
                name: nameOn(fixture, key),
                args: {
                    ...args,
                    api: { ...api, tokenConfig: TOKEN_CONFIG },
                    ...(fixture.replaysCreate
                        ? { createToken: `0b5e7c1a-0000-4000-8000-0000000000${index}${key.slice(1)}` }
                        : {}),
                    ...(which(fixture) ? extra : {}),
                },
            };
        });
    const record = async (run: Promise<CliRun>): Promise<CliRun> => {
        const result = await run;
        printed.push(result.stdout, result.stderr, ...result.errors);
        return result;
    };
    const widgetStates = async (key: string): Promise<Map<DialectFixture, StateResource | undefined>> => {
        const { resources } = await project.state();
        return new Map(
            FIXTURES.map((fixture) => [
                fixture,
                resources.find((r) => r.type === ASYNC_RESOURCE && r.urn.endsWith(`::${nameOn(fixture, key)}`)),
            ]),
        );
    };
    /** Holds the next create on every server until `release`, so that an interrupt lands while each runs. */
    const holdCreates = (): { release(): void } => {
        const held: HeldOperations[] = FIXTURES.map((fixture) => {
            const operations = heldOperations("create");
            serverOf(fixture).setOperations(operations);
            return operations;
        });
        return {
            release: () => {
                for (const operations of held) operations.release();
            },
        };
    };
    /** Waits until every server has seen its look-up, its create and two polls: every operation runs. */
    const untilEveryCreateRuns = async (run: { done: Promise<{ code: number | null; output: string }> }) => {
        const before = new Map(FIXTURES.map((fixture) => [fixture, serverOf(fixture).counts().requests]));
        await until(
            () => FIXTURES.every((fixture) => serverOf(fixture).counts().requests >= (before.get(fixture) ?? 0) + 4),
            run,
        );
    };
    const sortedSteps = (run: CliRun) => [...run.steps].sort();
    const stepsForEvery = (step: string, key: string) => FIXTURES.map((f) => `${step} ${nameOn(f, key)}`).sort();

    before(function () {
        cli = requirePulumiCli(this);
    });
    beforeEach(async () => {
        Object.assign(process.env, credentials);
        for (const fixture of FIXTURES) servers.set(fixture, await fixture.start());
        project = await CliProject.create(cli, {
            name: "async-cli",
            config: { "pulumi-lifecycle:taskPollInitialMs": "20", "pulumi-lifecycle:taskPollMaxMs": "50" },
            secrets: { [TOKEN_CONFIG]: WIDGETS_TOKEN },
        });
        printed.length = 0;
    });
    afterEach(async () => {
        try {
            const stored = await project.storedState();
            assert.ok(!stored.includes(WIDGETS_TOKEN), "the API token never reaches the state");
            for (const secret of Object.values(credentials))
                assert.ok(
                    !stored.includes(secret) && !printed.some((text) => text.includes(secret)),
                    "no credential is stored or printed",
                );
            assert.ok(!printed.some((text) => text.includes(WIDGETS_TOKEN)), "nor the CLI's output");
        } finally {
            for (const name of Object.keys(credentials)) delete process.env[name];
            await project.cleanup();
            for (const server of servers.values()) await server.close();
            servers.clear();
        }
    });

    it("Ctrl-C while every create's operation runs: the up ends with each handle recorded (not tainted); the next up follows each to its end", async () => {
        // The operations run until the interrupt has done its work: no race with the clock.
        const held = holdCreates();
        await project.program(widgets("w1", 3));
        const run = project.spawn(["up", "--yes", "--skip-preview", "--non-interactive"]);
        await untilEveryCreateRuns(run);
        const interrupted = Date.now();
        process.kill(-(run.child.pid as number), "SIGINT");
        const { code, output } = await run.done;
        console.log(`      the up ended ${((Date.now() - interrupted) / 1000).toFixed(1)} s after the interrupt`);
        printed.push(output);
        assert.notEqual(code, 0);
        assert.deepEqual((await project.state()).pendingOperations, [], "the engine got every provider answer");
        for (const [fixture, partial] of await widgetStates("w1")) {
            assert.ok(partial, `${fixture.dialect}: the create is recorded`);
            assert.equal(partial.outputs?.tainted, false, fixture.dialect);
            assert.ok(
                (partial.outputs?.operation as { ref?: string } | undefined)?.ref,
                `${fixture.dialect}: with the operation's handle: ${JSON.stringify(partial.outputs)} ${String(partial.initErrors)}`,
            );
            // Cancel reaches the provider while it follows the operation; the next up follows it to its end.
            assert.match(String(partial.initErrors), /follows it to its end/, fixture.dialect);
        }

        held.release();
        const finished = await record(project.up());
        assertOk(finished);
        assert.deepEqual(sortedSteps(finished), stepsForEvery("update", "w1"));
        for (const [fixture, recorded] of await widgetStates("w1")) {
            assert.ok(recorded?.outputs?.resourceId, fixture.dialect);
            assert.equal(recorded?.outputs?.operation, undefined, fixture.dialect);
            assert.equal(recorded?.initErrors, undefined, fixture.dialect);
            assert.equal(serverOf(fixture).counts().live, 1, fixture.dialect);
            assert.equal(serverOf(fixture).counts().duplicates, 0, fixture.dialect);
        }
        assertOk(await record(project.destroy()));
        for (const fixture of FIXTURES) assert.equal(serverOf(fixture).counts().live, 0, fixture.dialect);
    });

    it("up, an up killed outright (SIGKILL) mid-create and the up after it, refresh after a change outside Pulumi and the up that undoes it, destroy: no duplicate, no zombie", async () => {
        await project.program(widgets("w1", 3));
        const created = await record(project.up());
        assertOk(created);
        assert.deepEqual(sortedSteps(created), stepsForEvery("create", "w1"));
        for (const fixture of FIXTURES) assert.equal(serverOf(fixture).counts().live, 1, fixture.dialect);

        // A second widget on each server whose create is killed with the CLI, as a crash or a closed laptop would.
        await project.program([...widgets("w1", 3), ...widgets("w2", 4)]);
        const held = holdCreates();
        const run = project.spawn(["up", "--yes", "--skip-preview", "--non-interactive"]);
        await untilEveryCreateRuns(run);
        process.kill(-(run.child.pid as number), "SIGKILL");
        await run.done;
        await until(() => providersIn(project.dir).length === 0);
        const cancel = await project.spawn(["cancel", "--yes", "--non-interactive"]).done;
        assert.equal(cancel.code, 0, cancel.output);
        held.release();

        // Where the API replays a create by its token, the next up finishes it. Where it has none, what the
        // killed up made cannot be told from another's: the create is refused, saying adopt. Every widget
        // gets its outcome in this one up (--continue-on-error: one refusal does not stop the others).
        const after = await record(project.up({ continueOnError: true }));
        for (const fixture of FIXTURES) {
            const name = nameOn(fixture, "w2");
            const refusals = after.diagnostics.filter((d) => d.severity === "error" && d.urn?.endsWith(`::${name}`));
            if (fixture.replaysCreate) {
                assert.ok(after.steps.includes(`create ${name}`), `${fixture.dialect}: ${after.steps.join(", ")}`);
                assert.deepEqual(refusals, [], fixture.dialect);
            } else {
                assert.ok(after.steps.includes(`create ${name} (failed)`), `${fixture.dialect}: ${after.steps}`);
                assert.match(refusals.map((d) => d.message).join("\n"), /already exists .*adopt: true/s, name);
            }
        }
        assert.equal(
            after.ok,
            FIXTURES.every((fixture) => fixture.replaysCreate),
        );
        await project.program([...widgets("w1", 3), ...widgets("w2", 4, { adopt: true }, (f) => !f.replaysCreate)]);
        assertOk(await record(project.up()));
        for (const fixture of FIXTURES) {
            assert.equal(serverOf(fixture).counts().live, 2, `${fixture.dialect}: both widgets, once each`);
            assert.equal(serverOf(fixture).counts().duplicates, 0, fixture.dialect);
        }

        // A change made outside Pulumi: refresh records it, and the next up sends the program's body back.
        for (const fixture of FIXTURES) {
            const server = serverOf(fixture);
            const made = server.resources().find((r) => fixture.nameOf(r) === "w1") as Record<string, unknown>;
            server.mutate(String(made.id ?? fixture.nameOf(made)), fixture.drift(7));
        }
        assertOk(await record(project.refresh()));
        for (const [fixture, refreshed] of await widgetStates("w1")) {
            const resource = refreshed?.outputs?.resource as Record<string, unknown>;
            assert.equal(fixture.sizeOf(resource), 7, `${fixture.dialect}: refresh records what the API has now`);
        }
        // And marks it: preview --diff shows each drifted body field, not an unexplained update.
        const preview = await record(project.preview({ diff: true }));
        assertOk(preview);
        for (const fixture of FIXTURES) {
            assert.match(previewOf(preview.stdout, nameOn(fixture, "w1")), /~ body[\s\S]*\b7\b\s*=>\s*\b3\b/);
        }
        const healed = await record(project.up());
        assertOk(healed);
        for (const fixture of FIXTURES) {
            assert.ok(healed.steps.includes(`update ${nameOn(fixture, "w1")}`), healed.steps.join(", "));
            const w1 = serverOf(fixture)
                .resources()
                .find((r) => fixture.nameOf(r) === "w1") as Record<string, unknown>;
            assert.equal(fixture.sizeOf(w1), 3, `${fixture.dialect}: the up sent w1's body back over the drift`);
        }

        assertOk(await record(project.destroy()));
        for (const fixture of FIXTURES) {
            const counts = serverOf(fixture).counts();
            assert.equal(counts.live, 0, `${fixture.dialect}: no zombie`);
            assert.equal(counts.requestsOutsideApi, 0, fixture.dialect);
            assert.equal(counts.unauthorized, 0, fixture.dialect);
        }
    });
});

/**
 * What `pulumi preview --diff` printed about the resource `name`: from the line naming its URN back to the
 * line that opened its block, up to the next resource's block.
 */
function previewOf(stdout: string, name: string): string {
    const blocks = stdout.split(/\n(?=\s*[~+\-=]+ pulumi-nodejs:dynamic)/);
    const block = blocks.find((text) => text.includes(`::${name}]`));
    assert.ok(block, `preview --diff names ${name}:\n${stdout}`);
    return block;
}
