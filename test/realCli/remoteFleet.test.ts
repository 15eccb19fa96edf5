// Issue 21: hosts entries on a fleet of machines over SSH, through the REAL Pulumi CLI against real
// OpenSSH servers (test/support/sshFleet.ts): one `pulumi up` across 20 machines, refresh after hand
// edits on some of them, a move to another machine (replace), destroy; every byte of every file checked,
// one connection per machine per provider process, credentials encrypted in state.

import { strict as assert } from "node:assert";
import { readFile, writeFile } from "node:fs/promises";
import { assertOk, CliProject, nameOf, type ResourceSpec } from "../support/cliProject";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { type Fleet, type FleetMachine, requireFleet, startFleet } from "../support/sshFleet";

const MACHINES = 20;
const ENTRIES_PER_MACHINE = 3;

describe("hosts entries on a fleet of machines over SSH, under the real Pulumi CLI", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let fleet: Fleet;
    let project: CliProject;
    const original = new Map<string, string>();

    const connectionOf = (machine: FleetMachine) => ({
        host: machine.host,
        port: machine.port,
        user: "root",
        hostKey: machine.hostKey,
        privateKey: fleet.privateKey,
    });
    const entriesOn = (machine: FleetMachine, index: number, overrides: Record<string, unknown> = {}): ResourceSpec[] =>
        Array.from({ length: ENTRIES_PER_MACHINE }, (_, k) => ({
            name: `${machine.name}-e${k}`,
            args: {
                address: `10.${index}.0.${k + 1}`,
                names: [`svc${k}.fleet.test`, `svc${k}`],
                comment: `on ${machine.name}`,
                file: machine.remoteHostsPath,
                connection: connectionOf(machine),
                ...overrides,
            },
        }));
    const lineOf = (index: number, k: number, name: string) =>
        `10.${index}.0.${k + 1}\tsvc${k}.fleet.test svc${k} # on ${name}\n`;

    /** The file holds its original bytes, then exactly `lines` (in any order: creates run concurrently). */
    async function assertHolds(machine: FleetMachine, lines: string[]): Promise<void> {
        const text = await readFile(machine.hostsFile, "utf8");
        const base = original.get(machine.name) as string;
        assert.ok(text.startsWith(base), `${machine.name}: the original content is intact:\n${text}`);
        const added = text
            .slice(base.length)
            .split(/(?<=\n)/)
            .filter((line) => line !== "");
        assert.deepEqual([...added].sort(), [...lines].sort(), `${machine.name} holds exactly its entries`);
    }

    before(async function () {
        cli = requirePulumiCli(this);
        requireFleet(this);
        fleet = await startFleet(MACHINES);
        for (const machine of fleet.machines) original.set(machine.name, await readFile(machine.hostsFile, "utf8"));
        project = await CliProject.create(cli);
        project.trace();
    });
    after(async () => {
        await project?.cleanup();
        await fleet?.stop({ remove: true });
    });

    it("one `pulumi up` creates 60 entries on 20 machines over one connection each, touching nothing else", async () => {
        await project.program(fleet.machines.flatMap((machine, index) => entriesOn(machine, index)));
        const run = await project.up();
        assertOk(run);
        assert.equal(run.steps.filter((step) => step.startsWith("create ")).length, MACHINES * ENTRIES_PER_MACHINE);
        for (const [index, machine] of fleet.machines.entries()) {
            await assertHolds(
                machine,
                Array.from({ length: ENTRIES_PER_MACHINE }, (_, k) => lineOf(index, k, machine.name)),
            );
        }
        const opened = await project.sshConnections();
        assert.equal(opened.length, MACHINES, `one connection per machine, not per entry: ${opened.join(", ")}`);
        assert.equal(new Set(opened).size, MACHINES);

        const state = await project.state();
        const first = state.resources.find((r) => nameOf(r.urn) === "m01-e0");
        assert.equal(
            first?.id,
            `ipv4/svc0.fleet.test@127.0.0.1:${fleet.machines[0]?.port}`,
            "the id names the machine",
        );
        const stored = await project.storedState();
        const keyBody = fleet.privateKey.split("\n")[1] as string;
        assert.ok(!stored.includes(keyBody), "the private key is not stored in clear");
        assert.match(
            stored,
            /"credentials":\s*\{\s*"4dabf18193072939515e22adb298388d":\s*"1b47061264138c4ac30d75fd1eb44270",\s*"ciphertext"/,
            "credentials are stored as a secret",
        );
    });

    it("`pulumi refresh` reads hand edits on some machines; the next `up` puts the program's lines back", async () => {
        const [m01, m02, m03] = fleet.machines as [FleetMachine, FleetMachine, FleetMachine];
        const edited = (await readFile(m02.hostsFile, "utf8")).replace("10.1.0.1\t", "10.1.0.99\t");
        await writeFile(m02.hostsFile, edited);
        const without = (await readFile(m03.hostsFile, "utf8")).replace(lineOf(2, 1, "m03"), "");
        await writeFile(m03.hostsFile, without);
        const refresh = await project.refresh();
        assertOk(refresh);
        const state = await project.state();
        const byName = new Map(state.resources.map((r) => [nameOf(r.urn), r]));
        assert.equal(byName.get("m02-e0")?.outputs?.address, "10.1.0.99", "the hand-edited address is read");
        assert.equal(byName.has("m03-e1"), false, "the entry whose line was removed by hand left the state");
        assert.equal(byName.get("m01-e0")?.outputs?.address, "10.0.0.1");

        const up = await project.up();
        assertOk(up);
        assert.ok(up.steps.includes("update m02-e0") && up.steps.includes("create m03-e1"), up.steps.join(", "));
        for (const [index, machine] of [m01, m02, m03].entries()) {
            await assertHolds(
                machine,
                Array.from({ length: ENTRIES_PER_MACHINE }, (_, k) => lineOf(index, k, machine.name)),
            );
        }
    });

    it("moving an entry to another machine replaces it there; another login to the same machine updates in place, writing nothing", async () => {
        const [m01, m02] = fleet.machines as [FleetMachine, FleetMachine];
        const specs = fleet.machines.flatMap((machine, index) => entriesOn(machine, index));
        const moved = specs.find((spec) => spec.name === "m01-e2") as ResourceSpec;
        const renamed = {
            ...moved,
            args: {
                ...moved.args,
                names: ["moved.fleet.test"],
                connection: connectionOf(m02),
                file: m02.remoteHostsPath,
            },
        };
        await project.program(specs.map((spec) => (spec.name === "m01-e2" ? renamed : spec)));
        const run = await project.up();
        assertOk(run);
        assert.ok(
            run.steps.includes("replace m01-e2") || run.steps.includes("create-replacement m01-e2"),
            run.steps.join(", "),
        );
        await assertHolds(m01, [lineOf(0, 0, "m01"), lineOf(0, 1, "m01")]);
        await assertHolds(m02, [
            ...Array.from({ length: 3 }, (_, k) => lineOf(1, k, "m02")),
            "10.0.0.3\tmoved.fleet.test # on m01\n",
        ]);

        // Another login to m03 (a sudo user, through `sudo -n sftp-server`): the same machine, so an update
        // that writes nothing, not a replacement.
        const m03 = fleet.machine("m03");
        const before = await readFile(m03.hostsFile);
        const sudo = { ...connectionOf(m03), user: fleet.users.sudo, privilege: "sudo", sftpServer: fleet.sftpServer };
        const relogged = specs.map((spec) =>
            spec.name === "m01-e2"
                ? renamed
                : spec.name.startsWith("m03-")
                  ? { ...spec, args: { ...spec.args, connection: sudo } }
                  : spec,
        );
        await project.program(relogged);
        const again = await project.up();
        assertOk(again);
        const m03Steps = again.steps.filter((step) => step.includes("m03-"));
        assert.deepEqual(m03Steps.sort(), ["update m03-e0", "update m03-e1", "update m03-e2"]);
        assert.ok(
            !again.steps.some((step) => !step.includes("m03-") && !step.startsWith("same ")),
            again.steps.join(", "),
        );
        assert.deepEqual(await readFile(m03.hostsFile), before, "a new login changes no byte");
        const state = await project.state();
        const entry = state.resources.find((r) => nameOf(r.urn) === "m03-e0");
        assert.equal((entry?.outputs?.connection as { user?: string } | undefined)?.user, fleet.users.sudo);
    });

    it("`pulumi destroy` leaves every file of the fleet byte for byte as it was", async () => {
        const run = await project.destroy();
        assertOk(run);
        for (const machine of fleet.machines) {
            assert.equal(
                await readFile(machine.hostsFile, "utf8"),
                original.get(machine.name),
                `${machine.name} is as it was`,
            );
        }
    });
});
