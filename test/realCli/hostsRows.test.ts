// Guards rows 1-9 of the lifecycle tables in seeds 000/001 (Terraform hosts provider: Create/Read/Delete,
// with Update, with Exists) under the REAL Pulumi CLI: `pulumi refresh`, `pulumi up` and
// `pulumi up --refresh` on a real program directory, the engine's own events for the steps, `pulumi stack
// export` for the state, and every byte of a real hosts file. Terraform's Exists is our Read; Terraform's
// apply refreshes first, which in Pulumi is `pulumi up --refresh`.

import { strict as assert } from "node:assert";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
    assertOk,
    CliProject,
    type CliState,
    nameOf,
    type ProjectSnapshot,
    type ResourceSpec,
} from "../support/cliProject";
import { fixture } from "../support/hostsFixtures";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";

const BASE = fixture("debian").toString("utf8");
/** The debian fixture has 7 lines; the entry is appended as line 8. */
const WEB_LINE = "10.0.0.5\tweb.internal web # frontend\n";
const WEB_STATE = "web ipv4/web.internal line 8";
/** The base without its first line: every later line moves up by one (a computed-field change). */
const BASE_SHORTER = BASE.slice(BASE.indexOf("\n") + 1);

/** The state's entries as `name id line N`. */
function entries(state: CliState): string[] {
    return state.resources.map((r) => `${nameOf(r.urn)} ${r.id} line ${String(r.outputs?.line)}`);
}

describe("seed tables 000/001, rows 1-9, under the real Pulumi CLI", function () {
    this.timeout(180_000);
    let cli: PulumiCli;
    let project: CliProject;
    let file: string;
    const web = (args: Record<string, unknown> = {}): ResourceSpec => ({
        name: "web",
        args: { address: "10.0.0.5", names: ["web.internal", "web"], comment: "frontend", file, ...args },
    });
    const text = () => readFile(file, "utf8");
    const write = (content: string) => writeFile(file, content);

    /** The stack new, the file the base, the program empty: where every row starts. */
    let fresh: ProjectSnapshot;
    /** WEB created by a real `up` (its line in the file, its record in the state): where most rows start. */
    let managedByUp: ProjectSnapshot;

    // One project for the suite: the stack is made once and WEB created once, by real CLI operations, and
    // each test starts from a copy of that stack and its file (CliProject.restore).
    before(async function () {
        cli = requirePulumiCli(this);
        project = await CliProject.create(cli);
        file = join(project.dir, "hosts");
        await write(BASE);
        fresh = await project.snapshot();
        await project.program([web()]);
        const created = await project.up();
        assertOk(created);
        assert.deepEqual(created.steps, ["create web"]);
        assert.equal(await text(), BASE + WEB_LINE);
        managedByUp = await project.snapshot();
    });
    beforeEach(() => project.restore(fresh));
    after(() => project?.cleanup());

    /** The infrastructure and state most rows start from: WEB created by an earlier `up`. */
    async function managed(): Promise<void> {
        await project.restore(managedByUp);
        assert.equal(await text(), BASE + WEB_LINE);
        assert.deepEqual(entries(await project.state()), [WEB_STATE]);
    }

    describe("pulumi refresh", () => {
        it("row 1 (not in file, not in state, in program): reads nothing", async () => {
            await project.program([web()]);
            const run = await project.refresh();
            assertOk(run);
            assert.deepEqual(run.steps, []);
            assert.deepEqual(entries(await project.state()), []);
            assert.equal(await text(), BASE);
        });

        for (const row of [
            "row 2 (not in file, in state, not in program)",
            "row 3 (not in file, in state, in program)",
        ]) {
            it(`${row}: Read finds no line and the engine drops it from state`, async () => {
                await managed();
                if (row.startsWith("row 2")) await project.program([]);
                await write(BASE);
                const run = await project.refresh();
                assertOk(run);
                assert.deepEqual(run.steps, ["refresh web"]);
                assert.deepEqual(entries(await project.state()), []);
                assert.equal(await text(), BASE);
            });
        }

        it("row 4 (in file, not in state, in program): reads nothing and leaves the line alone", async () => {
            await project.program([web()]);
            await write(BASE + WEB_LINE);
            const run = await project.refresh();
            assertOk(run);
            assert.deepEqual(run.steps, []);
            assert.deepEqual(entries(await project.state()), []);
            assert.equal(await text(), BASE + WEB_LINE);
        });

        it("row 5 (in file, in state, not in program): Read refreshes the state, hand edits included", async () => {
            await managed();
            await project.program([]);
            const edited = `${BASE}10.0.0.5\tweb.internal web www # edited by hand\n`;
            await write(edited);
            const run = await project.refresh();
            assertOk(run);
            assert.deepEqual(run.steps, ["refresh web"]);
            const state = await project.state();
            assert.deepEqual(entries(state), [WEB_STATE]);
            assert.deepEqual(state.resources[0]?.outputs?.names, ["web.internal", "web", "www"]);
            assert.equal(state.resources[0]?.outputs?.comment, "edited by hand");
            assert.equal(await text(), edited);
        });

        it("row 6 (in file, in state, program same as state): Read keeps the state", async () => {
            await managed();
            const before = (await project.state()).resources[0];
            const run = await project.refresh();
            assertOk(run);
            assert.deepEqual(run.steps, ["refresh web"]);
            const after = (await project.state()).resources[0];
            assert.deepEqual(after?.outputs, before?.outputs);
            assert.deepEqual(after?.inputs, before?.inputs);
            assert.equal(await text(), BASE + WEB_LINE);
        });

        it("row 7 (computed field changed: a line above was removed): Read updates the line number", async () => {
            await managed();
            await write(BASE_SHORTER + WEB_LINE);
            const run = await project.refresh();
            assertOk(run);
            assert.deepEqual(run.steps, ["refresh web"]);
            assert.deepEqual(entries(await project.state()), ["web ipv4/web.internal line 7"]);
            assert.equal(await text(), BASE_SHORTER + WEB_LINE);
        });

        for (const [row, changed] of [
            ["row 8 (program changed a force-new field)", { names: ["api.internal"] }],
            ["row 9 (program changed a common field)", { comment: "moved" }],
        ] as const) {
            it(`${row}: Read refreshes; the program is not consulted`, async () => {
                await managed();
                await project.program([web(changed)]);
                const run = await project.refresh();
                assertOk(run);
                assert.deepEqual(run.steps, ["refresh web"]);
                assert.deepEqual(entries(await project.state()), [WEB_STATE]);
                assert.equal(await text(), BASE + WEB_LINE);
            });
        }
    });

    describe("pulumi up", () => {
        it("row - (nowhere): does nothing", async () => {
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, []);
            assert.equal(await text(), BASE);
        });

        it("row - (in file only, not in state or program): leaves the line alone", async () => {
            await write(BASE + WEB_LINE);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, []);
            assert.equal(await text(), BASE + WEB_LINE);
        });

        it("row 1 (not in file, not in state, in program): Create appends the line", async () => {
            await project.program([web()]);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["create web"]);
            assert.deepEqual(entries(await project.state()), [WEB_STATE]);
            assert.equal(await text(), BASE + WEB_LINE);
        });

        it("row 2 (not in file, in state, not in program): Delete of a line already gone succeeds", async () => {
            await managed();
            await write(BASE);
            await project.program([]);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["delete web"]);
            assert.deepEqual(entries(await project.state()), []);
            assert.equal(await text(), BASE);
        });

        it("row 2 with --refresh: Read drops it from state, nothing left to delete", async () => {
            await managed();
            await write(BASE);
            await project.program([]);
            const run = await project.up({ refresh: true });
            assertOk(run);
            assert.deepEqual(run.steps, ["refresh web"]);
            assert.deepEqual(entries(await project.state()), []);
            assert.equal(await text(), BASE);
        });

        it("row 3 (not in file, in state, in program): plain up trusts the state and changes nothing", async () => {
            await managed();
            await write(BASE);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["same web"]);
            assert.deepEqual(entries(await project.state()), [WEB_STATE]);
            assert.equal(await text(), BASE);
        });

        it("row 3 with --refresh (Terraform's apply): Read drops it, then Create writes the line again", async () => {
            await managed();
            await write(BASE);
            const run = await project.up({ refresh: true });
            assertOk(run);
            assert.deepEqual(run.steps, ["refresh web", "create web"]);
            assert.deepEqual(entries(await project.state()), [WEB_STATE]);
            assert.equal(await text(), BASE + WEB_LINE);
        });

        it("row 4 (in file, not in state, in program): Create fails, saying where the name is and how to adopt it", async () => {
            const existing = "10.0.0.9\tweb # someone else's\n";
            await write(BASE + existing);
            await project.program([web()]);
            const run = await project.up();
            assert.equal(run.ok, false);
            assert.deepEqual(run.steps, ["create web (failed)"]);
            const message = run.errors.join("\n");
            assert.match(message, /hosts entry "web.internal" \(IPv4\) cannot be created/);
            assert.ok(message.includes(`${file} already has "web" at line 8: "10.0.0.9\\tweb # someone else's"`));
            assert.match(message, /set `adopt: true`/);
            assert.deepEqual(entries(await project.state()), []);
            assert.equal(await text(), BASE + existing);
        });

        it("row 4 with adopt: true: takes the identical line over without writing a byte", async () => {
            await write(BASE + WEB_LINE);
            await project.program([web({ adopt: true })]);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["create web"]);
            assert.deepEqual(entries(await project.state()), [WEB_STATE]);
            assert.equal(await text(), BASE + WEB_LINE);
        });

        it("row 5 (in file, in state, not in program): Delete removes the line and nothing else", async () => {
            await managed();
            await project.program([]);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["delete web"]);
            assert.deepEqual(entries(await project.state()), []);
            assert.equal(await text(), BASE);
        });

        it("row 5 with --refresh: Read, then Delete", async () => {
            await managed();
            await project.program([]);
            const run = await project.up({ refresh: true });
            assertOk(run);
            assert.deepEqual(run.steps, ["refresh web", "delete web"]);
            assert.deepEqual(entries(await project.state()), []);
            assert.equal(await text(), BASE);
        });

        it("row 6 (program same as state): same, no write", async () => {
            await managed();
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["same web"]);
            assert.deepEqual(entries(await project.state()), [WEB_STATE]);
            assert.equal(await text(), BASE + WEB_LINE);
        });

        it("row 7 (computed field changed): no change for up; the line number is not a diff", async () => {
            await managed();
            await write(BASE_SHORTER + WEB_LINE);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["same web"]);
            assert.deepEqual(entries(await project.state()), [WEB_STATE], "up does not read: the old number stays");
            assert.equal(await text(), BASE_SHORTER + WEB_LINE);
        });

        it("row 7 with --refresh: Read updates the line number, then no change", async () => {
            await managed();
            await write(BASE_SHORTER + WEB_LINE);
            const run = await project.up({ refresh: true });
            assertOk(run);
            assert.deepEqual(run.steps, ["refresh web", "same web"]);
            assert.deepEqual(entries(await project.state()), ["web ipv4/web.internal line 7"]);
            assert.equal(await text(), BASE_SHORTER + WEB_LINE);
        });

        it("row 8 (force-new field changed, no name shared): replaces create-before-delete", async () => {
            await managed();
            await project.program([web({ names: ["api.internal"] })]);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["create-replacement web", "replace web", "delete-replaced web"]);
            assert.deepEqual(entries(await project.state()), ["web ipv4/api.internal line 9"]);
            assert.equal(await text(), `${BASE}10.0.0.5\tapi.internal # frontend\n`);
        });

        it("row 8 (force-new field changed, a name shared): replaces delete-before-create, as Terraform does", async () => {
            await managed();
            await project.program([web({ names: ["www.internal", "web"] })]);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["delete-replaced web", "replace web", "create-replacement web"]);
            assert.deepEqual(entries(await project.state()), ["web ipv4/www.internal line 8"]);
            assert.equal(await text(), `${BASE}10.0.0.5\twww.internal web # frontend\n`);
        });

        it("row 8 (the file changed): creates in the new file, then deletes from the old one", async () => {
            await managed();
            const other = join(project.dir, "hosts.other");
            await project.program([web({ file: other })]);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["create-replacement web", "replace web", "delete-replaced web"]);
            assert.equal(await text(), BASE);
            assert.equal(await readFile(other, "utf8"), WEB_LINE);
        });

        it("row 8 with --refresh: Read, then the replacement", async () => {
            await managed();
            await project.program([web({ names: ["api.internal"] })]);
            const run = await project.up({ refresh: true });
            assertOk(run);
            assert.deepEqual(run.steps, [
                "refresh web",
                "create-replacement web",
                "replace web",
                "delete-replaced web",
            ]);
            assert.equal(await text(), `${BASE}10.0.0.5\tapi.internal # frontend\n`);
        });

        it("row 9 (common fields changed): Update rewrites the line in place, the id stays", async () => {
            await managed();
            await write(`${BASE + WEB_LINE}# a line after ours\n`);
            await project.program([
                web({ address: "10.0.0.6", names: ["web.internal", "web", "www"], comment: "moved" }),
            ]);
            const run = await project.up();
            assertOk(run);
            assert.deepEqual(run.steps, ["update web"]);
            assert.deepEqual(entries(await project.state()), [WEB_STATE]);
            assert.equal(await text(), `${BASE}10.0.0.6\tweb.internal web www # moved\n# a line after ours\n`);
        });

        it("row 9 with --refresh: Read, then Update", async () => {
            await managed();
            await project.program([web({ comment: "moved" })]);
            const run = await project.up({ refresh: true });
            assertOk(run);
            assert.deepEqual(run.steps, ["refresh web", "update web"]);
            assert.equal(await text(), `${BASE}10.0.0.5\tweb.internal web # moved\n`);
        });
    });
});
