// tasks.AsyncResource under the REAL Pulumi CLI, one program per dialect against that dialect's server
// (test/dialects/servers, written from each API's public contract): up, refresh after a change made
// outside Pulumi, an up killed outright (SIGKILL) while a create runs and the up after it, and destroy.
// Duplicates and zombies are counted on the server; the API token (a secret config key the program
// names) is looked for in the stored state and in everything the CLI printed.

import { strict as assert } from "node:assert";
import { type DialectServer, heldOperations } from "../dialects/servers/kit";
import { assertOk, CliProject, type CliRun, type ResourceSpec, type StateResource } from "../support/cliProject";
import { providersIn, until } from "../support/processes";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { FIXTURES, WIDGETS_TOKEN } from "../tasks/asyncResource/dialectFixtures";

const TOKEN_CONFIG = "widgets:token";

for (const fixture of FIXTURES) {
    describe(`tasks.AsyncResource, ${fixture.dialect} dialect, under the real Pulumi CLI`, function () {
        this.timeout(300_000);
        let cli: PulumiCli;
        let server: DialectServer;
        let project: CliProject;
        const printed: string[] = [];

        const widget = (name: string, size: number, extra: Record<string, unknown> = {}): ResourceSpec => {
            const args = fixture.args(server.url, name, size) as { api: Record<string, unknown> };
            const { tokenEnv: _, ...api } = args.api;
            return {
                type: "AsyncResource",
                name,
                args: {
                    ...args,
                    api: { ...api, tokenConfig: TOKEN_CONFIG },
                    ...(fixture.replaysCreate
                        ? { createToken: `0b5e7c1a-0000-4000-8000-00000000000${name.slice(1)}` }
                        : {}),
                    ...extra,
                },
            };
        };
        const record = async (run: Promise<CliRun>): Promise<CliRun> => {
            const result = await run;
            printed.push(result.stdout, result.stderr, ...result.errors);
            return result;
        };
        const stateOf = async (name: string): Promise<StateResource | undefined> =>
            (await project.state()).resources.find(
                (r) => r.type === "pulumi-nodejs:dynamic/tasks:AsyncResource" && r.urn.endsWith(`::${name}`),
            );

        before(function () {
            cli = requirePulumiCli(this);
        });
        beforeEach(async () => {
            // The CLI hands its environment to the provider process it starts (AWS credentials, for one).
            Object.assign(process.env, fixture.env);
            server = await fixture.start();
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
                for (const secret of Object.values(fixture.env ?? {}))
                    assert.ok(
                        !stored.includes(secret) && !printed.some((text) => text.includes(secret)),
                        "no credential is stored or printed",
                    );
                assert.ok(!printed.some((text) => text.includes(WIDGETS_TOKEN)), "nor the CLI's output");
            } finally {
                for (const name of Object.keys(fixture.env ?? {})) delete process.env[name];
                await project.cleanup();
                await server.close();
            }
        });

        it("Ctrl-C while the create's operation runs: the up ends with its handle recorded (not tainted); the next up follows it to its end", async () => {
            // The create's operation runs until the interrupt has done its work: no race with the clock.
            const held = heldOperations("create");
            server.setOperations(held);
            await project.program([widget("w1", 3)]);
            const run = project.spawn(["up", "--yes", "--skip-preview", "--non-interactive"]);
            const before = server.counts();
            // The look-up, the create and two polls: the operation runs.
            await until(() => server.counts().requests >= before.requests + 4);
            const interrupted = Date.now();
            process.kill(-(run.child.pid as number), "SIGINT");
            const { code, output } = await run.done;
            console.log(`      the up ended ${((Date.now() - interrupted) / 1000).toFixed(1)} s after the interrupt`);
            printed.push(output);
            assert.notEqual(code, 0);
            const state = await project.state();
            assert.deepEqual(state.pendingOperations, [], "the engine got the provider's answer");
            const partial = await stateOf("w1");
            assert.ok(partial, "the create is recorded");
            assert.equal(partial.outputs?.tainted, false);
            assert.ok(
                (partial.outputs?.operation as { ref?: string } | undefined)?.ref,
                `with the operation's handle: ${JSON.stringify(partial.outputs)} ${String(partial.initErrors)}`,
            );
            // Cancel reaches the provider while it follows the operation; the next up follows it to its end.
            assert.match(String(partial.initErrors), /follows it to its end/);

            held.release();
            const finished = await record(project.up());
            assertOk(finished);
            assert.deepEqual(finished.steps, ["update w1"]);
            const recorded = await stateOf("w1");
            assert.ok(recorded?.outputs?.resourceId);
            assert.equal(recorded?.outputs?.operation, undefined);
            assert.equal(recorded?.initErrors, undefined);
            assert.equal(server.counts().live, 1);
            assert.equal(server.counts().duplicates, 0);
            assertOk(await record(project.destroy()));
            assert.equal(server.counts().live, 0);
        });

        it("up, an up killed outright (SIGKILL) mid-create and the up after it, refresh after a change outside Pulumi and the up that undoes it, destroy: no duplicate, no zombie", async () => {
            await project.program([widget("w1", 3)]);
            const created = await record(project.up());
            assertOk(created);
            assert.deepEqual(created.steps, ["create w1"]);
            assert.equal(server.counts().live, 1);

            // A second widget whose create is killed with the CLI, as a crash or a closed laptop would.
            await project.program([widget("w1", 3), widget("w2", 4)]);
            const held = heldOperations("create");
            server.setOperations(held);
            const before = server.counts().requests;
            const run = project.spawn(["up", "--yes", "--skip-preview", "--non-interactive"]);
            // Its look-up, its create and two polls: the operation runs.
            await until(() => server.counts().requests >= before + 4);
            process.kill(-(run.child.pid as number), "SIGKILL");
            await run.done;
            await until(() => providersIn(project.dir).length === 0);
            const cancel = await project.spawn(["cancel", "--yes", "--non-interactive"]).done;
            assert.equal(cancel.code, 0, cancel.output);
            held.release();

            const after = await record(project.up());
            if (fixture.replaysCreate) {
                assertOk(after);
                assert.ok(after.steps.includes("create w2"), after.steps.join(", "));
            } else {
                // No create token in this API: what the killed up made cannot be told from another's.
                assert.equal(after.ok, false);
                assert.match(after.errors.join("\n"), /already exists .*adopt: true/s);
                await project.program([widget("w1", 3), widget("w2", 4, { adopt: true })]);
                assertOk(await record(project.up()));
            }
            assert.equal(server.counts().live, 2, "both widgets, once each");
            assert.equal(server.counts().duplicates, 0);

            // A change made outside Pulumi: refresh records it, and the next up sends the program's body back.
            const made = server.resources().find((r) => fixture.nameOf(r) === "w1");
            server.mutate(String(made?.id ?? fixture.nameOf(made as Record<string, unknown>)), fixture.drift(7));
            assertOk(await record(project.refresh()));
            const refreshed = (await stateOf("w1"))?.outputs?.resource as Record<string, unknown>;
            assert.equal(fixture.sizeOf(refreshed), 7, "refresh records what the API has now");
            // And marks it: preview --diff shows the drifted body field, not an unexplained update.
            const preview = await record(project.preview({ diff: true }));
            assertOk(preview);
            assert.match(preview.stdout, /~ body[\s\S]*\b7\b\s*=>\s*\b3\b/, preview.stdout);
            const healed = await record(project.up());
            assertOk(healed);
            assert.ok(healed.steps.includes("update w1"), healed.steps.join(", "));
            assert.equal(
                fixture.sizeOf(server.resources().find((r) => fixture.nameOf(r) === "w1") as Record<string, unknown>),
                3,
                "the up sent w1's body back over the drift",
            );

            assertOk(await record(project.destroy()));
            assert.equal(server.counts().live, 0, "no zombie");
            assert.equal(server.counts().requestsOutsideApi, 0);
            assert.equal(server.counts().unauthorized, 0);
        });
    });
}
