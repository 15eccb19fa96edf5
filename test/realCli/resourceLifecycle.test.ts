// Guards seed 002 (Pulumi's resource lifecycle: Read, Import, Manage with update and both replacement
// orders) for hosts.HostEntry under the REAL Pulumi CLI: a get (the engine's Read), adoption, an update,
// and replacement create-before-delete and delete-before-create with a dependent resource, in the order
// the engine's own events report them.

import { strict as assert } from "node:assert";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { assertOk, CliProject, nameOf, type ResourceSpec } from "../support/cliProject";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";

const BASE = "127.0.0.1\tlocalhost\n# kept as it is\n";

describe("seed 002 (read, import, manage, replace) under the real Pulumi CLI", function () {
    this.timeout(180_000);
    let cli: PulumiCli;
    let project: CliProject;
    let file: string;
    const text = () => readFile(file, "utf8");
    const web = (args: Record<string, unknown> = {}, options: ResourceSpec["options"] = {}): ResourceSpec => ({
        name: "web",
        args: { address: "10.0.0.5", names: ["web.internal", "web"], file, ...args },
        options,
    });

    before(function () {
        cli = requirePulumiCli(this);
    });
    beforeEach(async () => {
        project = await CliProject.create(cli);
        file = join(project.dir, "hosts");
        await writeFile(file, BASE);
    });
    afterEach(() => project.cleanup());

    it("Read: a get of an existing line reads it without managing it; destroy leaves it", async () => {
        await writeFile(file, `${BASE}10.0.0.9\tdb.internal db # by hand\n`);
        await project.program([{ name: "db", args: { file }, options: { id: "ipv4/db.internal" } }]);
        const run = await project.up();
        assertOk(run);
        assert.deepEqual(run.steps, ["read db"]);
        const [db] = (await project.state()).resources;
        assert.equal(db?.id, "ipv4/db.internal");
        assert.equal((db as { external?: boolean } | undefined)?.external, true, "read resources are external");
        assert.deepEqual(db?.outputs?.names, ["db.internal", "db"]);
        assert.equal(db?.outputs?.address, "10.0.0.9");
        assertOk(await project.destroy());
        assert.equal(await text(), `${BASE}10.0.0.9\tdb.internal db # by hand\n`);
    });

    it("Check: a misspelt input fails the up, naming the input meant, and no hosts file is touched", async () => {
        // A JavaScript program's `hostsFile` used to be dropped, and the entry written into /etc/hosts.
        const etcHosts = await readFile("/etc/hosts");
        await project.program([
            { name: "web", args: { address: "10.0.0.5", names: ["web.internal"], hostsFile: file } },
        ]);
        const run = await project.up();
        assert.equal(run.ok, false);
        assert.match(run.errors.join("\n"), /HostEntry has no input `hostsFile`\. Did you mean `file`\?/);
        assert.deepEqual((await project.state()).resources, [], "nothing is recorded");
        assert.equal(await text(), BASE);
        assert.deepEqual(await readFile("/etc/hosts"), etcHosts);
    });

    it("Read: a get of a line that is not there fails, naming the id", async () => {
        await project.program([{ name: "db", args: { file }, options: { id: "ipv4/db.internal" } }]);
        const run = await project.up();
        assert.equal(run.ok, false);
        assert.match(
            run.errors.join("\n"),
            /hosts entry "db.internal" \(IPv4\) is not in .*, so HostEntry.get cannot read it/,
        );
        assert.deepEqual((await project.state()).resources, [], "nothing is recorded");
        assert.equal(await text(), BASE);
    });

    it("Read: a get whose id names another machine than its connection fails with EntryMachineError, before connecting", async () => {
        // An id of an entry on 10.0.0.5 (as `hosts import --ssh` prints), without a connection: nothing is
        // dialled (no server listens there), the error says which machine the id means and what to pass.
        await project.program([{ name: "db", args: { file }, options: { id: "ipv4/db.internal@10.0.0.5:22" } }]);
        const away = await project.up();
        assert.equal(away.ok, false);
        assert.match(
            away.errors.join("\n"),
            /host entry id "ipv4\/db\.internal@10\.0\.0\.5:22" is an entry on 10\.0\.0\.5:22, but no `connection` was given: pass `connection` with the host and port of 10\.0\.0\.5:22/,
        );
        // The other way round: a local id, with a connection to another machine.
        const connection = {
            host: "10.0.0.5",
            user: "deploy",
            hostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        };
        await project.program([{ name: "db", args: { file, connection }, options: { id: "ipv4/db.internal" } }]);
        const local = await project.up();
        assert.equal(local.ok, false);
        assert.match(
            local.errors.join("\n"),
            /host entry id "ipv4\/db\.internal" is an entry of the machine running Pulumi, but `connection` names 10\.0\.0\.5:22: leave `connection` out/,
        );
        // A connection a get cannot use fails naming the field, as create's check would.
        await project.program([
            {
                name: "db",
                args: { file, connection: { ...connection, port: 0 } },
                options: { id: "ipv4/db.internal@10.0.0.5:22" },
            },
        ]);
        const bad = await project.up();
        assert.equal(bad.ok, false);
        assert.match(bad.errors.join("\n"), /the connection cannot be used: connection\.port /);
        assert.deepEqual((await project.state()).resources, [], "nothing is recorded");
        assert.equal(await text(), BASE);
    });

    it("Import by adoption: create takes over the identical line, not a byte written", async () => {
        const line = "10.0.0.5\tweb.internal web\n";
        await writeFile(file, BASE + line);
        await project.program([web({ adopt: true })]);
        const run = await project.up();
        assertOk(run);
        assert.deepEqual(run.steps, ["create web"]);
        assert.equal(await text(), BASE + line);
        const again = await project.preview();
        assertOk(again);
        assert.deepEqual(again.steps, ["same web"]);
    });

    it("Manage: update rewrites the line in place", async () => {
        await project.program([web()]);
        assertOk(await project.up());
        await project.program([web({ address: "10.0.0.6" })]);
        const run = await project.up();
        assertOk(run);
        assert.deepEqual(run.steps, ["update web"]);
        assert.equal(await text(), `${BASE}10.0.0.6\tweb.internal web\n`);
    });

    it("Replace create-before-delete: the dependent is updated between the create and the delete", async () => {
        const dependent: ResourceSpec = {
            name: "dependent",
            args: { address: "10.0.0.8", names: ["dependent.internal"], file },
            commentFrom: "web",
        };
        await project.program([web(), dependent]);
        assertOk(await project.up());
        assert.equal(
            await text(),
            `${BASE}10.0.0.5\tweb.internal web\n10.0.0.8\tdependent.internal # after ipv4/web.internal\n`,
        );
        await project.program([web({ names: ["api.internal"] }), dependent]);
        const run = await project.up();
        assertOk(run);
        assert.deepEqual(run.steps, [
            "create-replacement web",
            "replace web",
            "update dependent",
            "delete-replaced web",
        ]);
        assert.equal(
            await text(),
            `${BASE}10.0.0.8\tdependent.internal # after ipv4/api.internal\n10.0.0.5\tapi.internal\n`,
        );
    });

    it("Replace delete-before-create: dependents whose force-new inputs follow it are deleted first, then re-created", async () => {
        const dependent: ResourceSpec = {
            name: "dependent",
            args: { address: "10.0.0.8", file },
            namesFrom: "web",
        };
        await project.program([web(), dependent]);
        assertOk(await project.up());
        assert.equal(await text(), `${BASE}10.0.0.5\tweb.internal web\n10.0.0.8\talias.web.internal\n`);
        // A name shared with the old line: the provider asks for delete-before-replace.
        await project.program([web({ names: ["www.internal", "web"] }), dependent]);
        const run = await project.up();
        assertOk(run);
        assert.deepEqual(run.steps, [
            "delete-replaced dependent",
            "delete-replaced web",
            "replace web",
            "create-replacement web",
            "replace dependent",
            "create-replacement dependent",
        ]);
        assert.equal(await text(), `${BASE}10.0.0.5\twww.internal web\n10.0.0.8\talias.www.internal\n`);
        const state = await project.state();
        assert.deepEqual(state.resources.map((r) => `${nameOf(r.urn)} ${r.id}`).sort(), [
            "dependent ipv4/alias.www.internal",
            "web ipv4/www.internal",
        ]);
    });

    it("Replace with the deleteBeforeReplace option: the engine honours it even where the provider would not ask", async () => {
        await project.program([web()]);
        assertOk(await project.up());
        await project.program([web({ names: ["api.internal"] }, { deleteBeforeReplace: true })]);
        const run = await project.up();
        assertOk(run);
        assert.deepEqual(run.steps, ["delete-replaced web", "replace web", "create-replacement web"]);
        assert.equal(await text(), `${BASE}10.0.0.5\tapi.internal\n`);
    });
});
