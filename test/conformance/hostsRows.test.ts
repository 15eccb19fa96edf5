// Guards rows 1-9 of the lifecycle tables in seeds 000/001 (Terraform hosts provider: Create/Read/Delete,
// with Update, with Exists) for `pulumi refresh` and `pulumi up`, through a real program, the real
// dynamic-provider server and a real hosts file. Each test sets up the infrastructure (the file), the state
// (earlier runs) and the config (the program), runs, and asserts the provider calls, the state and every
// byte of the file. Terraform's Exists step is done by Read here; Terraform's apply refreshes first, which
// in Pulumi is `pulumi up --refresh`: rows where plain `up` differs test both.

import { strict as assert } from "node:assert";
import { readFile } from "node:fs/promises";
import { fixture } from "../support/hostsFixtures";
import {
    callsOf,
    type EntrySpec,
    type HostsScenario,
    hostsScenario,
    type ScenarioSnapshot,
    stateOf,
} from "../support/hostsScenario";

const BASE = fixture("debian").toString("utf8");
/** The debian fixture has 7 lines; the entry is appended as line 8. */
const WEB: EntrySpec = { name: "web", address: "10.0.0.5", names: ["web.internal", "web"], comment: "frontend" };
const WEB_LINE = "10.0.0.5\tweb.internal web # frontend\n";
const WEB_STATE = "web ipv4/web.internal line 8";
/** The base without its first line: every later line moves up by one (a computed-field change). */
const BASE_SHORTER = BASE.slice(BASE.indexOf("\n") + 1);

describe("seed tables 000/001, rows 1-9", () => {
    let s: HostsScenario;
    /** The file the base, no state: where every row starts. */
    let fresh: ScenarioSnapshot;
    /** WEB created by a real run (its line in the file, its record in the state): where most rows start. */
    let managedByUp: ScenarioSnapshot;

    // One scenario for the suite: WEB is created once, and each test starts from a copy of that state and
    // file (HostsScenario.restore).
    before(async () => {
        s = await hostsScenario(BASE);
        fresh = await s.snapshot();
        const created = await s.up([WEB]);
        assert.ok(created.ok, created.plan);
        assert.deepEqual(stateOf(created), [WEB_STATE]);
        managedByUp = await s.snapshot();
    });
    beforeEach(() => s.restore(fresh));
    after(() => s?.cleanup());

    /** The infrastructure and state most rows start from: WEB created by an earlier `up`. */
    async function managed(): Promise<void> {
        await s.restore(managedByUp);
        assert.equal(await s.text(), BASE + WEB_LINE);
    }

    describe("pulumi refresh", () => {
        it("row 1 (not in file, not in state, in program): reads nothing", async () => {
            const result = await s.refresh();
            assert.deepEqual(callsOf(result), []);
            assert.deepEqual(stateOf(result), []);
            assert.equal(await s.text(), BASE);
        });

        // Refresh never runs the program, so rows that differ only in the program behave alike.
        for (const row of [
            "row 2 (not in file, in state, not in program)",
            "row 3 (not in file, in state, in program)",
        ]) {
            it(`${row}: Read finds no line and clears the state`, async () => {
                await managed();
                await s.write(BASE);
                const result = await s.refresh();
                assert.deepEqual(callsOf(result), ["Read web"]);
                assert.deepEqual(stateOf(result), []);
                assert.equal(await s.text(), BASE);
            });
        }

        it("row 4 (in file, not in state, in program): reads nothing and leaves the line alone", async () => {
            await s.write(BASE + WEB_LINE);
            const result = await s.refresh();
            assert.deepEqual(callsOf(result), []);
            assert.deepEqual(stateOf(result), []);
            assert.equal(await s.text(), BASE + WEB_LINE);
        });

        it("row 5 (in file, in state, not in program): Read refreshes the state, hand edits included", async () => {
            await managed();
            const edited = `${BASE}10.0.0.5\tweb.internal web www # edited by hand\n`;
            await s.write(edited);
            const result = await s.refresh();
            assert.deepEqual(callsOf(result), ["Read web"]);
            assert.deepEqual(stateOf(result), [WEB_STATE]);
            const outputs = result.state.resources[0]?.outputs;
            assert.deepEqual(outputs?.names, ["web.internal", "web", "www"]);
            assert.equal(outputs?.comment, "edited by hand");
            assert.equal(await s.text(), edited);
        });

        it("row 6 (in file, in state, program same as state): Read keeps the state", async () => {
            await managed();
            const before = (await s.harness.state()).resources;
            const result = await s.refresh();
            assert.deepEqual(callsOf(result), ["Read web"]);
            assert.deepEqual(result.state.resources, before);
            assert.equal(await s.text(), BASE + WEB_LINE);
        });

        it("row 7 (computed field changed: a line above was removed): Read updates the line number", async () => {
            await managed();
            await s.write(BASE_SHORTER + WEB_LINE);
            const result = await s.refresh();
            assert.deepEqual(callsOf(result), ["Read web"]);
            assert.deepEqual(stateOf(result), ["web ipv4/web.internal line 7"]);
            assert.equal(await s.text(), BASE_SHORTER + WEB_LINE);
        });

        for (const row of ["row 8 (program changed a force-new field)", "row 9 (program changed a common field)"]) {
            it(`${row}: Read refreshes; the program is not consulted`, async () => {
                await managed();
                const result = await s.refresh();
                assert.deepEqual(callsOf(result), ["Read web"]);
                assert.deepEqual(stateOf(result), [WEB_STATE]);
                assert.equal(await s.text(), BASE + WEB_LINE);
            });
        }
    });

    describe("pulumi up", () => {
        it("row - (nowhere): does nothing", async () => {
            const result = await s.up([]);
            assert.ok(result.ok);
            assert.deepEqual(callsOf(result), []);
            assert.equal(await s.text(), BASE);
        });

        it("row - (in file only, not in state or program): leaves the line alone", async () => {
            await s.write(BASE + WEB_LINE);
            const result = await s.up([]);
            assert.deepEqual(callsOf(result), []);
            assert.equal(await s.text(), BASE + WEB_LINE);
        });

        it("row 1 (not in file, not in state, in program): Create appends the line", async () => {
            const result = await s.up([WEB]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Check web", "Create web"]);
            assert.deepEqual(stateOf(result), [WEB_STATE]);
            assert.equal(await s.text(), BASE + WEB_LINE);
        });

        it("row 2 (not in file, in state, not in program): Delete of a line already gone succeeds", async () => {
            await managed();
            await s.write(BASE);
            const result = await s.up([]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Delete web"]);
            assert.deepEqual(stateOf(result), []);
            assert.equal(await s.text(), BASE);
        });

        it("row 2 with --refresh: Read clears the state, nothing left to delete", async () => {
            await managed();
            await s.write(BASE);
            const result = await s.upWithRefresh([]);
            assert.deepEqual(callsOf(result), ["Read web"]);
            assert.deepEqual(stateOf(result), []);
            assert.equal(await s.text(), BASE);
        });

        it("row 3 (not in file, in state, in program): plain up trusts the state and changes nothing", async () => {
            await managed();
            await s.write(BASE);
            const result = await s.up([WEB]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Check web", "Diff web"]);
            assert.deepEqual(stateOf(result), [WEB_STATE]);
            assert.equal(await s.text(), BASE);
        });

        it("row 3 with --refresh (Terraform's apply): Read clears the state, then Create writes the line again", async () => {
            await managed();
            await s.write(BASE);
            const result = await s.upWithRefresh([WEB]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Read web", "Check web", "Create web"]);
            assert.deepEqual(stateOf(result), [WEB_STATE]);
            assert.equal(await s.text(), BASE + WEB_LINE);
        });

        it("row 4 (in file, not in state, in program): Create fails, saying where the name is and how to adopt it", async () => {
            const existing = "10.0.0.9\tweb # someone else's\n";
            await s.write(BASE + existing);
            const result = await s.up([WEB]);
            assert.equal(result.ok, false);
            assert.deepEqual(callsOf(result), ["Check web", "Create web (failed)"]);
            const message = result.errors.map((e) => e.message).join("\n");
            assert.match(message, /hosts entry "web.internal" \(IPv4\) cannot be created/);
            assert.ok(message.includes(`${s.file} already has "web" at line 8: "10.0.0.9\\tweb # someone else's"`));
            assert.match(message, /set `adopt: true`/);
            assert.deepEqual(stateOf(result), []);
            assert.equal(await s.text(), BASE + existing);
        });

        it("row 5 (in file, in state, not in program): Delete removes the line and nothing else", async () => {
            await managed();
            const result = await s.up([]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Delete web"]);
            assert.deepEqual(stateOf(result), []);
            assert.equal(await s.text(), BASE);
        });

        it("row 6 (program same as state): Check and Diff, no write", async () => {
            await managed();
            const result = await s.up([WEB]);
            assert.deepEqual(callsOf(result), ["Check web", "Diff web"]);
            assert.deepEqual(
                result.steps.map((step) => step.kind),
                ["same"],
            );
            assert.deepEqual(stateOf(result), [WEB_STATE]);
            assert.equal(await s.text(), BASE + WEB_LINE);
        });

        it("row 7 (computed field changed): no change for up; the line number is not a diff", async () => {
            await managed();
            await s.write(BASE_SHORTER + WEB_LINE);
            const result = await s.up([WEB]);
            assert.deepEqual(callsOf(result), ["Check web", "Diff web"]);
            assert.deepEqual(stateOf(result), [WEB_STATE], "up does not read, so the stale line number stays");
            assert.equal(await s.text(), BASE_SHORTER + WEB_LINE);
        });

        it("row 7 with --refresh: Read updates the line number, then no change", async () => {
            await managed();
            await s.write(BASE_SHORTER + WEB_LINE);
            const result = await s.upWithRefresh([WEB]);
            assert.deepEqual(callsOf(result), ["Read web", "Check web", "Diff web"]);
            assert.deepEqual(stateOf(result), ["web ipv4/web.internal line 7"]);
            assert.equal(await s.text(), BASE_SHORTER + WEB_LINE);
        });

        it("row 8 (force-new field changed, no name shared): replaces create-before-delete", async () => {
            await managed();
            const api = { ...WEB, names: ["api.internal"] };
            const result = await s.up([api]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Check web", "Diff web", "Check web", "Create web", "Delete web"]);
            assert.equal(result.steps[0]?.detail, "names");
            assert.deepEqual(stateOf(result), ["web ipv4/api.internal line 9"]);
            assert.equal(await s.text(), `${BASE}10.0.0.5\tapi.internal # frontend\n`);
        });

        it("row 8 (force-new field changed, a name shared): replaces delete-before-create, as Terraform does", async () => {
            await managed();
            const renamed = { ...WEB, names: ["www.internal", "web"] };
            const result = await s.up([renamed]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Check web", "Diff web", "Check web", "Delete web", "Create web"]);
            assert.equal(result.steps[0]?.detail, "names; delete before replace");
            assert.deepEqual(stateOf(result), ["web ipv4/www.internal line 8"]);
            assert.equal(await s.text(), `${BASE}10.0.0.5\twww.internal web # frontend\n`);
        });

        it("row 8 (the file changed): creates in the new file, then deletes from the old one", async () => {
            await managed();
            const other = `${s.project.dir}/hosts.other`;
            const result = await s.up([{ ...WEB, file: other }]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Check web", "Diff web", "Check web", "Create web", "Delete web"]);
            assert.equal(result.steps[0]?.detail, "file");
            assert.equal(await s.text(), BASE);
            assert.equal(await readFile(other, "utf8"), WEB_LINE);
        });

        it("row 9 (common fields changed): Update rewrites the line in place, the id stays", async () => {
            await managed();
            await s.write(`${BASE + WEB_LINE}# a line after ours\n`);
            const changed = { ...WEB, address: "10.0.0.6", names: ["web.internal", "web", "www"], comment: "moved" };
            const result = await s.up([changed]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Check web", "Diff web", "Update web"]);
            assert.deepEqual(stateOf(result), [WEB_STATE]);
            assert.equal(await s.text(), `${BASE}10.0.0.6\tweb.internal web www # moved\n# a line after ours\n`);
        });
    });
});
