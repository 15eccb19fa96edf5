// Guards the Pulumi lifecycle of seed 002 (Read, Import, Manage) and the Terraform lifecycle rules of
// seed 004 (validation before any write; partial state, no zombie resources) for HostEntry, through real
// programs, the real dynamic-provider server and a real hosts file.

import { strict as assert } from "node:assert";
import { hosts } from "pulumi-lifecycle";
import { callsOf, type HostsScenario, hostsScenario, type ScenarioSnapshot, stateOf } from "../support/hostsScenario";

const BASE = "127.0.0.1\tlocalhost\n";
const WEB = { name: "web", address: "10.0.0.5", names: ["web.internal", "web"], comment: "frontend" };
const WEB_LINE = "10.0.0.5\tweb.internal web # frontend\n";

/**
 * One scenario for the enclosing suite, given to `use` once made; each test starts from a copy of its
 * first files (as the rows' suite does), so that their runs share the provider process the harness parks.
 */
function scenarioPerSuite(use: (scenario: HostsScenario) => void): void {
    let scenario: HostsScenario | undefined;
    let fresh: ScenarioSnapshot;
    before(async () => {
        scenario = await hostsScenario(BASE);
        fresh = await scenario.snapshot();
        use(scenario);
    });
    beforeEach(() => scenario?.restore(fresh));
    after(() => scenario?.cleanup());
}

describe("seed 002: Read, Import and Manage", () => {
    let s: HostsScenario;
    scenarioPerSuite((made) => {
        s = made;
    });

    describe("Read: HostEntry.get", () => {
        it("reads an existing line by id without managing it: Read with the given props, never deleted", async () => {
            await s.write(BASE + WEB_LINE);
            const program = () => {
                const found = hosts.HostEntry.get("found", "ipv4/web.internal", { file: s.file });
                return { names: found.names, line: found.line, comment: found.comment };
            };
            const read = await s.harness.up({ program });
            assert.ok(read.ok, read.plan);
            assert.deepEqual(callsOf(read), ["Read found"]);
            assert.deepEqual(read.outputs, { names: ["web.internal", "web"], line: 2, comment: "frontend" });
            assert.equal(read.state.resources[0]?.external, true);
            const gone = await s.harness.up({ program: () => undefined });
            assert.deepEqual(callsOf(gone), [], "an external resource is only forgotten");
            assert.equal(await s.text(), BASE + WEB_LINE);
        });

        it("fails when the line is not there", async () => {
            const result = await s.harness.up({
                program: () => hosts.HostEntry.get("missing", "ipv4/web.internal", { file: s.file }),
            });
            assert.equal(result.ok, false);
            assert.match(
                result.errors.map((e) => e.message).join("\n"),
                /hosts entry "web.internal" \(IPv4\) is not in .*hosts, so HostEntry.get cannot read it/,
            );
        });

        it("refuses an id that is not a HostEntry id, saying what one looks like", async () => {
            const result = await s.harness.up({
                program: () => hosts.HostEntry.get("bad", "web.internal", { file: s.file }),
            });
            assert.equal(result.ok, false);
            assert.match(
                result.errors.map((e) => e.message).join("\n"),
                /"web.internal" is not a HostEntry id.*"ipv4\/web.internal"/,
            );
        });
    });

    describe("Import: adopt", () => {
        it("takes over an identical line without writing, then manages it", async () => {
            await s.write(`${BASE + WEB_LINE}# after\n`);
            const adopted = await s.up([{ ...WEB, adopt: true }]);
            assert.ok(adopted.ok, adopted.plan);
            assert.deepEqual(callsOf(adopted), ["Check web", "Create web"]);
            assert.deepEqual(stateOf(adopted), ["web ipv4/web.internal line 2"]);
            assert.equal(await s.text(), `${BASE + WEB_LINE}# after\n`, "not a byte written");
            const updated = await s.up([{ ...WEB, adopt: true, comment: "now managed" }]);
            assert.deepEqual(callsOf(updated), ["Check web", "Diff web", "Update web"]);
            assert.equal(await s.text(), `${BASE}10.0.0.5\tweb.internal web # now managed\n# after\n`);
        });

        it("refuses a line that differs, naming each difference, and adopts once the program matches", async () => {
            await s.write(`${BASE}10.0.0.9\tweb.internal www\n`);
            const refused = await s.up([{ ...WEB, adopt: true }]);
            assert.equal(refused.ok, false);
            const message = refused.errors.map((e) => e.message).join("\n");
            assert.match(message, /cannot adopt an existing line/);
            assert.match(message, /address: the file has "10\.0\.0\.9", the program has "10\.0\.0\.5"/);
            assert.match(message, /names: the file has \[web\.internal, www\], the program has \[web\.internal, web\]/);
            assert.match(message, /comment: the file has none, the program has "frontend"/);
            assert.deepEqual(stateOf(refused), []);
            const matching = { name: "web", address: "10.0.0.9", names: ["web.internal", "www"], adopt: true };
            const adopted = await s.up([matching]);
            assert.ok(adopted.ok, adopted.plan);
            assert.deepEqual(stateOf(adopted), ["web ipv4/web.internal line 2"]);
            assert.equal(await s.text(), `${BASE}10.0.0.9\tweb.internal www\n`);
        });
    });

    describe("Manage: replace", () => {
        it("honours the deleteBeforeReplace resource option even where create-before-delete would work", async () => {
            await s.up([WEB]);
            const result = await s.up([{ ...WEB, names: ["api.internal"] }], { deleteBeforeReplace: ["web"] });
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Check web", "Diff web", "Check web", "Delete web", "Create web"]);
            assert.equal(await s.text(), `${BASE}10.0.0.5\tapi.internal # frontend\n`);
        });

        it("replaces create-before-delete when the family changes: both lines exist until the program ends", async () => {
            await s.up([WEB]);
            const result = await s.up([{ ...WEB, address: "fd00::5" }]);
            assert.ok(result.ok, result.plan);
            assert.deepEqual(callsOf(result), ["Check web", "Diff web", "Check web", "Create web", "Delete web"]);
            assert.equal(result.steps[0]?.detail, "address");
            assert.deepEqual(stateOf(result), ["web ipv6/web.internal line 3"]);
            assert.equal(await s.text(), `${BASE}fd00::5\tweb.internal web # frontend\n`);
        });
    });
});

describe("seed 004: validation first, partial state and no zombies", () => {
    let s: HostsScenario;
    scenarioPerSuite((made) => {
        s = made;
    });

    it("stops a preview at a validation failure, naming the property, before any write", async () => {
        const result = await s.preview([WEB, { name: "bad", address: "10.0.0.6", names: ["bad name"] }]);
        assert.equal(result.ok, false);
        assert.ok(!result.calls.some((call) => ["Create", "Update", "Delete"].includes(call.method)));
        assert.match(
            result.errors.map((e) => e.message).join("\n"),
            /HostEntry::bad is invalid:\n {2}names\[0\]: "bad name" contains a space/,
        );
        assert.equal(await s.text(), BASE);
    });

    it("writes nothing when an up's only resource is invalid", async () => {
        const result = await s.up([{ name: "bad", address: "10.0.0.6 ", names: ["ok.internal"] }]);
        assert.equal(result.ok, false);
        assert.deepEqual(callsOf(result), ["Check bad"]);
        assert.deepEqual(stateOf(result), []);
        assert.equal(await s.text(), BASE);
    });

    it("keeps in state what was written before a later step failed, so nothing becomes a zombie", async () => {
        await s.write(`${BASE}10.0.0.9\tapi.internal\n`);
        // api depends on web, so web is written before api's create fails (row 4).
        const program = () => {
            const { name, ...args } = WEB;
            const web = new hosts.HostEntry(name, { ...args, file: s.file });
            new hosts.HostEntry(
                "api",
                { address: "10.0.0.6", names: ["api.internal"], file: s.file },
                { dependsOn: [web] },
            );
        };
        const failed = await s.harness.up({ program });
        assert.equal(failed.ok, false);
        assert.deepEqual(stateOf(failed), ["web ipv4/web.internal line 3"], "the line that was written is tracked");
        assert.equal(await s.text(), `${BASE}10.0.0.9\tapi.internal\n${WEB_LINE}`);
        await s.write(BASE + WEB_LINE);
        const retried = await s.harness.up({ program });
        assert.ok(retried.ok, retried.plan);
        assert.deepEqual(callsOf(retried), ["Check web", "Diff web", "Check api", "Create api"]);
        const destroyed = await s.destroy();
        assert.ok(destroyed.ok, destroyed.plan);
        assert.equal(await s.text(), BASE, "destroy finds everything that was created");
    });
});
