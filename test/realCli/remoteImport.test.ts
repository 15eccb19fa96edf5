// `pulumi-lifecycle hosts import --ssh` under the REAL Pulumi CLI against a real sshd: the program it
// prints declares the machine's user lines with a `connection` (host key pinned, the private key read
// from secret stack config), and its first `pulumi up` takes them over without writing a byte there; the
// private key is never in the program, nor in clear in the state.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { assertOk, CliProject } from "../support/cliProject";
import { REPO_ROOT } from "../support/projects";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { defaultHostsContent, type Fleet, type FleetMachine, requireFleet, startFleet } from "../support/sshFleet";

const run = promisify(execFile);
const MAIN = join(REPO_ROOT, "dist", "cli", "main.js");
const USER_LINES = "10.0.0.5\tweb.internal web # frontend\n10.0.0.6\tapi.internal\n";

describe("hosts import --ssh under the real Pulumi CLI", function () {
    this.timeout(180_000);
    let cli: PulumiCli;
    let fleet: Fleet;
    let machine: FleetMachine;
    let project: CliProject;

    before(async function () {
        cli = requirePulumiCli(this);
        requireFleet(this);
        fleet = await startFleet(1, { hostsContent: (name) => defaultHostsContent(name) + USER_LINES });
        machine = fleet.machines[0] as FleetMachine;
    });
    after(async () => {
        await project?.cleanup();
        await fleet?.stop({ remove: true });
    });

    const helper = (args: string[]) =>
        run(process.execPath, [MAIN, "hosts", "import", ...args], {
            cwd: project.dir,
            env: { ...process.env, ...project.env },
        }).then(
            ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
            (error: { code: number; stdout: string; stderr: string }) => error,
        );

    it("prints a program whose first up adopts the machine's user lines, writing nothing", async () => {
        project = await CliProject.create(cli, { secrets: { "cli-test:sshPrivateKey": fleet.privateKey } });
        await writeFile(join(project.dir, "Pulumi.yaml"), "name: cli-test\nruntime: nodejs\nmain: index.ts\n");
        const ssh = `root@127.0.0.1:${machine.port}`;
        const unpinned = await helper(["--ssh", ssh, "--file", machine.remoteHostsPath]);
        assert.equal(unpinned.code, 2);
        assert.match(unpinned.stderr, /--ssh needs --host-key/);
        const wrongKey = await helper([
            "--ssh",
            ssh,
            "--host-key",
            "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            "--file",
            machine.remoteHostsPath,
            "--identity",
            fleet.privateKeyPath,
        ]);
        assert.equal(wrongKey.code, 1);
        assert.ok(
            wrongKey.stderr.includes(machine.hostKeyFingerprint) && wrongKey.stderr.includes(machine.hostKey),
            wrongKey.stderr,
        );

        const generated = await helper([
            "--ssh",
            ssh,
            "--host-key",
            machine.hostKey,
            "--identity",
            fleet.privateKeyPath,
            "--file",
            machine.remoteHostsPath,
        ]);
        assert.equal(generated.code, 0, generated.stderr);
        const program = generated.stdout;
        assert.ok(
            !program.includes(fleet.privateKey.split("\n")[1] as string),
            "the private key is not in the program",
        );
        assert.match(program, /privateKey: new pulumi\.Config\(\)\.requireSecret\("sshPrivateKey"\)/);
        assert.match(program, new RegExp(`port: ${machine.port},`));
        assert.match(generated.stderr, new RegExp(`imported 2 entries from root@127\\.0\\.0\\.1:${machine.port}:`));
        await writeFile(join(project.dir, "index.ts"), program);

        const before = await readFile(machine.hostsFile);
        const up = await project.up();
        assertOk(up);
        assert.deepEqual([...up.steps].sort(), ["create api.internal", "create web.internal"]);
        assert.deepEqual(await readFile(machine.hostsFile), before, "adoption writes no byte on the machine");
        const preview = await project.preview();
        assertOk(preview);
        assert.deepEqual([...preview.steps].sort(), ["same api.internal", "same web.internal"]);
        assert.deepEqual((await project.outputs()).ids, {
            apiInternal: `ipv4/api.internal@127.0.0.1:${machine.port}`,
            webInternal: `ipv4/web.internal@127.0.0.1:${machine.port}`,
        });
        assert.ok(!(await project.storedState()).includes(fleet.privateKey.split("\n")[1] as string));
    });

    it("reads a line on the machine with HostEntry.get and the id the import printed (port and user defaulted as create's are)", async () => {
        // Follows the test above: its stack manages the lines; a get beside them reads one without managing it.
        const id = `ipv4/web.internal@127.0.0.1:${machine.port}`;
        const program = await readFile(join(project.dir, "index.ts"), "utf8");
        const seen = [
            `const seen = hosts.HostEntry.get("seen", ${JSON.stringify(id)}, {`,
            `    file: ${JSON.stringify(machine.remoteHostsPath)},`,
            `    connection: { host: "127.0.0.1", port: ${machine.port}, hostKey: ${JSON.stringify(machine.hostKey)}, privateKey: new pulumi.Config().requireSecret("sshPrivateKey") },`,
            "});",
            "export const seenAddress = seen.address;",
            "export const seenComment = seen.comment;",
        ].join("\n");
        await writeFile(join(project.dir, "index.ts"), `${program}\n${seen}\n`);
        const before = await readFile(machine.hostsFile);
        const up = await project.up();
        assertOk(up);
        assert.deepEqual([...up.steps].sort(), ["read seen", "same api.internal", "same web.internal"]);
        const outputs = await project.outputs();
        assert.equal(outputs.seenAddress, "10.0.0.5");
        assert.equal(outputs.seenComment, "frontend");
        assert.deepEqual(await readFile(machine.hostsFile), before, "a get writes nothing");
        assert.ok(!(await project.storedState()).includes(fleet.privateKey.split("\n")[1] as string));
    });
});
