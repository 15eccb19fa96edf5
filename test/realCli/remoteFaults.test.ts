// Issue 21, faults, through the REAL Pulumi CLI against real OpenSSH servers (test/support/sshFleet.ts):
// a machine that refuses connections, a host key that changed, wrong credentials, a remote file that is a
// FIFO or a directory, two stacks' `up` on the same machines at once, a connection dropped in the middle
// of a large write, and the privilege step. Each checks every byte of every file and the stack's state,
// and that the next `up` converges with nothing lost.

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertOk, CliProject, type CliRun, nameOf } from "../support/cliProject";
import { type CuttingProxy, startCuttingProxy } from "../support/cuttingProxy";
import { makeTempDir } from "../support/projects";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { defaultHostsContent, type Fleet, type FleetMachine, requireFleet, startFleet } from "../support/sshFleet";

describe("remote hosts entries under faults, under the real Pulumi CLI", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let fleet: Fleet;
    const projects: CliProject[] = [];
    const proxies: CuttingProxy[] = [];

    before(async function () {
        cli = requirePulumiCli(this);
        requireFleet(this);
        fleet = await startFleet(4);
    });
    afterEach(async () => {
        await Promise.all(projects.splice(0).map((project) => project.cleanup()));
        const closing = proxies.splice(0);
        await Promise.all(closing.map((proxy) => proxy.close()));
        await fleet?.removeJournalsNaming(closing.map((proxy) => proxy.port));
        for (const machine of fleet?.machines ?? []) {
            if (machine.pid() === undefined) await machine.start();
            writeFileSync(machine.hostsFile, defaultHostsContent(machine.name));
        }
    });
    after(async () => {
        await fleet?.stop({ remove: true });
    });

    async function project(): Promise<CliProject> {
        const created = await CliProject.create(cli);
        projects.push(created);
        return created;
    }

    const connectionOf = (machine: FleetMachine, overrides: Record<string, unknown> = {}) => ({
        host: machine.host,
        port: machine.port,
        user: "root",
        hostKey: machine.hostKey,
        privateKey: fleet.privateKey,
        ...overrides,
    });
    const entry = (name: string, machine: FleetMachine, address: string, overrides: Record<string, unknown> = {}) => ({
        name,
        args: {
            address,
            names: [`${name}.fleet.test`],
            file: machine.remoteHostsPath,
            connection: connectionOf(machine),
            ...overrides,
        },
    });
    const lineOf = (name: string, address: string) => `${address}\t${name}.fleet.test\n`;
    const original = (machine: FleetMachine) => defaultHostsContent(machine.name);
    const fileOf = (machine: FleetMachine) => readFileSync(machine.hostsFile, "latin1");
    /** The file holds its original bytes, then exactly `lines`, in any order (the engine runs creates at once). */
    const assertHolds = (machine: FleetMachine, lines: string[]) => {
        const text = fileOf(machine);
        assert.ok(text.startsWith(original(machine)), `${machine.name}: the original content is intact:\n${text}`);
        const added = text
            .slice(original(machine).length)
            .split(/(?<=\n)/)
            .filter(Boolean);
        assert.deepEqual(added.sort(), [...lines].sort(), `${machine.name} holds exactly these lines`);
    };
    const steps = (run: CliRun, prefix: string) => run.steps.filter((step) => step.startsWith(prefix)).sort();
    const stateNames = async (of: CliProject) => (await of.state()).resources.map((r) => nameOf(r.urn)).sort();
    /** The errors about the resource `name`. */
    const errorsAbout = (run: CliRun, name: string) =>
        run.diagnostics
            .filter((d) => d.severity === "error" && d.urn !== undefined && nameOf(d.urn) === name)
            .map((d) => d.message)
            .join("\n");

    it("a machine that refuses connections fails only its own entries, naming it; the next `up` once it is back converges", async () => {
        const [m01, m02] = fleet.machines as [FleetMachine, FleetMachine];
        const p = await project();
        await p.program([
            entry("a1", m01, "10.1.0.1"),
            entry("a2", m01, "10.1.0.2"),
            entry("b1", m02, "10.2.0.1"),
            entry("b2", m02, "10.2.0.2"),
        ]);
        await m02.stop();
        const down = await p.up({ continueOnError: true });
        assert.equal(down.ok, false);
        assert.deepEqual(steps(down, "create a"), ["create a1", "create a2"]);
        assert.deepEqual(steps(down, "create b"), ["create b1 (failed)", "create b2 (failed)"]);
        for (const name of ["b1", "b2"]) {
            const message = errorsAbout(down, name);
            assert.ok(message.includes(`root@127.0.0.1:${m02.port}`), `${name}'s error names the machine: ${message}`);
            assert.match(message, /ECONNREFUSED/);
            assert.match(message, /Nothing accepts SSH connections on that port/);
        }
        assert.equal(errorsAbout(down, "a1"), "");
        assertHolds(m01, [lineOf("a1", "10.1.0.1"), lineOf("a2", "10.1.0.2")]);
        assert.equal(fileOf(m02), original(m02));
        assert.deepEqual(await stateNames(p), ["a1", "a2"]);

        await m02.start();
        const back = await p.up();
        assertOk(back);
        assert.deepEqual(steps(back, "create"), ["create b1", "create b2"]);
        assertHolds(m01, [lineOf("a1", "10.1.0.1"), lineOf("a2", "10.1.0.2")]);
        assertHolds(m02, [lineOf("b1", "10.2.0.1"), lineOf("b2", "10.2.0.2")]);
        assert.deepEqual(await stateNames(p), ["a1", "a2", "b1", "b2"]);
    });

    it("a host key that changed is refused with the new key's fingerprint and the pin to set, writing nothing; pinning it converges", async () => {
        const [, , m03, m04] = fleet.machines as FleetMachine[] as [
            FleetMachine,
            FleetMachine,
            FleetMachine,
            FleetMachine,
        ];
        const p = await project();
        const oldKey = m03.hostKey;
        await m03.rotateHostKey();
        assert.notEqual(m03.hostKey, oldKey);
        const pinnedOld = entry("c1", m03, "10.3.0.1", { connection: connectionOf(m03, { hostKey: oldKey }) });
        await p.program([pinnedOld, entry("d1", m04, "10.4.0.1")]);
        const refused = await p.up({ continueOnError: true });
        assert.equal(refused.ok, false);
        const message = errorsAbout(refused, "c1");
        assert.ok(message.includes(m03.hostKeyFingerprint), `the new fingerprint: ${message}`);
        assert.ok(message.includes(`hostKey: "${m03.hostKey}"`), `the pin to set: ${message}`);
        assert.match(message, /not the pinned SHA256:/);
        assert.match(message, /Nothing was sent to it/);
        assert.equal(fileOf(m03), original(m03), "nothing written");
        assert.equal(fileOf(m04), original(m04) + lineOf("d1", "10.4.0.1"));
        assert.deepEqual(await stateNames(p), ["d1"]);

        await p.program([entry("c1", m03, "10.3.0.1"), entry("d1", m04, "10.4.0.1")]);
        assertOk(await p.up());
        assert.equal(fileOf(m03), original(m03) + lineOf("c1", "10.3.0.1"));
        assert.equal(fileOf(m04), original(m04) + lineOf("d1", "10.4.0.1"));
        assert.deepEqual(await stateNames(p), ["c1", "d1"]);
    });

    it("wrong credentials (another key; a wrong password) fail naming the user and what to check, never the secret", async () => {
        const [m01, m02] = fleet.machines as [FleetMachine, FleetMachine];
        const temp = await makeTempDir("plfleet-otherkey-");
        try {
            const keyPath = join(temp.dir, "other");
            const made = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", keyPath]);
            assert.equal(made.status, 0, String(made.stderr));
            const otherKey = readFileSync(keyPath, "utf8");
            const keyBody = otherKey.split("\n")[1] as string;
            const wrongPassword = "pl-wrong-pw-5e1d0b";
            const p = await project();
            await p.program([
                entry("k1", m01, "10.1.0.9", { connection: connectionOf(m01, { privateKey: otherKey }) }),
                entry("w1", m02, "10.2.0.9", {
                    connection: connectionOf(m02, {
                        user: fleet.users.noSudo,
                        privateKey: undefined,
                        password: wrongPassword,
                    }),
                }),
            ]);
            const run = await p.up({ continueOnError: true });
            assert.equal(run.ok, false);
            const key = errorsAbout(run, "k1");
            assert.ok(key.includes(`root@127.0.0.1:${m01.port}`), key);
            const password = errorsAbout(run, "w1");
            assert.ok(password.includes(`${fleet.users.noSudo}@127.0.0.1:${m02.port}`), password);
            for (const message of [key, password]) {
                assert.match(message, /refused every authentication method/);
                assert.match(message, /Check `connection.user` and its credentials/);
            }
            const everything = [
                run.stdout,
                run.stderr,
                ...run.diagnostics.map((d) => d.message),
                await p.storedState(),
            ].join("\n");
            for (const secret of [keyBody, wrongPassword, fleet.privateKey.split("\n")[1] as string]) {
                assert.ok(!everything.includes(secret), "no secret in any output, diagnostic or stored state");
            }
            assert.equal(fileOf(m01), original(m01));
            assert.equal(fileOf(m02), original(m02));
            assert.deepEqual(await stateNames(p), []);
        } finally {
            await temp.cleanup();
        }
    });

    it("a remote file that is a FIFO or a directory is refused naming it, writing nothing, without hanging", async () => {
        const m04 = fleet.machine("m04");
        const fifo = join(m04.dir, "fifo-hosts");
        const directory = join(m04.dir, "dir-hosts");
        assert.equal(spawnSync("mkfifo", [fifo]).status, 0);
        mkdirSync(directory);
        try {
            const p = await project();
            await p.program([
                entry("f1", m04, "10.4.1.1", { file: fifo }),
                entry("g1", m04, "10.4.2.1", { file: directory }),
                entry("h1", m04, "10.4.3.1"),
            ]);
            const run = await p.up({ continueOnError: true });
            assert.equal(run.ok, false);
            const onFifo = errorsAbout(run, "f1");
            assert.ok(onFifo.includes(`root@127.0.0.1:${m04.port}:${fifo}`), onFifo);
            assert.match(onFifo, /not a regular file \(a FIFO, device or socket\)/);
            const onDirectory = errorsAbout(run, "g1");
            assert.ok(onDirectory.includes(`root@127.0.0.1:${m04.port}:${directory}`), onDirectory);
            assert.match(onDirectory, /it is a directory/);
            assert.ok(statSync(fifo).isFIFO(), "the FIFO is still a FIFO");
            assert.deepEqual(readdirSync(directory), [], "nothing written into the directory");
            assert.deepEqual(readdirSync(m04.dir).sort(), ["dir-hosts", "fifo-hosts", "hosts"]);
            assert.equal(fileOf(m04), original(m04) + lineOf("h1", "10.4.3.1"));
            assert.deepEqual(await stateNames(p), ["h1"]);
        } finally {
            rmSync(fifo, { force: true });
            rmSync(directory, { recursive: true, force: true });
        }
    });

    it("two stacks' `up` on the same machines at once both converge; every file holds both stacks' lines exactly once", async () => {
        const [m01, m02, m03] = fleet.machines as [FleetMachine, FleetMachine, FleetMachine];
        const machines = [m01, m02, m03];
        const [left, right] = await Promise.all([project(), project()]);
        const specsOf = (stack: string, octet: number) =>
            machines.flatMap((machine, m) =>
                [1, 2, 3].map((k) => entry(`${stack}-${machine.name}-${k}`, machine, `10.${octet}.${m}.${k}`)),
            );
        await left.program(specsOf("left", 50));
        await right.program(specsOf("right", 60));
        const [l, r] = await Promise.all([left.up(), right.up()]);
        assertOk(l);
        assertOk(r);
        for (const [m, machine] of machines.entries()) {
            const text = fileOf(machine);
            assert.ok(text.startsWith(original(machine)), `${machine.name}: the original content is intact`);
            const added = text
                .slice(original(machine).length)
                .split(/(?<=\n)/)
                .filter(Boolean)
                .sort();
            const expected = [50, 60].flatMap((octet) =>
                [1, 2, 3].map((k) =>
                    lineOf(`${octet === 50 ? "left" : "right"}-${machine.name}-${k}`, `10.${octet}.${m}.${k}`),
                ),
            );
            assert.deepEqual(added, expected.sort(), `${machine.name} holds both stacks' lines, each once`);
        }
        assert.equal((await stateNames(left)).length, 9);
        assert.equal((await stateNames(right)).length, 9);
        for (const machine of machines)
            assert.deepEqual(readdirSync(machine.dir), ["hosts"], "no lock or temporary left");
    });

    it("a connection dropped in the middle of a large write leaves the file whole; the next `up` converges and sweeps", async () => {
        const m02 = fleet.machine("m02");
        const filler = Array.from(
            { length: 50_000 },
            (_, k) => `10.${k >> 16}.${(k >> 8) & 255}.${k & 255}\tfill-${k}.test\n`,
        ).join("");
        const base = original(m02) + filler;
        writeFileSync(m02.hostsFile, base);
        const proxy = await startCuttingProxy({ host: "127.0.0.1", port: m02.port });
        proxies.push(proxy);
        const via = (name: string, address: string) =>
            entry(name, m02, address, { connection: connectionOf(m02, { port: proxy.port }) });
        const p = await project();
        await p.program([via("x1", "10.8.0.1")]);
        assertOk(await p.up());
        const afterFirst = base + lineOf("x1", "10.8.0.1");
        assert.equal(fileOf(m02), afterFirst);

        // The next up's only large upload is the ~1.6 MB temporary file: cut it in its middle.
        await p.program([via("x1", "10.8.0.1"), via("x2", "10.8.0.2")]);
        proxy.cutAfter(Math.floor(afterFirst.length / 2));
        const cut = await p.up();
        assert.equal(cut.ok, false);
        assert.equal(proxy.cuts.length, 1, "the connection was cut");
        const message = errorsAbout(cut, "x2");
        assert.ok(message.includes(`root@127.0.0.1:${proxy.port}:${m02.hostsFile}`), message);
        assert.match(message, /the SSH connection dropped during the operation\. Run it again/);
        assert.equal(fileOf(m02), afterFirst, "the file holds the old bytes, whole");
        assert.deepEqual(await stateNames(p), ["x1"]);
        assert.deepEqual(readdirSync(m02.dir), ["hosts"], "the failed write took its temporary and lock away");

        // What a provider killed in the middle of its upload leaves: the next `up` sweeps it.
        const stray = join(m02.dir, ".hosts.0123456789abcdef.pulumi-lifecycle.remote.tmp");
        writeFileSync(stray, filler.slice(0, 100_000));
        const next = await p.up();
        assertOk(next);
        assert.deepEqual(steps(next, "create"), ["create x2"]);
        assert.equal(fileOf(m02), afterFirst + lineOf("x2", "10.8.0.2"));
        assert.deepEqual(readdirSync(m02.dir), ["hosts"], "no temporary or lock left");
        assert.deepEqual(await stateNames(p), ["x1", "x2"]);
    });

    it('`privilege: "sudo"`: refused for a user without sudo, with what to set up; a sudoer writes a root-only file, keeping owner and mode', async () => {
        const [m01, m02] = fleet.machines as [FleetMachine, FleetMachine];
        const rootOnly = join(m02.dir, "root-only");
        mkdirSync(rootOnly, { mode: 0o700 });
        chmodSync(rootOnly, 0o700);
        const file = join(rootOnly, "hosts");
        writeFileSync(file, original(m02), { mode: 0o644 });
        try {
            const sudo = { privilege: "sudo", sftpServer: fleet.sftpServer };
            const p = await project();
            await p.program([
                entry("n1", m01, "10.1.5.1", { connection: connectionOf(m01, { user: fleet.users.noSudo, ...sudo }) }),
                entry("s1", m02, "10.2.5.1", {
                    file,
                    connection: connectionOf(m02, { user: fleet.users.sudo, ...sudo }),
                }),
            ]);
            const run = await p.up({ continueOnError: true });
            assert.equal(run.ok, false);
            const refused = errorsAbout(run, "n1");
            assert.ok(refused.includes(`${fleet.users.noSudo}@127.0.0.1:${m01.port}`), refused);
            assert.match(refused, /`connection.privilege: "sudo"` runs `sudo -n <sftpServer>`/);
            assert.match(refused, /NOPASSWD/);
            assert.equal(errorsAbout(run, "s1"), "");
            assert.equal(readFileSync(file, "latin1"), original(m02) + lineOf("s1", "10.2.5.1"));
            const info = statSync(file);
            assert.deepEqual([info.uid, info.gid, info.mode & 0o7777], [0, 0, 0o644], "root's, 0644, as it was");
            assert.deepEqual(readdirSync(rootOnly), ["hosts"]);
            assert.equal(fileOf(m01), original(m01));
            assert.deepEqual(await stateNames(p), ["s1"]);
        } finally {
            rmSync(rootOnly, { recursive: true, force: true });
        }
    });
});
