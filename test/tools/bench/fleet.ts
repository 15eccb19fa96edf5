// Fleet benchmark (issue 21): 20 machines x 50 entries, created and then refreshed, on real OpenSSH
// servers (test/support/sshFleet.ts). Ours, through the real CLI (`pulumi up`, then `pulumi refresh`, of
// 1,000 remote HostEntry resources) and through the provider layer alone (the compiled HostEntryProvider
// with its HostsFileStore and SshMachines, calls issued as many at a time as the engine issues them),
// beside the peer: the same work as a `@pulumi/command` `remote.Command` script does it, one OpenSSH
// `ssh` command per entry, as many at a time as the engine runs; and beside two limits: the local file
// layer doing the same edits on 20 local files (no network), and bare SFTP (one connection per machine,
// one read and one write of its file per machine, nothing checked or locked).
//
// Counted, not estimated: connections (our trace's sshConnect lines, and ssh2 connects counted in the
// process that makes them; one per `ssh` command for the peer) and SFTP requests (ssh2's request ids,
// counted in the process that sends them: this one, or the CLI's provider process through a preload in
// NODE_OPTIONS). Round trips also count each connection's setup, measured once per client through a
// proxy that counts the turns of the byte stream.
//
// `PL_FLEET_BENCH_CLI=1 npm run bench -- fleet` adds the real CLI, which alone takes 8 minutes or more
// (without it, a run takes about 5 minutes on 2 cores). Smaller runs while working on it: PL_FLEET_BENCH_MACHINES, PL_FLEET_BENCH_ENTRIES.

import { execFile } from "node:child_process";
import { once } from "node:events";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import type { LocalWorkspace } from "@pulumi/pulumi/automation";
import { assertOk, CliProject, type ResourceSpec } from "../../support/cliProject";
import { makeTempDir, REPO_ROOT, type TempDir } from "../../support/projects";
import { pulumiCli } from "../../support/pulumiCli";
import {
    defaultHostsContent,
    type Fleet,
    type FleetMachine,
    fleetUnavailable,
    startFleet,
} from "../../support/sshFleet";
import { ENGINE_PARALLEL, inFlight } from "./hostsBench";
import { machineLine, table } from "./machine";

const run = promisify(execFile);

const MACHINES = Number(process.env.PL_FLEET_BENCH_MACHINES ?? 20);
const ENTRIES_PER_MACHINE = Number(process.env.PL_FLEET_BENCH_ENTRIES ?? 50);
/** The real CLI adds 8 minutes or more (the engine's own pace for 1,000 resources): asked for, not by default. */
const WITH_CLI = process.env.PL_FLEET_BENCH_CLI === "1";

// ---------------------------------------------------------------------------------------------------
// Counting SSH in whichever process makes the connections: this one, or the CLI's provider process.

/**
 * A preload (`node --require`) counting ssh2 connects and the SFTP requests of every session (ssh2
 * numbers each request: the last id + 1 is how many were sent). In the CLI's processes it writes its
 * counts to $PL_BENCH_SSH_COUNTS/<pid>.json while it runs and when it is ended.
 */
const COUNTER = (ssh2: string) => `"use strict";
const { writeFileSync } = require("node:fs");
const { Client } = require(${JSON.stringify(ssh2)});
if (!Client.prototype.__plCounted) {
    Client.prototype.__plCounted = true;
    const state = { connects: 0, sessions: [] };
    const connect = Client.prototype.connect;
    Client.prototype.connect = function (...args) { state.connects++; return connect.apply(this, args); };
    const sftp = Client.prototype.sftp;
    Client.prototype.sftp = function (env, cb) {
        const done = typeof env === "function" ? env : cb;
        const counted = (error, session) => { if (session) state.sessions.push(session); done(error, session); };
        return typeof env === "function" ? sftp.call(this, counted) : sftp.call(this, env, counted);
    };
    const counts = () => ({
        connects: state.connects,
        requests: state.sessions.reduce((sum, s) => sum + s._writeReqid + 1, 0),
    });
    globalThis.__plSshCounts = counts;
    const dir = process.env.PL_BENCH_SSH_COUNTS;
    if (dir) {
        const flush = () => { if (state.connects > 0) writeFileSync(dir + "/" + process.pid + ".json", JSON.stringify(counts())); };
        setInterval(flush, 100).unref();
        process.on("exit", flush);
        for (const signal of ["SIGINT", "SIGTERM"]) {
            process.once(signal, () => {
                flush();
                // Whatever the process does on the signal is left to it; with no handler, the default.
                if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
            });
        }
    }
}
`;

interface SshCounts {
    connects: number;
    requests: number;
}

/** This process's counts so far (the counter is loaded before any connection). */
function countsHere(): SshCounts {
    return (globalThis as unknown as { __plSshCounts: () => SshCounts }).__plSshCounts();
}

async function countsIn(dir: string): Promise<SshCounts> {
    const files = (await readdir(dir)).filter((name) => name.endsWith(".json"));
    const all = await Promise.all(files.map(async (name) => JSON.parse(await readFile(join(dir, name), "utf8"))));
    return all.reduce<SshCounts>(
        (sum, c: SshCounts) => ({ connects: sum.connects + c.connects, requests: sum.requests + c.requests }),
        { connects: 0, requests: 0 },
    );
}

const minus = (a: SshCounts, b: SshCounts): SshCounts => ({
    connects: a.connects - b.connects,
    requests: a.requests - b.requests,
});

// ---------------------------------------------------------------------------------------------------
// The work: entry k of machine m, the same line for every way of writing it.

interface Entry {
    readonly machine: FleetMachine;
    readonly index: number;
    readonly address: string;
    readonly name: string;
    /** The line as every variant writes it. */
    readonly line: string;
}

function entriesOf(fleet: Fleet): Entry[] {
    return fleet.machines.flatMap((machine, m) =>
        Array.from({ length: ENTRIES_PER_MACHINE }, (_, k) => {
            const address = `10.${m}.${k >> 8}.${(k & 255) + 1}`;
            const name = `e${k}.fleet.test`;
            return { machine, index: m, address, name, line: `${address}\t${name}\n` };
        }),
    );
}

/** Puts every machine back to its original hosts file, with nothing else beside it (locks, journals). */
async function resetFleet(fleet: Fleet): Promise<void> {
    for (const machine of fleet.machines) {
        for (const name of await readdir(machine.dir)) {
            if (name !== "hosts") await rm(join(machine.dir, name), { force: true, recursive: true });
        }
        await writeFile(machine.hostsFile, defaultHostsContent(machine.name));
    }
}

/** Throws unless `file` holds its original bytes followed by exactly `lines` (in any order). */
async function assertHolds(file: string, base: string, lines: string[], what: string): Promise<void> {
    const text = await readFile(file, "utf8");
    const added = text.startsWith(base) ? text.slice(base.length).split(/(?<=\n)/) : undefined;
    const same = added && JSON.stringify([...added].sort()) === JSON.stringify([...lines].sort());
    if (!same) throw new Error(`${what}: ${file} does not hold its original content and its ${lines.length} lines`);
}

async function assertFleetHolds(fleet: Fleet, entries: Entry[], what: string): Promise<void> {
    for (const machine of fleet.machines) {
        const lines = entries.filter((e) => e.machine === machine).map((e) => e.line);
        await assertHolds(machine.hostsFile, defaultHostsContent(machine.name), lines, what);
    }
}

/** Runs `work(i)` for i < n, `parallel` at a time (as the engine schedules); resolves with the wall time in seconds. */
/** `inFlight` with the parallelism first, so the work reads last. */
function inFlightAt(parallel: number, n: number, work: (i: number) => Promise<unknown>): Promise<number> {
    return inFlight(n, work, parallel);
}

async function timed(work: () => Promise<unknown>): Promise<number> {
    const started = performance.now();
    await work();
    return (performance.now() - started) / 1000;
}

/** One way of doing the work: its figures for the create and the refresh. */
interface Measured {
    readonly label: string;
    readonly createSeconds: number;
    readonly refreshSeconds: number;
    readonly connections: number;
    /** SFTP requests, or remote commands for the peer. */
    readonly requests: number;
    /** Connection setups times the turns one takes, plus requests (each request waits for its answer). */
    readonly roundTrips: number | undefined;
    readonly note?: string;
}

// ---------------------------------------------------------------------------------------------------
// Ours: the compiled provider (what the CLI's provider process runs), loaded from dist.

type ProviderModule = typeof import("../../../provider/hosts/hostEntryProvider");
type StoreModule = typeof import("../../../provider/hosts/io/hostsFileStore");
type JournalModule = typeof import("../../../provider/hosts/io/createJournal");
type HostEntryInputs = import("../../../provider/hosts/hostEntrySchema").HostEntryInputs;
type MachinesModule = typeof import("../../../provider/hosts/remote/sshMachines");

const dist = (path: string) => join(REPO_ROOT, "dist", "hosts", path);

interface ProviderProcess {
    readonly provider: InstanceType<ProviderModule["HostEntryProvider"]>;
    readonly connectionsTraced: () => number;
    readonly close: () => Promise<void>;
}

/** A provider as one provider process has it: its own store, journal and SSH connections. */
function providerProcess(): ProviderProcess {
    const { HostEntryProvider } = require(dist("hostEntryProvider.js")) as ProviderModule;
    const { HostsFileStore } = require(dist("io/hostsFileStore.js")) as StoreModule;
    const { CreateJournal } = require(dist("io/createJournal.js")) as JournalModule;
    const { SshMachines } = require(dist("remote/sshMachines.js")) as MachinesModule;
    let traced = 0;
    const machines = new SshMachines(() => traced++);
    const journal = new CreateJournal();
    const store = new HostsFileStore({ lock: { timeoutMs: 30_000, staleMs: 60_000 }, journal });
    const provider = new HostEntryProvider(store, journal, (connection, credentials) =>
        machines.filesOn(connection, credentials),
    );
    return { provider, connectionsTraced: () => traced, close: () => machines.close() };
}

/** The inputs the engine sends for an entry: the resource class has split the key out into `credentials`. */
function inputsOf(entry: Entry, fleet: Fleet | undefined, file: string): HostEntryInputs {
    const inputs: Record<string, unknown> = {
        address: entry.address,
        names: [entry.name],
        file,
        __owner: "organization/fleet-bench/dev",
    };
    if (fleet) {
        const { host, port, hostKey } = entry.machine;
        inputs.connection = { host, port, user: "root", hostKey };
        inputs.credentials = { privateKey: fleet.privateKey };
    }
    return inputs as unknown as HostEntryInputs;
}

type Created = Awaited<ReturnType<ProviderProcess["provider"]["create"]>>;

/**
 * The creates, then (in a new provider, as `pulumi refresh` starts a new provider process) the reads, of
 * every entry, ENGINE_PARALLEL calls at a time. `fileOf` is where entry i lives; with a fleet, remote.
 */
async function benchProvider(
    entries: Entry[],
    fleet: Fleet | undefined,
    fileOf: (entry: Entry) => string,
): Promise<{ createSeconds: number; refreshSeconds: number; traced: number }> {
    const outs: Created[] = [];
    let traced = 0;
    const creating = providerProcess();
    let createSeconds: number;
    try {
        createSeconds = await inFlightAt(ENGINE_PARALLEL, entries.length, async (i) => {
            const entry = entries[i] as Entry;
            const news = inputsOf(entry, fleet, fileOf(entry));
            const { inputs, failures } = await creating.provider.check({} as HostEntryInputs, news);
            if (failures?.length || !inputs)
                throw new Error(`check of ${entry.name} failed: ${JSON.stringify(failures)}`);
            outs[i] = await creating.provider.create(inputs);
        });
    } finally {
        traced += creating.connectionsTraced();
        await creating.close();
    }
    const reading = providerProcess();
    let refreshSeconds: number;
    try {
        refreshSeconds = await inFlightAt(ENGINE_PARALLEL, entries.length, async (i) => {
            const created = outs[i] as Created;
            const read = await reading.provider.read(created.id, created.outs);
            if (read.id !== created.id || read.props?.address !== (entries[i] as Entry).address) {
                throw new Error(`the read of ${created.id} did not find its entry: ${JSON.stringify(read)}`);
            }
        });
    } finally {
        traced += reading.connectionsTraced();
        await reading.close();
    }
    return { createSeconds, refreshSeconds, traced };
}

async function ours(fleet: Fleet, entries: Entry[]): Promise<Measured> {
    await resetFleet(fleet);
    const before = countsHere();
    const { createSeconds, refreshSeconds, traced } = await benchProvider(
        entries,
        fleet,
        (entry) => entry.machine.remoteHostsPath,
    );
    const counted = minus(countsHere(), before);
    if (counted.connects !== traced) throw new Error(`ssh2 counted ${counted.connects} connects, the trace ${traced}`);
    await assertFleetHolds(fleet, entries, "the provider layer");
    return {
        label: "ours: provider layer",
        createSeconds,
        refreshSeconds,
        connections: counted.connects,
        requests: counted.requests,
        roundTrips: undefined,
    };
}

/** The limit: the same creates and reads through the local file layer, on 20 local files. */
async function localLimit(fleet: Fleet, entries: Entry[], temp: TempDir): Promise<Measured> {
    const fileOf = (entry: Entry) => join(temp.dir, entry.machine.name);
    for (const machine of fleet.machines)
        await writeFile(join(temp.dir, machine.name), defaultHostsContent(machine.name));
    const { createSeconds, refreshSeconds } = await benchProvider(entries, undefined, fileOf);
    for (const machine of fleet.machines) {
        const lines = entries.filter((e) => e.machine === machine).map((e) => e.line);
        await assertHolds(join(temp.dir, machine.name), defaultHostsContent(machine.name), lines, "the local limit");
    }
    return {
        label: "limit: local file layer",
        createSeconds,
        refreshSeconds,
        connections: 0,
        requests: 0,
        roundTrips: 0,
    };
}

/** The limit over the network: per machine, one connection, one read of the file and one write of it whole. */
async function bareSftp(fleet: Fleet, entries: Entry[]): Promise<Measured> {
    await resetFleet(fleet);
    const { Client } = require("ssh2") as typeof import("ssh2");
    const before = countsHere();
    const session = async (machine: FleetMachine, work: (sftp: import("ssh2").SFTPWrapper) => Promise<void>) => {
        const client = new Client();
        await new Promise<void>((resolve, reject) => {
            client.once("ready", resolve).once("error", reject);
            client.connect({ host: machine.host, port: machine.port, username: "root", privateKey: fleet.privateKey });
        });
        try {
            const sftp = await new Promise<import("ssh2").SFTPWrapper>((resolve, reject) =>
                client.sftp((error, s) => (error ? reject(error) : resolve(s))),
            );
            await work(sftp);
        } finally {
            client.end();
        }
    };
    const read = (sftp: import("ssh2").SFTPWrapper, path: string) =>
        new Promise<Buffer>((resolve, reject) =>
            sftp.readFile(path, (error, data) => (error ? reject(error) : resolve(data))),
        );
    const createSeconds = await timed(() =>
        Promise.all(
            fleet.machines.map((machine) =>
                session(machine, async (sftp) => {
                    const text = await read(sftp, machine.remoteHostsPath);
                    const lines = entries.filter((e) => e.machine === machine).map((e) => e.line);
                    const data = Buffer.concat([text, Buffer.from(lines.join(""))]);
                    await new Promise<void>((resolve, reject) =>
                        sftp.writeFile(machine.remoteHostsPath, data, (error) => (error ? reject(error) : resolve())),
                    );
                }),
            ),
        ),
    );
    await assertFleetHolds(fleet, entries, "bare SFTP");
    const refreshSeconds = await timed(() =>
        Promise.all(
            fleet.machines.map((machine) =>
                session(machine, async (sftp) => {
                    const text = (await read(sftp, machine.remoteHostsPath)).toString();
                    const missing = entries.find((e) => e.machine === machine && !text.includes(e.line));
                    if (missing) throw new Error(`bare SFTP: ${missing.name} is not on ${machine.name}`);
                }),
            ),
        ),
    );
    const counted = minus(countsHere(), before);
    return {
        label: "limit: bare SFTP",
        createSeconds,
        refreshSeconds,
        connections: counted.connects,
        requests: counted.requests,
        roundTrips: undefined,
    };
}

// ---------------------------------------------------------------------------------------------------
// The peer: one `ssh` per entry, as a `remote.Command` per entry does.

/** The OpenSSH client's arguments: the fleet's key, the machine's host key pinned, nothing from ~/.ssh. */
function sshArgs(fleet: Fleet, machine: FleetMachine, knownHosts: string, command: string): string[] {
    return [
        "-F",
        "/dev/null",
        "-i",
        fleet.privateKeyPath,
        "-p",
        String(machine.port),
        "-o",
        "BatchMode=yes",
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        `UserKnownHostsFile=${knownHosts}`,
        "-o",
        "GlobalKnownHostsFile=/dev/null",
        "-o",
        "LogLevel=ERROR",
        // The key exchange ssh2 negotiates with these servers (and Go's x/crypto/ssh, which remote.Command
        // uses, with OpenSSH 9.2): OpenSSH's own default, sntrup761x25519, costs this client and the
        // server about half as much CPU again per connection.
        "-o",
        "KexAlgorithms=curve25519-sha256",
        `root@${machine.host}`,
        command,
    ];
}

const escaped = (text: string) => text.replaceAll(".", "\\.");

/** A create as a remote.Command script writes it: append the line unless the address is there. */
const createCommand = (entry: Entry) =>
    `grep -qE '^${escaped(entry.address)}[[:space:]]' ${entry.machine.remoteHostsPath} || ` +
    `printf '${entry.address}\\t${entry.name}\\n' >> ${entry.machine.remoteHostsPath}`;

/** A read-back: the line holding the name. */
const readCommand = (entry: Entry) =>
    `grep -E '[[:space:]]${escaped(entry.name)}([[:space:]]|$)' ${entry.machine.remoteHostsPath}`;

async function peer(fleet: Fleet, entries: Entry[], temp: TempDir): Promise<Measured> {
    await resetFleet(fleet);
    const knownHosts = join(temp.dir, "known_hosts");
    await writeFile(knownHosts, fleet.machines.map((m) => `[${m.host}]:${m.port} ${m.hostKey}\n`).join(""));
    let commands = 0;
    const ssh = async (entry: Entry, command: string) => {
        commands++;
        return (await run("ssh", sshArgs(fleet, entry.machine, knownHosts, command))).stdout;
    };
    const createSeconds = await inFlightAt(ENGINE_PARALLEL, entries.length, (i) =>
        ssh(entries[i] as Entry, createCommand(entries[i] as Entry)),
    );
    await assertFleetHolds(fleet, entries, "the peer");
    const refreshSeconds = await inFlightAt(ENGINE_PARALLEL, entries.length, async (i) => {
        const entry = entries[i] as Entry;
        const line = await ssh(entry, readCommand(entry));
        if (line !== entry.line) throw new Error(`the peer read ${JSON.stringify(line)} for ${entry.name}`);
    });
    return {
        label: "peer: one ssh per entry",
        createSeconds,
        refreshSeconds,
        connections: commands,
        requests: commands,
        roundTrips: undefined,
    };
}

// ---------------------------------------------------------------------------------------------------
// Round trips of one connection's setup, per client: the turns of the byte stream through a proxy.

/**
 * Relays one connection to `port` and counts its turns: how often the side that sends changes, from
 * the client's first byte to the end. A request answered before the next is sent is one turn each way.
 */
async function countTurns(port: number, client: (proxyPort: number) => Promise<void>): Promise<number> {
    let turns = 0;
    let last: "up" | "down" | undefined;
    const note = (direction: "up" | "down") => {
        if (direction !== last) turns++;
        last = direction;
    };
    const server = createServer((inbound: Socket) => {
        const outbound = connect(port, "127.0.0.1");
        inbound.on("data", (chunk) => {
            note("up");
            outbound.write(chunk);
        });
        outbound.on("data", (chunk) => {
            note("down");
            inbound.write(chunk);
        });
        inbound.on("close", () => outbound.destroy());
        outbound.on("close", () => inbound.destroy());
        inbound.on("error", () => outbound.destroy());
        outbound.on("error", () => inbound.destroy());
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
        await client((server.address() as { port: number }).port);
    } finally {
        server.close();
    }
    // Round trips: a turn up and a turn down.
    return Math.ceil(turns / 2);
}

/** Round trips of a connection's setup for ssh2 (connect, log in, start SFTP, end) and for `ssh ... true`. */
async function setupRoundTrips(fleet: Fleet, temp: TempDir): Promise<{ ssh2: number; openssh: number }> {
    const machine = fleet.machines[0] as FleetMachine;
    const { Client } = require("ssh2") as typeof import("ssh2");
    const ssh2 = await countTurns(machine.port, async (port) => {
        const client = new Client();
        const closed = once(client, "close");
        await new Promise<void>((resolve, reject) => {
            client.once("ready", resolve).once("error", reject);
            client.connect({ host: "127.0.0.1", port, username: "root", privateKey: fleet.privateKey });
        });
        await new Promise<void>((resolve, reject) => client.sftp((error) => (error ? reject(error) : resolve())));
        client.end();
        await closed;
    });
    const knownHosts = join(temp.dir, "known_hosts_proxy");
    const openssh = await countTurns(machine.port, async (port) => {
        await writeFile(knownHosts, `[127.0.0.1]:${port} ${machine.hostKey}\n`);
        await run("ssh", sshArgs(fleet, { ...machine, port }, knownHosts, "true"));
    });
    return { ssh2, openssh };
}

// ---------------------------------------------------------------------------------------------------
// Ours through the real CLI.

async function throughCli(fleet: Fleet, entries: Entry[]): Promise<Measured | string> {
    const cli = pulumiCli();
    if (typeof cli === "string") return cli;
    await resetFleet(fleet);
    const project = await CliProject.create(cli, { name: "fleet-bench" });
    try {
        project.trace();
        const counts = join(project.temp.dir, "ssh-counts");
        await run("mkdir", [counts]);
        const counter = join(project.temp.dir, "ssh-counter.js");
        await writeFile(counter, COUNTER(require.resolve("ssh2")));
        const env = (project.stack.workspace as LocalWorkspace).envVars;
        env.PL_BENCH_SSH_COUNTS = counts;
        env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --require ${counter}`.trim();
        const specs: ResourceSpec[] = entries.map((entry) => ({
            name: `${entry.machine.name}-${entry.name.split(".")[0]}`,
            args: {
                address: entry.address,
                names: [entry.name],
                file: entry.machine.remoteHostsPath,
                connection: {
                    host: entry.machine.host,
                    port: entry.machine.port,
                    user: "root",
                    hostKey: entry.machine.hostKey,
                    privateKey: fleet.privateKey,
                },
            },
        }));
        await project.program(specs);
        let up: Awaited<ReturnType<CliProject["up"]>> | undefined;
        const createSeconds = await timed(async () => {
            up = await project.up();
        });
        assertOk(up as NonNullable<typeof up>);
        await assertFleetHolds(fleet, entries, "pulumi up");
        let refresh: Awaited<ReturnType<CliProject["refresh"]>> | undefined;
        const refreshSeconds = await timed(async () => {
            refresh = await project.refresh();
        });
        assertOk(refresh as NonNullable<typeof refresh>);
        const state = await project.state();
        if (state.resources.length !== entries.length) {
            throw new Error(
                `after pulumi refresh the stack holds ${state.resources.length} of ${entries.length} entries`,
            );
        }
        const traced = (await project.sshConnections()).length;
        const counted = await countsIn(counts);
        if (counted.connects !== traced) {
            throw new Error(`the provider processes counted ${counted.connects} ssh2 connects, the trace ${traced}`);
        }
        return {
            label: "ours: pulumi up / refresh",
            createSeconds,
            refreshSeconds,
            connections: counted.connects,
            requests: counted.requests,
            roundTrips: undefined,
            note: `${up?.steps.filter((s) => s.startsWith("create ")).length} creates`,
        };
    } finally {
        await project.cleanup();
    }
}

// ---------------------------------------------------------------------------------------------------

/** Runs one way of doing the work, saying on stderr what runs (the tables come at the end). */
async function phase<T>(what: string, work: () => Promise<T>): Promise<T> {
    process.stderr.write(`fleet: ${what}...\n`);
    return work();
}

const seconds = (value: number) => `${value.toFixed(2)} s`;
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : "n/a");

/** `npm run bench -- fleet`: prints the machine, the figures, and ours as ratios of the peer and the limits. */
export async function printFleetBench(): Promise<void> {
    const why = fleetUnavailable();
    if (why) throw new Error(`the fleet benchmark needs real sshd: ${why}`);
    const total = (MACHINES * ENTRIES_PER_MACHINE).toLocaleString("en-US");
    console.log(`A fleet: ${MACHINES} machines (real sshd, 127.0.0.1) x ${ENTRIES_PER_MACHINE} entries = ${total},`);
    console.log(
        `created, then refreshed (read back), ${ENGINE_PARALLEL} operations at a time (the engine's --parallel here)`,
    );
    console.log(`Machine: ${machineLine()}`);
    const benchStarted = performance.now();
    const temp = await makeTempDir("pulumi-lifecycle-fleet-bench-");
    // Loaded before any connection, so this process's counts start at zero.
    const counter = join(temp.dir, "ssh-counter.js");
    await writeFile(counter, COUNTER(require.resolve("ssh2")));
    require(counter);
    const fleet = await startFleet(MACHINES);
    try {
        const entries = entriesOf(fleet);
        const setup = await setupRoundTrips(fleet, temp);
        const limit = await phase("the local file layer", () => localLimit(fleet, entries, temp));
        const bare = await phase("bare SFTP", () => bareSftp(fleet, entries));
        const provider = await phase("the provider layer", () => ours(fleet, entries));
        const ssh = await phase("one ssh per entry", () => peer(fleet, entries, temp));
        const cli = WITH_CLI
            ? await phase("pulumi up, pulumi refresh", () => throughCli(fleet, entries))
            : "not run (PL_FLEET_BENCH_CLI=1 runs it)";
        const withTrips = (m: Measured, perConnection: number): Measured => ({
            ...m,
            roundTrips: m.connections * perConnection + m.requests,
        });
        const oursCli = typeof cli === "string" ? undefined : withTrips(cli, setup.ssh2);
        const oursProvider = withTrips(provider, setup.ssh2);
        // Each ssh command's setup already includes its one command (the relay counted it with `true`).
        const peerRow: Measured = { ...ssh, roundTrips: ssh.connections * setup.openssh };
        const bareRow = withTrips(bare, setup.ssh2);
        const rows = [...(oursCli ? [oursCli] : []), oursProvider, peerRow, limit, bareRow];
        console.log(
            "Round trips of one connection's setup, counted through a relay: ssh2 (connect, log in, start SFTP) " +
                `${setup.ssh2}, \`ssh ... true\` ${setup.openssh}\n`,
        );
        console.log(
            table(
                ["", "create", "refresh", "connections", "SFTP requests / commands", "round trips"],
                rows.map((m) => [
                    m.label,
                    seconds(m.createSeconds),
                    seconds(m.refreshSeconds),
                    String(m.connections),
                    String(m.requests),
                    m.roundTrips === undefined ? "n/a" : String(m.roundTrips),
                ]),
            ),
        );
        if (typeof cli === "string") console.log(`\nThe real CLI: ${cli}`);
        const ratios = (m: Measured, of: Measured) => [
            ratio(m.createSeconds, of.createSeconds),
            ratio(m.refreshSeconds, of.refreshSeconds),
            ratio(m.connections, of.connections),
            ratio(m.roundTrips ?? 0, of.roundTrips ?? 0),
        ];
        const ratioRows = [
            ...(oursCli ? [["pulumi CLI / peer", ...ratios(oursCli, peerRow)]] : []),
            ["provider layer / peer", ...ratios(oursProvider, peerRow)],
            ["provider layer / local limit", ...ratios(oursProvider, limit).slice(0, 2), "n/a", "n/a"],
            ["provider layer / bare SFTP", ...ratios(oursProvider, bareRow)],
        ];
        console.log("\nRatios (wall time of create, of refresh; connections; round trips):");
        console.log(table(["", "create", "refresh", "connections", "round trips"], ratioRows));
        if (oursCli) {
            console.log(
                `\nThe engine's share: pulumi up took ${seconds(oursCli.createSeconds)} where the provider layer alone ` +
                    `took ${seconds(oursProvider.createSeconds)}; run by remote.Command, the peer's scripts would pay it too.`,
            );
        }
    } finally {
        await fleet.stop({ remove: true });
        await temp.cleanup();
    }
    console.log(`\nThis benchmark ran ${((performance.now() - benchStarted) / 1000).toFixed(0)} s.`);
}
