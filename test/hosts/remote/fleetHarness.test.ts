// The sshd fleet harness itself (test/support/sshFleet.ts, test/support/cuttingProxy.ts), checked with the
// SSH library the provider uses (ssh2) against the real servers: what the remote hosts-file suites rely
// on must hold before their results mean anything. Skips saying why where a fleet cannot run; fails in CI.

import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { connect as connectTcp } from "node:net";
import { join } from "node:path";
import { Client, type SFTPWrapper } from "ssh2";
import { closedPort, startCuttingProxy } from "../../support/cuttingProxy";
import {
    bindMountUnavailable,
    defaultHostsContent,
    type Fleet,
    type FleetMachine,
    fleetServerPids,
    requireFleet,
    startFleet,
} from "../../support/sshFleet";

interface Login {
    user: string;
    privateKey?: string;
    password?: string;
}

interface Session {
    client: Client;
    /** The host key blob the server presented, as ssh2's hostVerifier saw it. */
    hostKey: Buffer;
}

/** The fingerprint OpenSSH prints for a host key blob: SHA256, base64 without padding. */
function fingerprintOf(blob: Buffer): string {
    return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

async function login(port: number, credentials: Login): Promise<Session> {
    const client = new Client();
    let hostKey: Buffer | undefined;
    const ready = once(client, "ready");
    client.connect({
        host: "127.0.0.1",
        port,
        username: credentials.user,
        ...(credentials.privateKey ? { privateKey: credentials.privateKey } : {}),
        ...(credentials.password ? { password: credentials.password } : {}),
        tryKeyboard: false,
        hostVerifier: (key: Buffer) => {
            hostKey = key;
            return true;
        },
    });
    try {
        await ready;
    } catch (error) {
        client.end();
        throw error;
    }
    assert.ok(hostKey, "ssh2 called no hostVerifier");
    // After login, a server the test (or fleet.stop) kills resets the socket; ssh2 then emits `error`,
    // which without a listener is an uncaught exception that fails whatever runs next (seen in CI under
    // load: an ended client whose close had not finished when the `after` hook stopped the fleet).
    client.on("error", () => undefined);
    return { client, hostKey };
}

async function exec(client: Client, command: string): Promise<{ code: number; stdout: string; stderr: string }> {
    const channel = await new Promise<import("ssh2").ClientChannel>((resolve, reject) =>
        client.exec(command, (error, stream) => (error ? reject(error) : resolve(stream))),
    );
    let stdout = "";
    let stderr = "";
    channel.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
    });
    channel.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
    });
    // Nothing to send: the command reads end of file at once, as under `ssh host command </dev/null`
    // (sudo with Debian's `use_pty` relays stdin into its pty, and an open one can keep it waiting).
    channel.end();
    const [code] = (await once(channel, "close", { signal: AbortSignal.timeout(30_000) }).catch((error: Error) => {
        throw new Error(`\`${command}\` did not end within 30 s; it wrote ${JSON.stringify({ stdout, stderr })}`, {
            cause: error,
        });
    })) as [number];
    return { code, stdout, stderr };
}

async function sftpOf(client: Client): Promise<SFTPWrapper> {
    return new Promise((resolve, reject) => client.sftp((error, sftp) => (error ? reject(error) : resolve(sftp))));
}

/** An SFTP operation that answers only with an error or none. */
function act(operation: (callback: (error?: Error | null) => void) => void): Promise<void> {
    return new Promise((resolve, reject) => operation((error) => (error ? reject(error) : resolve())));
}

function call<T>(operation: (callback: (error: Error | null | undefined, value: T) => void) => void): Promise<T> {
    return new Promise((resolve, reject) => operation((error, value) => (error ? reject(error) : resolve(value))));
}

/** Resolves when `client`'s connection is gone, however it went (a reset is an "error" first). */
function closeOf(client: Client): Promise<void> {
    client.on("error", () => undefined);
    return new Promise((resolve) => client.once("close", () => resolve()));
}

/** The error a plain TCP connect to `port` ends with, or "connected". */
async function tcpOutcome(port: number): Promise<string> {
    const socket = connectTcp(port, "127.0.0.1");
    try {
        await once(socket, "connect");
        return "connected";
    } catch (error) {
        return (error as NodeJS.ErrnoException).code ?? String(error);
    } finally {
        socket.destroy();
    }
}

/** Pids whose command line is exactly `commandLine`. */
function pidsRunning(commandLine: string): number[] {
    return readdirSync("/proc")
        .filter((entry) => /^\d+$/.test(entry))
        .filter((pid) => {
            try {
                return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim() === commandLine;
            } catch {
                return false;
            }
        })
        .map(Number);
}

const M02_HOSTS = "# m02: a hosts file given by the test\r\n10.0.0.2 m02.internal\r\n";

describe("the sshd fleet harness: real OpenSSH servers, each its own machine", () => {
    let fleet: Fleet;
    const sessions: Client[] = [];
    const root = (machine: FleetMachine) => login(machine.port, { user: "root", privateKey: fleet.privateKey });

    before(async function () {
        requireFleet(this);
        fleet = await startFleet(3, {
            hostsContent: (name) => (name === "m02" ? M02_HOSTS : defaultHostsContent(name)),
            bindMountEtcHosts: bindMountUnavailable() ? [] : ["m03"],
        });
    });

    afterEach(() => {
        for (const client of sessions.splice(0)) client.end();
    });

    after(async () => {
        await fleet?.stop({ remove: true });
    });

    async function session(port: number, credentials: Login): Promise<Client> {
        const { client } = await login(port, credentials);
        sessions.push(client);
        return client;
    }

    it("answers on each machine's own port with its own host key, the one the harness reports", async () => {
        assert.equal(new Set(fleet.machines.map((machine) => machine.port)).size, 3);
        assert.equal(new Set(fleet.machines.map((machine) => machine.hostKeyFingerprint)).size, 3);
        for (const machine of fleet.machines) {
            const { client, hostKey } = await root(machine);
            sessions.push(client);
            assert.equal(fingerprintOf(hostKey), machine.hostKeyFingerprint, machine.name);
            assert.equal(`ssh-ed25519 ${hostKey.toString("base64")}`, machine.hostKey, machine.name);
            assert.match(machine.hostKeyFingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
            assert.deepEqual(await exec(client, "id -un"), { code: 0, stdout: "root\n", stderr: "" });
        }
    });

    it("logs plfleet in with the client key, with passwordless sudo; plnosudo has no sudo", async () => {
        const [machine] = fleet.machines as [FleetMachine];
        const sudoer = await session(machine.port, { user: fleet.users.sudo, privateKey: fleet.privateKey });
        assert.deepEqual(await exec(sudoer, "id -un"), { code: 0, stdout: "plfleet\n", stderr: "" });
        assert.equal((await exec(sudoer, "sudo -n true")).code, 0);
        assert.equal((await exec(sudoer, "sudo -n id -u")).stdout, "0\n");

        const plain = await session(machine.port, { user: fleet.users.noSudo, privateKey: fleet.privateKey });
        assert.equal((await exec(plain, "id -un")).stdout, "plnosudo\n");
        const refused = await exec(plain, "sudo -n true");
        assert.notEqual(refused.code, 0);
        assert.match(refused.stderr, /password is required/);
    });

    it("takes the fleet password for plfleet, and refuses a wrong one and any password for root", async () => {
        const [machine] = fleet.machines as [FleetMachine];
        const byPassword = await session(machine.port, { user: fleet.users.sudo, password: fleet.password });
        assert.equal((await exec(byPassword, "id -un")).stdout, "plfleet\n");
        for (const credentials of [
            { user: fleet.users.sudo, password: `${fleet.password}-wrong` },
            { user: "root", password: fleet.password },
        ]) {
            await assert.rejects(login(machine.port, credentials), (error: Error & { level?: string }) => {
                assert.equal(error.level, "client-authentication", `${credentials.user}: ${error.message}`);
                return true;
            });
        }
    });

    it("serves each machine's own hosts file over SFTP, byte for byte, alone in its directory", async () => {
        for (const machine of fleet.machines) {
            const sftp = await sftpOf(await session(machine.port, { user: "root", privateKey: fleet.privateKey }));
            const remote = await call<Buffer>((done) => sftp.readFile(machine.remoteHostsPath, done));
            const expected = machine.name === "m02" ? M02_HOSTS : defaultHostsContent(machine.name);
            assert.equal(remote.toString("utf8"), expected, machine.name);
            assert.deepEqual(remote, readFileSync(machine.hostsFile), machine.name);
            assert.deepEqual(readdirSync(machine.dir), ["hosts"], machine.name);
        }
    });

    it("bind-mounts a machine's hosts file at its /etc/hosts: written in place, never renamed over", async function () {
        const machine = fleet.machine("m03");
        if (!machine.bindMounted) requireFleet(this, { bindMount: true });
        const plain = fleet.machine("m01");
        const ownEtcHosts = readFileSync("/etc/hosts");
        const sftp = await sftpOf(await session(machine.port, { user: "root", privateKey: fleet.privateKey }));
        assert.equal(machine.remoteHostsPath, "/etc/hosts");
        assert.equal(
            (await call<Buffer>((done) => sftp.readFile("/etc/hosts", done))).toString(),
            defaultHostsContent("m03"),
        );

        const edited = `${defaultHostsContent("m03")}10.9.9.9\tedited.fleet.test\n`;
        await act((done) => sftp.writeFile("/etc/hosts", edited, done));
        assert.equal(readFileSync(machine.hostsFile, "utf8"), edited);

        // rename(2) onto the mount point fails (EBUSY), which is why the provider needs the in-place path;
        // the same rename onto a machine's plain file succeeds, so the mount is what refuses.
        const incoming = join(machine.dir, "incoming");
        await act((done) => sftp.writeFile(incoming, "replacement\n", done));
        await assert.rejects(act((done) => sftp.ext_openssh_rename(incoming, "/etc/hosts", done)));
        assert.equal(readFileSync(machine.hostsFile, "utf8"), edited);
        await act((done) => sftp.unlink(incoming, done));
        const control = join(plain.dir, "incoming");
        await act((done) => sftp.writeFile(control, defaultHostsContent("m01"), done));
        await act((done) => sftp.ext_openssh_rename(control, plain.hostsFile, done));
        assert.deepEqual(readdirSync(plain.dir), ["hosts"]);

        assert.deepEqual(readFileSync("/etc/hosts"), ownEtcHosts, "this machine's own /etc/hosts changed");
    });

    it("rotates a host key: same port, a new key that ssh2 sees", async () => {
        const machine = fleet.machine("m02");
        const { port, hostKeyFingerprint: before, hostKey: keyBefore } = machine;
        await machine.rotateHostKey();
        assert.equal(machine.port, port);
        assert.notEqual(machine.hostKeyFingerprint, before);
        assert.notEqual(machine.hostKey, keyBefore);
        const { client, hostKey } = await root(machine);
        sessions.push(client);
        assert.equal(fingerprintOf(hostKey), machine.hostKeyFingerprint);
    });

    it("stop() drops open connections and the port refuses; start() answers on the same port and key", async () => {
        const machine = fleet.machine("m01");
        const { port, hostKeyFingerprint } = machine;
        const { client } = await root(machine);
        const closed = closeOf(client);
        await machine.stop();
        await closed;
        assert.equal(machine.pid(), undefined);
        assert.equal(await tcpOutcome(port), "ECONNREFUSED");

        await machine.start();
        assert.equal(machine.port, port);
        assert.equal(typeof machine.pid(), "number");
        const again = await root(machine);
        sessions.push(again.client);
        assert.equal(fingerprintOf(again.hostKey), hostKeyFingerprint);
    });

    it("cutting proxy: forwards both ways, cuts after exactly N more client bytes, refuses on demand", async () => {
        const machine = fleet.machine("m01");
        const proxy = await startCuttingProxy(machine);
        try {
            const through = await login(proxy.port, { user: "root", privateKey: fleet.privateKey });
            assert.equal(fingerprintOf(through.hostKey), machine.hostKeyFingerprint);
            assert.equal((await exec(through.client, "echo through")).stdout, "through\n");
            assert.ok(proxy.clientToServer > 0 && proxy.serverToClient > 0);

            const sftp = await sftpOf(through.client);
            const armedAt = proxy.clientToServer;
            proxy.cutAfter(1000);
            const closed = closeOf(through.client);
            const cut = proxy.whenCut();
            const target = join(machine.dir, "big");
            // No callback to await: ssh2 1.17's writeFile never calls back when the connection drops
            // mid-write (after the failed write it sends CLOSE on the dead channel and waits for it).
            sftp.writeFile(target, Buffer.alloc(1 << 20, 0x61), () => undefined);
            assert.deepEqual(await cut, { connection: 1, clientToServer: armedAt + 1000 });
            await closed;
            assert.equal(proxy.clientToServer, armedAt + 1000);
            assert.equal(proxy.open, 0);
            // The server got at most those 1000 bytes, framing included: far from the 1 MiB written.
            assert.ok(!existsSync(target) || statSync(target).size < 1000, "more than the cut let through");

            // One-shot: the next connection passes untouched.
            const next = await login(proxy.port, { user: "root", privateKey: fleet.privateKey });
            sessions.push(next.client);
            assert.equal((await exec(next.client, `rm -f '${target}'; echo again`)).stdout, "again\n");
            assert.equal(proxy.connections, 2);

            await proxy.refuse();
            assert.equal(await tcpOutcome(proxy.port), "ECONNREFUSED");
            await proxy.accept();
            assert.equal(await tcpOutcome(proxy.port), "connected");
            assert.equal(await tcpOutcome(await closedPort()), "ECONNREFUSED");
        } finally {
            await proxy.close();
        }
    });

    it("stop() leaves no process behind: no server, no session", async () => {
        const [machine] = fleet.machines as [FleetMachine];
        const { client } = await root(machine);
        // A session child that would outlive a server killed alone.
        const marker = "sleep 86411";
        client.exec(marker, () => undefined);
        while (pidsRunning(marker).length === 0) await new Promise((resolve) => setImmediate(resolve));
        assert.equal(fleetServerPids(fleet.root).length, 3);

        await fleet.stop();
        assert.deepEqual(fleetServerPids(fleet.root), []);
        assert.deepEqual(pidsRunning(marker), []);
        for (const each of fleet.machines) assert.equal(each.pid(), undefined, each.name);
        client.end();
    });
});

describe("the sshd fleet harness at the issue's scale", () => {
    let fleet: Fleet | undefined;

    before(function () {
        requireFleet(this);
    });

    after(async () => {
        await fleet?.stop({ remove: true });
    });

    it("starts 20 machines at once, each answering ssh2 with its own key", async () => {
        const started = Date.now();
        fleet = await startFleet(20);
        console.log(`      20 machines answered ${Date.now() - started} ms after startFleet`);
        const seen = await Promise.all(
            fleet.machines.map(async (machine) => {
                const { client, hostKey } = await login(machine.port, {
                    user: "root",
                    privateKey: (fleet as Fleet).privateKey,
                });
                const closed = once(client, "close");
                client.end();
                await closed;
                assert.equal(fingerprintOf(hostKey), machine.hostKeyFingerprint, machine.name);
                return fingerprintOf(hostKey);
            }),
        );
        assert.equal(new Set(seen).size, 20);
        assert.equal(fleetServerPids(fleet.root).length, 20);
    });
});
