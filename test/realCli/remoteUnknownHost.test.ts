// A remote HostEntry whose `connection.host` comes from another resource's output, under the REAL
// Pulumi CLI against a real sshd: in a preview where that resource is created or replaced, the host is
// unknown. The preview must neither fail nor connect anywhere, and must plan conservatively (another
// host may be another machine: a replacement); the `up` after it, where the host is known and is the
// same, must change nothing on the machine.

import { strict as assert } from "node:assert";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { assertOk, CliProject, type ResourceSpec } from "../support/cliProject";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { type Fleet, type FleetMachine, requireFleet, startFleet } from "../support/sshFleet";

describe("a remote HostEntry whose host is unknown in a preview, under the real Pulumi CLI", function () {
    this.timeout(180_000);
    let cli: PulumiCli;
    let fleet: Fleet;
    let machine: FleetMachine;
    let project: CliProject;
    let localFile: string;

    const program = (anchorName: string): ResourceSpec[] => [
        { name: "anchor", args: { address: "10.9.9.9", names: [anchorName], file: localFile } },
        {
            name: "web",
            args: {
                address: "10.0.0.5",
                names: ["web.fleet.test"],
                file: machine.remoteHostsPath,
                connection: {
                    host: machine.host,
                    port: machine.port,
                    user: "root",
                    hostKey: machine.hostKey,
                    privateKey: fleet.privateKey,
                },
            },
            hostFrom: "anchor",
        },
    ];

    before(async function () {
        cli = requirePulumiCli(this);
        requireFleet(this);
        fleet = await startFleet(1);
        machine = fleet.machines[0] as FleetMachine;
        project = await CliProject.create(cli);
        localFile = join(project.temp.dir, "local.hosts");
        await writeFile(localFile, "127.0.0.1\tlocalhost\n");
        project.trace();
    });
    after(async () => {
        await project?.cleanup();
        await fleet?.stop({ remove: true });
    });

    it("a first preview plans both creates without connecting; the up creates the line on the machine", async () => {
        const before = await readFile(machine.hostsFile, "utf8");
        await project.program(program("anchor.test"));
        const preview = await project.preview();
        assertOk(preview);
        assert.deepEqual(preview.steps, ["create anchor", "create web"]);
        assert.equal((await project.sshConnections()).length, 0, "a preview with an unknown host opens no connection");
        assert.equal(await readFile(machine.hostsFile, "utf8"), before);

        assertOk(await project.up());
        assert.equal(await readFile(machine.hostsFile, "utf8"), `${before}10.0.0.5\tweb.fleet.test\n`);
        assert.equal((await project.sshConnections()).length, 1, "the trace counts connections: the up opened one");
    });

    it("a preview where the host becomes unknown plans a replacement; the up, with the same host, leaves the machine's file as it was", async () => {
        const before = await readFile(machine.hostsFile, "utf8");
        // A new canonical name replaces the anchor, so its id (and web's host) is unknown in the preview.
        await project.program(program("anchor2.test"));
        const preview = await project.preview();
        assertOk(preview);
        assert.deepEqual(
            preview.steps.filter((step) => step.startsWith("replace ")),
            ["replace anchor", "replace web"],
            `the unknown host may be another machine: ${preview.steps.join(", ")}`,
        );

        const up = await project.up();
        assertOk(up);
        assert.ok(up.steps.includes("replace anchor"), up.steps.join(", "));
        assert.deepEqual(
            up.steps.filter((step) => step.endsWith(" web")),
            ["same web"],
            `with its host known, web is the same: ${up.steps.join(", ")}`,
        );
        assert.equal(await readFile(machine.hostsFile, "utf8"), before, "the same host: nothing changed there");
        const web = (await project.state()).resources.find((r) => r.urn.endsWith("::web"));
        assert.equal(web?.id, `ipv4/web.fleet.test@${machine.host}:${machine.port}`);

        assertOk(await project.destroy());
        assert.ok(!(await readFile(machine.hostsFile, "utf8")).includes("web.fleet.test"));
    });
});
