// A fleet of real OpenSSH servers for the remote hosts-file suites: each "machine" is its own `sshd`
// process on its own 127.0.0.1 port, with its own host key and its own hosts file, started and stopped by
// the tests. Needs root (the fleet's users, sudoers, /run/sshd) and Debian's openssh-server and sudo
// (`bash test/tools/sshd/install.sh` installs them).
//
// Processes: every sshd is a child of the test process. stop() freezes the server and every session
// process under it (SIGSTOP, so none can fork while we look) and then kills them all; an `exit` handler
// does the same for whatever a failed run leaves, and startFleet() reaps fleet servers whose test process
// is gone (a run killed outright), so no run leaves sshd processes behind.

import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import {
    chmodSync,
    existsSync,
    mkdirSync,
    mkdtempSync,
    readdirSync,
    readFileSync,
    renameSync,
    rmSync,
    writeFileSync,
} from "node:fs";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { existingPrivateDirectory } from "../../provider/shared/files/privateDirectory";
import { fixture } from "./hostsFixtures";
import { hasTool, isRoot, skipBecause } from "./system";

const run = promisify(execFile);

/** The OpenSSH server every machine runs. */
export const SSHD = "/usr/sbin/sshd";

const SFTP_SERVERS = ["/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/libexec/sftp-server"];

/** The SFTP server binary (Debian: /usr/lib/openssh/sftp-server), or undefined when none is installed. */
export const SFTP_SERVER: string | undefined = SFTP_SERVERS.find((path) => existsSync(path));

/** The fleet's login users besides root: one with passwordless sudo, one without any sudo. */
export const FLEET_USERS = { root: "root", sudo: "plfleet", noSudo: "plnosudo" } as const;

/**
 * The password of both non-root fleet users (root refuses passwords: PermitRootLogin prohibit-password).
 * Fixed rather than random: concurrent test runs share the users, and one run must not change the
 * password under another. The servers listen on 127.0.0.1 only. Distinctive, so a test can search any
 * message or state for it.
 */
export const FLEET_PASSWORD = "pl-fleet-pw-7f3c9a";

/** Name of every fleet sshd_config: how a fleet server is recognised among the machine's processes. */
const CONFIG_NAME = "plfleet-sshd_config";

const INSTALL = "run `bash test/tools/sshd/install.sh` as root";

let unavailable: string | undefined | null = null;

/**
 * Why a fleet cannot start on this machine (not root, a tool missing), naming what to do; undefined when
 * it can.
 */
export function fleetUnavailable(): string | undefined {
    if (unavailable === null) unavailable = whyUnavailable();
    return unavailable;
}

function whyUnavailable(): string | undefined {
    if (process.platform !== "linux") return `an sshd fleet needs Linux (this is ${process.platform})`;
    if (!isRoot) return "an sshd fleet needs root (it creates the users plfleet and plnosudo, sudoers, /run/sshd)";
    const missing = [
        existsSync(SSHD) ? undefined : `${SSHD} (openssh-server)`,
        hasTool("ssh-keygen") ? undefined : "ssh-keygen (openssh-client)",
        SFTP_SERVER ? undefined : `sftp-server (openssh-sftp-server; looked in ${SFTP_SERVERS.join(", ")})`,
        hasTool("sudo") ? undefined : "sudo",
        hasTool("useradd") && hasTool("chpasswd") ? undefined : "useradd and chpasswd (passwd)",
    ].filter((item) => item !== undefined);
    return missing.length ? `an sshd fleet needs ${missing.join(", ")}: ${INSTALL}` : undefined;
}

let bindMountUnavailableReason: string | undefined | null = null;

/**
 * Why `bindMountEtcHosts` cannot work here (no `unshare`, no right to make a mount namespace or to
 * bind-mount, which needs CAP_SYS_ADMIN), or undefined when it can. Checked once, by doing it.
 */
export function bindMountUnavailable(): string | undefined {
    if (bindMountUnavailableReason === null) bindMountUnavailableReason = whyNoBindMount();
    return bindMountUnavailableReason;
}

function whyNoBindMount(): string | undefined {
    const fleet = fleetUnavailable();
    if (fleet) return fleet;
    if (!hasTool("unshare") || !hasTool("mount"))
        return "bind-mounting /etc/hosts needs unshare and mount (util-linux)";
    const dir = mkdtempSync(join(tmpdir(), "plfleet-bind-"));
    try {
        const source = join(dir, "hosts");
        writeFileSync(source, "bind-mounted\n");
        const result = spawnSync(
            "unshare",
            ["-m", "--propagation", "private", "sh", "-c", 'mount --bind "$0" /etc/hosts && cat /etc/hosts', source],
            { encoding: "utf8" },
        );
        if (result.status === 0 && result.stdout === "bind-mounted\n") return undefined;
        return `cannot bind-mount over /etc/hosts in a private mount namespace here (needs CAP_SYS_ADMIN): ${
            result.error?.message ?? result.stderr.trim()
        }`;
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

/**
 * For a suite's `before` hook: skips the suite saying why a fleet cannot start here, except in CI
 * (`CI=true`), where .ci/run installs what the fleet needs, so it fails instead.
 */
export function requireFleet(context: Mocha.Context, options: { bindMount?: boolean } = {}): void {
    const why = fleetUnavailable() ?? (options.bindMount ? bindMountUnavailable() : undefined);
    if (why === undefined) return;
    if (process.env.CI === "true") throw new Error(`CI must run the sshd fleet suites, but ${why}`);
    skipBecause(context, why);
}

/** One machine of a fleet: a real sshd on 127.0.0.1 with its own port, host key and hosts file. */
export interface FleetMachine {
    /** `m01`, `m02`, ...: also the name of its directory under the fleet's root. */
    readonly name: string;
    readonly host: "127.0.0.1";
    /** Its port; the same across stop()/start() and rotateHostKey(). */
    readonly port: number;
    /** Its current host public key, `ssh-ed25519 AAAA...` (no comment): what a user pins. */
    readonly hostKey: string;
    /** The current host key's fingerprint as `ssh-keygen -lf` prints it: `SHA256:...`. */
    readonly hostKeyFingerprint: string;
    /** `<root>/<name>`: holds only its hosts file, so a test can check that nothing else appears there. */
    readonly dir: string;
    /** `<dir>/hosts`, the machine's hosts file as this (the test) process reaches it. */
    readonly hostsFile: string;
    /**
     * The path a remote client uses for that file: `/etc/hosts` on a machine whose sshd runs with its
     * hosts file bind-mounted there (`bindMountEtcHosts`), else `hostsFile` itself.
     */
    readonly remoteHostsPath: string;
    /** Whether its /etc/hosts is the bind-mounted hosts file (so a rename over it fails: EBUSY). */
    readonly bindMounted: boolean;
    /** The listening sshd's pid, or undefined while the machine is stopped. */
    pid(): number | undefined;
    /** What the sshd wrote on stderr so far (LogLevel ERROR): for failure messages. */
    log(): string;
    /** Powers the machine off: kills the sshd and every session under it (open connections drop). */
    stop(): Promise<void>;
    /** Starts it again, on the same port with the same host key; resolves once it answers. */
    start(): Promise<void>;
    /** Replaces its host key with a new one and restarts it (the "host key changed" fault). */
    rotateHostKey(): Promise<void>;
}

/** A running fleet. */
export interface Fleet {
    /** The directory holding every machine's directory, the client key and the sshd files. */
    readonly root: string;
    readonly machines: FleetMachine[];
    /** The client private key (OpenSSH format, ed25519, no passphrase), authorized for every user. */
    readonly privateKey: string;
    /** Its public half, `ssh-ed25519 AAAA... plfleet-client`. */
    readonly publicKey: string;
    /** The private key's path (mode 0600), for `ssh -i`. */
    readonly privateKeyPath: string;
    readonly users: typeof FLEET_USERS;
    /** The password of `users.sudo` and `users.noSudo` (root refuses password logins). */
    readonly password: string;
    /** The SFTP server binary, for a privilege step that runs it under sudo. */
    readonly sftpServer: string;
    /** The machine called `name`; throws when there is none. */
    machine(name: string): FleetMachine;
    /**
     * Stops every machine; with `remove`, also deletes `root` and the create journals that operations on
     * the machines left in this user's private directory.
     */
    stop(options?: { remove?: boolean }): Promise<void>;
    /** Removes the create journals that name a proxy at 127.0.0.1:`port` in front of a machine (see `stop`). */
    removeJournalsNaming(ports: readonly number[]): Promise<void>;
}

/** Options of {@link startFleet}. */
export interface FleetOptions {
    /** Where the fleet lives (created if missing); default: a new directory under the system temp dir. */
    root?: string;
    /** The initial hosts file of machine `name`; default {@link defaultHostsContent}. */
    hostsContent?: (name: string) => string | Buffer;
    /**
     * Machines whose sshd runs in its own mount namespace (`unshare -m`) with /etc/hosts bind-mounted
     * from its hosts file, as Docker does: the in-place write path. See {@link bindMountUnavailable}.
     */
    bindMountEtcHosts?: string[];
    /** Whether the servers accept passwords (for `users.sudo` and `users.noSudo`); default true. */
    passwordAuthentication?: boolean;
}

/** The name of machine `index` (0-based): `m01`, `m02`, ... */
export function machineName(index: number): string {
    return `m${String(index + 1).padStart(2, "0")}`;
}

/**
 * A realistic Debian hosts file for machine `name`: the checked-in Debian fixture (comments, a blank
 * line, IPv6 lines, LF endings) with the machine's own name on its 127.0.1.1 line.
 */
export function defaultHostsContent(name: string): string {
    const debian = fixture("debian").toString("utf8");
    const own = debian.replace("bookworm.example.org\tbookworm", `${name}.fleet.test\t${name}`);
    if (own === debian) throw new Error("the Debian hosts fixture no longer has its 127.0.1.1 bookworm line");
    return own;
}

/**
 * Starts `count` machines at once (keys generated and servers started concurrently) and resolves when
 * every one answers with its SSH banner. Creates the fleet users when missing. On failure, stops what it
 * started and rejects with the failing server's stderr.
 */
export async function startFleet(count: number, options: FleetOptions = {}): Promise<Fleet> {
    const why = fleetUnavailable();
    if (why) throw new Error(`cannot start an sshd fleet: ${why}`);
    const names = Array.from({ length: count }, (_, index) => machineName(index));
    const bound = new Set(options.bindMountEtcHosts ?? []);
    const unknown = [...bound].filter((name) => !names.includes(name));
    if (unknown.length) throw new Error(`bindMountEtcHosts names no machine of this fleet: ${unknown.join(", ")}`);
    if (bound.size) {
        const noBind = bindMountUnavailable();
        if (noBind) throw new Error(`cannot start machines with a bind-mounted /etc/hosts: ${noBind}`);
    }
    reapOrphans();
    await ensureUsers();
    mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });

    const root = options.root ?? mkdtempSync(join(tmpdir(), "plfleet-"));
    mkdirSync(join(root, ".sshd"), { recursive: true });
    // The non-root users' sessions read the authorized keys file as themselves.
    chmodSync(root, 0o755);
    chmodSync(join(root, ".sshd"), 0o755);
    const privateKeyPath = join(root, ".sshd", "client_ed25519");
    const authorizedKeys = join(root, ".sshd", "authorized_keys");
    const serverSettings: ServerSettings = {
        authorizedKeys,
        passwordAuthentication: options.passwordAuthentication ?? true,
        extraSettings: perSourcePenaltiesOff(),
        sftpServer: SFTP_SERVER as string,
    };
    const machines = names.map((name) => {
        const dir = join(root, name);
        mkdirSync(dir, { recursive: true });
        chmodSync(dir, 0o755);
        const sshdDir = join(root, ".sshd", name);
        mkdirSync(sshdDir, { recursive: true });
        writeFileSync(join(dir, "hosts"), (options.hostsContent ?? defaultHostsContent)(name), { mode: 0o644 });
        return new Machine(name, dir, sshdDir, bound.has(name), serverSettings);
    });
    const [publicKey] = await Promise.all([
        generateKey(privateKeyPath, "plfleet-client"),
        ...machines.map((machine) => machine.newHostKey()),
    ]);
    await writeFile(authorizedKeys, `${publicKey}\n`, { mode: 0o644 });
    const privateKey = await readFile(privateKeyPath, "utf8");

    const ports = await freePorts(count);
    const started = await Promise.allSettled(machines.map((machine, index) => machine.boot(ports[index] as number)));
    const failed = started.find((result) => result.status === "rejected");
    if (failed) {
        await stopAll(machines);
        throw failed.reason;
    }
    return {
        root,
        machines,
        privateKey,
        publicKey,
        privateKeyPath,
        users: FLEET_USERS,
        password: FLEET_PASSWORD,
        sftpServer: SFTP_SERVER as string,
        machine(name) {
            const found = machines.find((machine) => machine.name === name);
            if (!found) throw new Error(`the fleet has no machine ${name} (it has ${names.join(", ")})`);
            return found;
        },
        async stop(stopOptions = {}) {
            await stopAll(machines);
            if (!stopOptions.remove) return;
            await rm(root, { recursive: true, force: true });
            await removeJournalsNaming(machines.map((machine) => machine.port));
        },
        removeJournalsNaming,
    };
}

/**
 * Removes the create journals that name a machine at 127.0.0.1:`port` (a fleet machine's, or a proxy's
 * in front of one) from this user's private directory, where the provider keeps a remote file's journal
 * (hosts/io/createJournal.ts): every record names its entry's machine, and once the machine is gone no
 * operation will ever settle them (each test run's ports are new, so they only piled up there).
 */
async function removeJournalsNaming(ports: readonly number[]): Promise<void> {
    const directory = existingPrivateDirectory();
    if (directory === undefined || ports.length === 0) return;
    const marks = ports.map((port) => `@127.0.0.1:${port}"`);
    for (const name of await readdir(directory)) {
        if (!name.startsWith("journal-")) continue;
        const path = join(directory, name);
        const text = await readFile(path, "utf8").catch(() => "");
        if (marks.some((mark) => text.includes(mark))) await rm(path, { force: true });
    }
}

/** Pids of the running fleet sshd servers (listeners) whose files are under `root`, or of all fleets. */
export function fleetServerPids(root?: string): number[] {
    return allPids().filter((pid) => {
        const config = fleetConfigOf(pid);
        return config !== undefined && (root === undefined || config.startsWith(`${root}/`));
    });
}

interface ServerSettings {
    authorizedKeys: string;
    passwordAuthentication: boolean;
    extraSettings: string[];
    sftpServer: string;
}

const live = new Set<Machine>();

process.once("exit", () => {
    killTrees([...live].flatMap((machine) => machine.pidList()));
});

class Machine implements FleetMachine {
    readonly host = "127.0.0.1";
    readonly hostsFile: string;
    readonly remoteHostsPath: string;
    hostKey = "";
    hostKeyFingerprint = "";
    port = 0;
    private child: ChildProcess | undefined;
    private exited: Promise<unknown> = Promise.resolve();
    private stderr = "";
    private readonly hostKeyPath: string;
    private readonly configPath: string;
    // Part of the SSH banner (VersionAddendum): tells this server's answer from another process that took
    // the port after this one failed to bind it.
    private readonly banner = `plfleet-${randomBytes(6).toString("hex")}`;

    constructor(
        readonly name: string,
        readonly dir: string,
        sshdDir: string,
        readonly bindMounted: boolean,
        private readonly settings: ServerSettings,
    ) {
        this.hostsFile = join(dir, "hosts");
        this.remoteHostsPath = bindMounted ? "/etc/hosts" : this.hostsFile;
        this.hostKeyPath = join(sshdDir, "host_ed25519");
        this.configPath = join(sshdDir, CONFIG_NAME);
    }

    pid(): number | undefined {
        const child = this.child;
        return child?.pid !== undefined && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
    }

    /** The listener and its session processes, for the exit handler. */
    pidList(): number[] {
        const pid = this.pid();
        return pid === undefined ? [] : [pid];
    }

    log(): string {
        return this.stderr;
    }

    async newHostKey(): Promise<void> {
        const publicKey = await generateKey(this.hostKeyPath, `plfleet-${this.name}`);
        this.hostKey = publicKey.split(" ").slice(0, 2).join(" ");
        const { stdout } = await run("ssh-keygen", ["-l", "-f", `${this.hostKeyPath}.pub`]);
        const fingerprint = stdout.split(" ")[1];
        if (!fingerprint?.startsWith("SHA256:"))
            throw new Error(`ssh-keygen -lf printed no SHA256 fingerprint: ${stdout}`);
        this.hostKeyFingerprint = fingerprint;
    }

    /** First start: on `port`, or on another free one when a process took that one first. */
    async boot(port: number): Promise<void> {
        for (let attempt = 1; ; attempt += 1) {
            this.port = port;
            try {
                await this.start();
                return;
            } catch (error) {
                if (attempt === 5 || !/Address already in use/.test(this.stderr)) throw error;
                [port] = (await freePorts(1)) as [number];
            }
        }
    }

    async start(): Promise<void> {
        if (this.pid() !== undefined) return;
        await writeFile(this.configPath, this.config());
        this.stderr = "";
        const sshd = [SSHD, "-D", "-e", "-f", this.configPath];
        const [command, ...args] = this.bindMounted
            ? ["unshare", "-m", "--propagation", "private", "sh", "-c", 'mount --bind "$0" /etc/hosts && exec "$@"']
                  .concat([this.hostsFile])
                  .concat(sshd)
            : sshd;
        // unshare and sh exec, so the child's pid is the sshd's. Not detached: a Ctrl-C to the test run
        // reaches the servers too. Unreferenced: a suite that forgets stop() still lets mocha exit, and
        // the exit handler kills the servers.
        const child = spawn(command as string, args, { stdio: ["ignore", "ignore", "pipe"] });
        this.child = child;
        let ended = false;
        // "error" without "exit" when the command cannot be run at all.
        this.exited = once(child, "exit")
            .catch((error: unknown) => {
                this.stderr += `${error instanceof Error ? error.message : String(error)}\n`;
            })
            .finally(() => {
                ended = true;
            });
        child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
            this.stderr = (this.stderr + chunk).slice(-16_000);
        });
        child.unref();
        (child.stderr as unknown as { unref(): void } | null)?.unref();
        live.add(this);
        try {
            await this.answered(() => ended, child);
        } catch (error) {
            await this.stop();
            throw error;
        }
    }

    async stop(): Promise<void> {
        const pid = this.pid();
        if (pid !== undefined) killTrees([pid]);
        // The child is unreferenced; waiting for its exit must still keep Node.js running.
        this.child?.ref();
        await this.exited;
        live.delete(this);
    }

    async rotateHostKey(): Promise<void> {
        const before = this.hostKeyFingerprint;
        await this.stop();
        await rm(this.hostKeyPath, { force: true });
        await rm(`${this.hostKeyPath}.pub`, { force: true });
        await this.newHostKey();
        if (this.hostKeyFingerprint === before) throw new Error(`${this.name}: the new host key is the old one`);
        await this.start();
    }

    private config(): string {
        return [
            `# sshd of fleet machine ${this.name} (test/support/sshFleet.ts)`,
            `ListenAddress 127.0.0.1:${this.port}`,
            `HostKey ${this.hostKeyPath}`,
            `VersionAddendum ${this.banner}`,
            "PidFile none",
            "UsePAM no",
            "StrictModes no",
            "UseDNS no",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            `PasswordAuthentication ${this.settings.passwordAuthentication ? "yes" : "no"}`,
            "KbdInteractiveAuthentication no",
            `AuthorizedKeysFile ${this.settings.authorizedKeys}`,
            `Subsystem sftp ${this.settings.sftpServer}`,
            "LogLevel ERROR",
            // Many providers and benchmark runs connect at once; the defaults (10:30:100, 10) would drop
            // connections at random.
            "MaxStartups 1000",
            "MaxSessions 1000",
            ...this.settings.extraSettings,
            "",
        ].join("\n");
    }

    /** Resolves once this server sends its banner; rejects with its stderr if it exits first. */
    private async answered(ended: () => boolean, child: ChildProcess): Promise<void> {
        for (;;) {
            if (ended()) {
                throw new Error(
                    `the sshd of fleet machine ${this.name} (port ${this.port}, ${this.configPath}) exited ` +
                        `(${child.exitCode ?? child.signalCode}) before answering:\n${this.stderr.trim()}`,
                );
            }
            const banner = await readBanner(this.port);
            if (banner?.includes(this.banner)) return;
            await sleep(20);
        }
    }
}

/** The first line a server on `port` sends, or undefined when nothing answers there. */
function readBanner(port: number): Promise<string | undefined> {
    return new Promise((resolve) => {
        const socket = connect(port, "127.0.0.1");
        let received = "";
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => {
            received += chunk;
            if (received.includes("\n")) socket.destroy();
        });
        socket.on("error", () => undefined);
        socket.on("close", () => resolve(received.includes("\n") ? received : undefined));
    });
}

async function stopAll(machines: Machine[]): Promise<void> {
    killTrees(machines.flatMap((machine) => machine.pidList()));
    await Promise.all(machines.map((machine) => machine.stop()));
}

/** `count` distinct ports free on 127.0.0.1 now (all held open together so none repeats). */
async function freePorts(count: number): Promise<number[]> {
    const servers: Server[] = [];
    try {
        for (let index = 0; index < count; index += 1) {
            const server = createServer();
            servers.push(server);
            server.listen(0, "127.0.0.1");
            await once(server, "listening");
        }
        return servers.map((server) => (server.address() as { port: number }).port);
    } finally {
        await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    }
}

/** Generates an ed25519 key pair at `path` (OpenSSH format, no passphrase); resolves with the public key. */
async function generateKey(path: string, comment: string): Promise<string> {
    await rm(path, { force: true });
    await rm(`${path}.pub`, { force: true });
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path]);
    return (await readFile(`${path}.pub`, "utf8")).trim();
}

/** OpenSSH 9.8+ penalises a source address after failed logins: wrong-credential tests would lock out 127.0.0.1. */
function perSourcePenaltiesOff(): string[] {
    const version = /OpenSSH_(\d+)\.(\d+)/.exec(spawnSync(SSHD, ["-V"], { encoding: "utf8" }).stderr ?? "");
    const [major, minor] = [Number(version?.[1] ?? 0), Number(version?.[2] ?? 0)];
    return major > 9 || (major === 9 && minor >= 8) ? ["PerSourcePenalties no"] : [];
}

let usersReady: Promise<void> | undefined;

/** Creates the fleet users and sudoers entry when missing, and sets their password (once per process). */
function ensureUsers(): Promise<void> {
    usersReady ??= createUsers().catch((error: unknown) => {
        usersReady = undefined;
        throw error;
    });
    return usersReady;
}

async function createUsers(): Promise<void> {
    for (const user of [FLEET_USERS.sudo, FLEET_USERS.noSudo]) {
        if (spawnSync("id", ["-u", user], { stdio: "ignore" }).status === 0) continue;
        // 9: another test run created it meanwhile.
        await retryLocked(["useradd", "-m", "-s", "/bin/bash", user], [0, 9]);
    }
    // Also unlocks the accounts: without PAM, sshd refuses a locked account ("!" password) even a key.
    await retryLocked(
        ["chpasswd"],
        [0],
        `${FLEET_USERS.sudo}:${FLEET_PASSWORD}\n${FLEET_USERS.noSudo}:${FLEET_PASSWORD}\n`,
    );
    writeSudoers(`${FLEET_USERS.sudo} ALL=(ALL:ALL) NOPASSWD: ALL\n`);
}

/** Runs a shadow-suite command, retrying while another process holds /etc/passwd's or /etc/shadow's lock. */
async function retryLocked(command: string[], okCodes: number[], input?: string): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
        const result = spawnSync(command[0] as string, command.slice(1), { input, encoding: "utf8" });
        if (result.status !== null && okCodes.includes(result.status)) return;
        if (attempt < 20 && /lock/i.test(result.stderr)) {
            await sleep(100);
            continue;
        }
        throw new Error(`${command[0]} failed (${result.status}) setting up the fleet users: ${result.stderr.trim()}`);
    }
}

/** Installs /etc/sudoers.d/plfleet (0440), checked by visudo when it is there, replaced atomically. */
function writeSudoers(content: string): void {
    const path = `/etc/sudoers.d/${FLEET_USERS.sudo}`;
    if (existsSync(path) && readFileSync(path, "utf8") === content) return;
    mkdirSync("/etc/sudoers.d", { recursive: true, mode: 0o755 });
    // sudo skips names containing a dot, so the temporary file is never read half-written.
    const temporary = `/etc/sudoers.d/.${FLEET_USERS.sudo}.${process.pid}`;
    writeFileSync(temporary, content, { mode: 0o440 });
    chmodSync(temporary, 0o440);
    if (hasTool("visudo")) {
        const check = spawnSync("visudo", ["-c", "-q", "-f", temporary], { encoding: "utf8" });
        if (check.status !== 0) {
            rmSync(temporary, { force: true });
            throw new Error(`visudo rejected the fleet's sudoers entry ${path}: ${check.stderr || check.stdout}`);
        }
    }
    renameSync(temporary, path);
}

function allPids(): number[] {
    return readdirSync("/proc")
        .filter((entry) => /^\d+$/.test(entry))
        .map(Number);
}

/** The command name of `pid`, or undefined when it is gone. */
function commOf(pid: number): string | undefined {
    try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    } catch {
        return undefined;
    }
}

function parentOf(pid: number): number | undefined {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        // The command name (in parentheses) may hold spaces; the fields after it do not.
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
        return undefined;
    }
}

/** The sshd_config of a fleet listener, or undefined when `pid` is no fleet server. */
function fleetConfigOf(pid: number): string | undefined {
    try {
        if (commOf(pid) !== "sshd") return undefined;
        // The child a listener starts for each connection re-executes sshd with the listener's own command
        // line (and -R) and keeps it until it renames itself: it is a session, not a server. Taken for an
        // orphaned server, it was killed by another suite's start and reset that connection.
        const parent = parentOf(pid);
        if (parent !== undefined && commOf(parent) === "sshd") return undefined;
        // sshd rewrites its command line ("sshd: /usr/sbin/sshd -D -e -f <config> [listener] ..."); before
        // it does, the arguments are NUL-separated.
        const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
        return new RegExp(` -f (\\S+/${CONFIG_NAME})(?: |$)`).exec(commandLine)?.[1];
    } catch {
        return undefined;
    }
}

/** Kills the fleet servers a killed test run left (their parent is no longer a node process). */
function reapOrphans(): void {
    const orphans = fleetServerPids().filter((pid) => {
        const parent = parentOf(pid);
        if (parent === undefined || parent <= 1) return true;
        try {
            return readFileSync(`/proc/${parent}/comm`, "utf8").trim() !== "node";
        } catch {
            return true;
        }
    });
    killTrees(orphans);
}

/**
 * Kills each process in `roots` and every process under it. Stops them first, growing the set until no
 * new descendant appears (a stopped process cannot fork), so nothing escapes by forking mid-kill.
 */
function killTrees(roots: number[]): void {
    if (roots.length === 0) return;
    const frozen = new Set<number>();
    for (;;) {
        const children = new Map<number, number[]>();
        for (const pid of allPids()) {
            const parent = parentOf(pid);
            if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), pid]);
        }
        const tree: number[] = [];
        const pending = [...roots];
        while (pending.length) {
            const pid = pending.pop() as number;
            tree.push(pid);
            pending.push(...(children.get(pid) ?? []));
        }
        const fresh = tree.filter((pid) => !frozen.has(pid));
        if (fresh.length === 0) break;
        for (const pid of fresh) {
            frozen.add(pid);
            signal(pid, "SIGSTOP");
        }
    }
    for (const pid of frozen) signal(pid, "SIGKILL");
}

function signal(pid: number, name: NodeJS.Signals): void {
    try {
        process.kill(pid, name);
    } catch {
        // Already gone.
    }
}
