// Issue 21, faults: the hosts-file store over SFTP (HostsFileStore + SshMachines, no CLI) against real
// sshd (test/support/sshFleet.ts). What the local layer guarantees, checked on the remote one: a writer
// that ignores our lock loses nothing and makes us lose nothing; the in-place path of a bind-mounted file;
// a write cut short in place is finished by the next writer, local or remote; a dangling symlink's target
// is created and the link kept; the lock file excludes local and remote writers both ways; a connection
// dropped mid-write leaves the file whole and no lock or temporary behind. Every byte is checked.

import { strict as assert } from "node:assert";
import {
    appendFileSync,
    chmodSync,
    chownSync,
    closeSync,
    existsSync,
    lstatSync,
    mkdirSync,
    openSync,
    readdirSync,
    readFileSync,
    readlinkSync,
    renameSync,
    rmSync,
    statSync,
    symlinkSync,
    writeFileSync,
    writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { HostsFileAccess, HostsFileLocation } from "../../../provider/hosts/io/hostsFileAccess";
import { HostsFileStore, type WriteEvent } from "../../../provider/hosts/io/hostsFileStore";
import { createEntry, deleteEntry, identityOf } from "../../../provider/hosts/logic/entries";
import { SshMachines } from "../../../provider/hosts/remote/sshMachines";
import { acquireFileLock, type LockOptions, lockPathFor } from "../../../provider/shared/files/fileLock";
import { sidecarPathFor } from "../../../provider/shared/files/inPlaceSidecar";
import { type CuttingProxy, startCuttingProxy } from "../../support/cuttingProxy";
import {
    bindMountUnavailable,
    defaultHostsContent,
    type Fleet,
    type FleetMachine,
    requireFleet,
    startFleet,
} from "../../support/sshFleet";

const LOCK: LockOptions = { timeoutMs: 20_000, staleMs: 60_000 };
const PLAIN = "m01";
const CUT = "m02";
const BOUND = "m03";

/** `count` filler lines, about 31 bytes each: a large hosts file whose every line is distinct. */
function filler(count: number): string {
    let text = "";
    for (let k = 0; k < count; k++) text += `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}\tfill-${k}.test\n`;
    return text;
}

describe("the hosts-file store over SFTP under faults, against real sshd", function () {
    this.timeout(120_000);
    let fleet: Fleet;
    const opened: SshMachines[] = [];
    const proxies: CuttingProxy[] = [];
    const hostEtcHosts = existsSync("/etc/hosts") ? readFileSync("/etc/hosts") : undefined;

    before(async function () {
        requireFleet(this);
        fleet = await startFleet(3, { bindMountEtcHosts: bindMountUnavailable() ? [] : [BOUND] });
    });
    afterEach(async () => {
        await Promise.all(opened.splice(0).map((machines) => machines.close()));
        const closing = proxies.splice(0);
        await Promise.all(closing.map((proxy) => proxy.close()));
        await fleet?.removeJournalsNaming(closing.map((proxy) => proxy.port));
    });
    after(async () => {
        await fleet?.stop({ remove: true });
    });

    /** The machine's file at `path` (default its hosts file), reached as `user`, directly or through `via`. */
    function remote(
        machine: FleetMachine,
        options: { user?: string; via?: CuttingProxy; path?: string; sleep?: (ms: number) => Promise<void> } = {},
    ): { location: { file: string; access: HostsFileAccess }; machines: SshMachines } {
        const machines = new SshMachines(undefined, undefined, options.sleep);
        opened.push(machines);
        const access = machines.filesOn(
            {
                host: "127.0.0.1",
                port: options.via?.port ?? machine.port,
                user: options.user ?? "root",
                hostKey: machine.hostKey,
            },
            { privateKey: fleet.privateKey },
        );
        return { location: { file: options.path ?? machine.remoteHostsPath, access }, machines };
    }

    function add(store: HostsFileStore, location: HostsFileLocation, address: string, name: string): Promise<void> {
        return store.edit(location, (doc) => {
            createEntry(doc, { address, names: [name] }, { adopt: false, file: "hosts" });
            return () => undefined;
        });
    }

    function storeWith(events: WriteEvent[] = [], lock: LockOptions = LOCK): HostsFileStore {
        return new HostsFileStore({ lock, onWrite: (event) => events.push(event) });
    }

    /** The access, with `hooks` run where a writer that ignores our lock may strike: before each write, and between our last check and our commit. */
    function withForeignWriter(
        access: HostsFileAccess,
        hooks: { beforeWrite?: (attempt: number) => void; beforeCommit?: (attempt: number, call: number) => void },
    ): { access: HostsFileAccess; attempts: () => number } {
        let attempts = 0;
        const wrapped: HostsFileAccess = {
            machine: access.machine,
            keyOf: (file) => access.keyOf(file),
            describe: (real) => access.describe(real),
            realPath: (file) => access.realPath(file),
            signature: (real) => access.signature(real),
            read: (real) => access.read(real),
            lock: (real, options) => access.lock(real, options),
            mayNeedRecovery: (real) => access.mayNeedRecovery(real),
            recover: (real) => access.recover(real),
            sweep: (real) => access.sweep(real),
            write: (real, data, guards, beforeChange) => {
                attempts++;
                const attempt = attempts;
                hooks.beforeWrite?.(attempt);
                let calls = 0;
                return access.write(
                    real,
                    data,
                    {
                        ...guards,
                        beforeCommit: async () => {
                            await guards.beforeCommit?.();
                            hooks.beforeCommit?.(attempt, ++calls);
                        },
                    },
                    beforeChange,
                );
            },
        };
        return { access: wrapped, attempts: () => attempts };
    }

    /** A `sed -i`-style rewrite by another tool: the whole file through a temporary renamed over it. */
    function rewriteByRename(file: string, from: string, to: string): void {
        const text = readFileSync(file, "latin1");
        assert.ok(text.includes(from), `${file} holds ${from}`);
        writeFileSync(`${file}.sedtmp`, text.replace(from, to), { mode: 0o644 });
        renameSync(`${file}.sedtmp`, file);
    }

    /** Nothing but `names` is left in the directory: no lock, temporary or sidecar. */
    function assertOnly(directory: string, names: string[]): void {
        assert.deepEqual(readdirSync(directory).sort(), [...names].sort(), `what ${directory} holds`);
    }

    describe("a writer that ignores our lock", () => {
        it("changes the file between our read and our write, three times: each change is kept, our edits redone on it", async () => {
            const machine = fleet.machine(PLAIN);
            const original = readFileSync(machine.hostsFile, "latin1");
            const { location } = remote(machine);
            const foreign = withForeignWriter(location.access, {
                beforeWrite: (attempt) => {
                    if (attempt === 1) appendFileSync(machine.hostsFile, "192.0.2.1\tforeign-one.test\n");
                    if (attempt === 2)
                        rewriteByRename(
                            machine.hostsFile,
                            "\tm01.fleet.test\tm01\n",
                            "\tm01.fleet.test\tm01 renamed\n",
                        );
                    if (attempt === 3) appendFileSync(machine.hostsFile, "192.0.2.3\tforeign-three.test\n");
                },
            });
            const events: WriteEvent[] = [];
            const store = storeWith(events);
            const target = { file: location.file, access: foreign.access };
            await Promise.all([1, 2, 3, 4, 5].map((k) => add(store, target, `10.1.0.${k}`, `ours-${k}.test`)));

            assert.equal(
                readFileSync(machine.hostsFile, "latin1"),
                original.replace("\tm01.fleet.test\tm01\n", "\tm01.fleet.test\tm01 renamed\n") +
                    "192.0.2.1\tforeign-one.test\n192.0.2.3\tforeign-three.test\n" +
                    [1, 2, 3, 4, 5].map((k) => `10.1.0.${k}\tours-${k}.test\n`).join(""),
            );
            assert.equal(foreign.attempts(), 4, "three foreign changes, three retries, one write");
            assert.deepEqual(
                events.map((event) => [event.edits, event.method]),
                [[5, "rename"]],
            );
            assertOnly(machine.dir, ["hosts"]);
            // Back to the original for the next test.
            writeFileSync(machine.hostsFile, original);
        });

        it("appends between our last check and our rename: the append is put back, our edit redone on it", async () => {
            const machine = fleet.machine(PLAIN);
            const original = readFileSync(machine.hostsFile, "latin1");
            const { location } = remote(machine);
            let injected = 0;
            const foreign = withForeignWriter(location.access, {
                beforeCommit: (attempt) => {
                    if (attempt !== 1) return;
                    injected++;
                    appendFileSync(machine.hostsFile, "192.0.2.7\tlate-append.test\n");
                },
            });
            await add(storeWith(), { file: location.file, access: foreign.access }, "10.2.0.1", "ours.test");
            assert.equal(injected, 1);
            assert.equal(
                readFileSync(machine.hostsFile, "latin1"),
                `${original}192.0.2.7\tlate-append.test\n10.2.0.1\tours.test\n`,
                "neither the foreign append nor our line is lost",
            );
            assertOnly(machine.dir, ["hosts"]);
            writeFileSync(machine.hostsFile, original);
        });

        it("truncates the file between our last check and our rename, and writes it while we wait: that rewrite is put back, not the line appended first", async () => {
            // `cat new > hosts` racing an appender (seed 3383, locally): the tool truncates, a line is
            // appended to the empty file, our rename replaces it, and the tool's write lands after. Put
            // back at once, the appended line alone would become the file, and the tool's base be lost.
            const machine = fleet.machine(PLAIN);
            const original = readFileSync(machine.hostsFile, "latin1");
            const rewritten = `${original}192.0.2.8\trewritten.test\n`;
            let tool: number | undefined;
            let waits = 0;
            const { location } = remote(machine, {
                sleep: async () => {
                    // The tool's write lands during our first wait on the file we replaced.
                    if (++waits === 1) writeSync(tool as number, rewritten);
                },
            });
            const foreign = withForeignWriter(location.access, {
                beforeCommit: (attempt) => {
                    if (attempt !== 1) return;
                    tool = openSync(machine.hostsFile, "w");
                    appendFileSync(machine.hostsFile, "192.0.2.9\tappended.test\n");
                },
            });
            try {
                await add(storeWith(), { file: location.file, access: foreign.access }, "10.2.0.2", "ours-2.test");
            } finally {
                if (tool !== undefined) closeSync(tool);
            }
            assert.equal(
                readFileSync(machine.hostsFile, "latin1"),
                `${rewritten}10.2.0.2\tours-2.test\n`,
                "the tool's rewrite is the file, with our line redone on it",
            );
            assert.ok(waits > 0, "the put-back waited");
            assertOnly(machine.dir, ["hosts"]);
            writeFileSync(machine.hostsFile, original);
        });

        it("changes the file before every attempt: the edit fails naming the machine and file; all theirs is there, nothing of ours", async () => {
            const machine = fleet.machine(PLAIN);
            const original = readFileSync(machine.hostsFile, "latin1");
            const { location } = remote(machine);
            const foreign = withForeignWriter(location.access, {
                beforeWrite: (attempt) =>
                    appendFileSync(machine.hostsFile, `192.0.3.${attempt}\tagain-${attempt}.test\n`),
            });
            await assert.rejects(
                add(storeWith(), { file: location.file, access: foreign.access }, "10.3.0.1", "never.test"),
                (error: Error & { code?: string }) => {
                    assert.equal(error.code, "ECHANGED");
                    assert.ok(
                        error.message.includes(`root@127.0.0.1:${machine.port}:${machine.hostsFile}`),
                        error.message,
                    );
                    assert.match(error.message, /The file was not changed/);
                    return true;
                },
            );
            const attempts = foreign.attempts();
            assert.equal(attempts, 10);
            assert.equal(
                readFileSync(machine.hostsFile, "latin1"),
                original +
                    Array.from({ length: attempts }, (_, k) => `192.0.3.${k + 1}\tagain-${k + 1}.test\n`).join(""),
            );
            assertOnly(machine.dir, ["hosts"]);
            writeFileSync(machine.hostsFile, original);
        });
    });

    describe("a bind-mounted /etc/hosts (rename refused: written in place)", () => {
        before(function () {
            requireFleet(this, { bindMount: true });
        });
        const etcLeftovers = () =>
            readdirSync("/etc").filter((name) => name.startsWith(".hosts.") && name.includes("pulumi-lifecycle"));

        it("writes the batch in place, byte for byte, leaving no sidecar, temporary or lock, and the host's own /etc/hosts untouched", async () => {
            const machine = fleet.machine(BOUND);
            assert.equal(machine.remoteHostsPath, "/etc/hosts");
            const original = readFileSync(machine.hostsFile, "latin1");
            const events: WriteEvent[] = [];
            const { location } = remote(machine);
            const store = storeWith(events);
            await Promise.all([1, 2, 3].map((k) => add(store, location, `10.4.0.${k}`, `bound-${k}.test`)));
            assert.equal(
                readFileSync(machine.hostsFile, "latin1"),
                `${original}10.4.0.1\tbound-1.test\n10.4.0.2\tbound-2.test\n10.4.0.3\tbound-3.test\n`,
            );
            assert.deepEqual(
                events.map((event) => [event.edits, event.method]),
                [[3, "in-place"]],
            );
            assert.equal(existsSync(sidecarPathFor("/etc/hosts")), false, "the sidecar is gone");
            assert.deepEqual(etcLeftovers(), []);
            assert.deepEqual(readFileSync("/etc/hosts"), hostEtcHosts, "the host's /etc/hosts is not the machine's");
            assertOnly(machine.dir, ["hosts"]);
            writeFileSync(machine.hostsFile, original);
        });

        it("keeps a foreign append that lands just before the in-place write", async () => {
            const machine = fleet.machine(BOUND);
            const original = readFileSync(machine.hostsFile, "latin1");
            const { location } = remote(machine);
            let injected = 0;
            const foreign = withForeignWriter(location.access, {
                // The first commit is the rename's (refused); the second the in-place write's.
                beforeCommit: (attempt, call) => {
                    if (attempt !== 1 || call !== 2) return;
                    injected++;
                    appendFileSync(machine.hostsFile, "192.0.2.9\tlate-bound.test\n");
                },
            });
            await add(storeWith(), { file: location.file, access: foreign.access }, "10.5.0.1", "ours-bound.test");
            assert.equal(injected, 1, "the in-place write asked for the lock's check before writing");
            assert.equal(
                readFileSync(machine.hostsFile, "latin1"),
                `${original}192.0.2.9\tlate-bound.test\n10.5.0.1\tours-bound.test\n`,
            );
            assert.equal(existsSync(sidecarPathFor("/etc/hosts")), false);
            assert.deepEqual(etcLeftovers(), []);
            writeFileSync(machine.hostsFile, original);
        });
    });

    describe("a connection dropped mid-write", () => {
        const FIRST = "10.9.9.9\tfirst.test\n";
        const BODY = filler(40_000);

        /** Puts a ~1.2 MB file on the machine whose first line our edit removes (so a cut write is torn, not a prefix). */
        function largeFile(machine: FleetMachine): Buffer {
            const bytes = Buffer.from(FIRST + BODY, "latin1");
            writeFileSync(machine.hostsFile, bytes);
            return bytes;
        }

        /** The edit: first.test goes, last.test comes; the whole file shifts. */
        function moveEdit(store: HostsFileStore, location: HostsFileLocation): Promise<void> {
            return store.edit(location, (doc) => {
                deleteEntry(doc, identityOf({ address: "10.9.9.9", names: ["first.test"] }));
                createEntry(doc, { address: "10.9.9.10", names: ["last.test"] }, { adopt: false, file: "hosts" });
                return () => undefined;
            });
        }
        const moved = Buffer.from(`${BODY}10.9.9.10\tlast.test\n`, "latin1");

        async function throughProxy(machine: FleetMachine, user?: string) {
            const proxy = await startCuttingProxy({ host: "127.0.0.1", port: machine.port });
            proxies.push(proxy);
            const reached = remote(machine, { via: proxy, ...(user ? { user } : {}) });
            const store = storeWith();
            // Connected and read once: what is counted from here on is the batch alone.
            await store.read(reached.location, (doc) => doc.lineCount);
            return { proxy, store, ...reached };
        }

        it("on the rename path: the file is whole and as it was, no lock is left; the next batch converges and no temporary stays", async () => {
            const machine = fleet.machine(PLAIN);
            const before = largeFile(machine);
            const { proxy, store, location } = await throughProxy(machine);
            // Half of the temporary file's bytes.
            proxy.cutAfter(Math.floor(moved.length / 2));
            const failed = moveEdit(store, location);
            await assert.rejects(failed, (error: Error) => {
                assert.ok(error.message.includes(`127.0.0.1:${proxy.port}`), error.message);
                return true;
            });
            assert.equal(proxy.cuts.length, 1, "the connection was cut");
            assert.deepEqual(readFileSync(machine.hostsFile), before, "the file is whole, as it was");
            assert.equal(existsSync(lockPathFor(machine.hostsFile)), false, "the lock went with the failed batch");

            await moveEdit(store, location);
            assert.deepEqual(readFileSync(machine.hostsFile), moved);
            assertOnly(machine.dir, ["hosts"]);
            writeFileSync(machine.hostsFile, defaultHostsContent(machine.name));
        });

        for (const recoverer of ["local", "remote"] as const) {
            it(`in place, torn: the sidecar is left, and a ${recoverer} writer finishes the write before its own`, async () => {
                const machine = fleet.machine(CUT);
                // A root-owned file anyone may write, in a directory of plnosudo: plnosudo's temporary cannot
                // take root's ownership, so the write goes in place, journaled beside the file.
                const before = largeFile(machine);
                chmodSync(machine.hostsFile, 0o666);
                chownSync(machine.dir, 1, 1);
                const plnosudo = Number(
                    readFileSync("/etc/passwd", "utf8")
                        .split("\n")
                        .find((line) => line.startsWith(`${fleet.users.noSudo}:`))
                        ?.split(":")[2],
                );
                chownSync(machine.dir, plnosudo, plnosudo);
                try {
                    const { proxy, store, location } = await throughProxy(machine, fleet.users.noSudo);
                    // The temporary (moved), the sidecar (before + moved), then half of the write in place.
                    const sidecarBytes = before.length + moved.length;
                    proxy.cutAfter(moved.length + sidecarBytes + Math.floor(moved.length / 2));
                    await assert.rejects(moveEdit(store, location));
                    assert.equal(proxy.cuts.length, 1);
                    const torn = readFileSync(machine.hostsFile);
                    assert.ok(!torn.equals(before) && !torn.equals(moved), "the cut landed in the write in place");
                    assert.ok(existsSync(sidecarPathFor(machine.hostsFile)), "its journal is left");
                    assert.equal(
                        existsSync(lockPathFor(machine.hostsFile)),
                        false,
                        "the lock went with the failed batch",
                    );
                    assert.equal(statSync(machine.hostsFile).uid, 0, "the file is still root's");

                    const next =
                        recoverer === "local"
                            ? { store: storeWith(), location: machine.hostsFile as HostsFileLocation }
                            : { store: storeWith(), location: remote(machine, { user: fleet.users.noSudo }).location };
                    await add(next.store, next.location, "10.9.9.11", "after.test");
                    assert.deepEqual(
                        readFileSync(machine.hostsFile, "latin1"),
                        `${moved.toString("latin1")}10.9.9.11\tafter.test\n`,
                    );
                    assertOnly(machine.dir, ["hosts"]);
                    assert.equal(statSync(machine.hostsFile).uid, 0, "the file is still root's");
                    assert.equal(statSync(machine.hostsFile).mode & 0o777, 0o666);
                } finally {
                    chownSync(machine.dir, 0, 0);
                    writeFileSync(machine.hostsFile, defaultHostsContent(machine.name));
                    chmodSync(machine.hostsFile, 0o644);
                }
            });
        }
    });

    it("creates a dangling symlink's target and keeps the link", async () => {
        const machine = fleet.machine(PLAIN);
        const links = join(machine.dir, "links");
        const targets = join(machine.dir, "targets");
        mkdirSync(links);
        mkdirSync(targets);
        try {
            symlinkSync("../targets/hosts", join(links, "hosts"));
            const { location } = remote(machine, { path: join(links, "hosts") });
            await add(storeWith(), location, "10.6.0.1", "dangling.test");
            assert.ok(lstatSync(join(links, "hosts")).isSymbolicLink(), "the link is kept");
            assert.equal(readlinkSync(join(links, "hosts")), "../targets/hosts");
            assert.equal(readFileSync(join(targets, "hosts"), "latin1"), "10.6.0.1\tdangling.test\n");
            assert.equal(statSync(join(targets, "hosts")).mode & 0o777, 0o644);
            assertOnly(targets, ["hosts"]);
            assertOnly(links, ["hosts"]);
        } finally {
            rmSync(links, { recursive: true, force: true });
            rmSync(targets, { recursive: true, force: true });
        }
    });

    describe("the lock file, shared with local writers", () => {
        /** Lock options whose first wait for a held lock resolves `waiting`. */
        function waitingLock(): { lock: LockOptions; waiting: Promise<void> } {
            let signal!: () => void;
            const waiting = new Promise<void>((resolve) => {
                signal = resolve;
            });
            return {
                waiting,
                lock: {
                    ...LOCK,
                    sleep: async (ms: number) => {
                        signal();
                        await sleep(ms);
                    },
                },
            };
        }

        it("a local holder blocks the remote writer until it releases", async () => {
            const machine = fleet.machine(PLAIN);
            const original = readFileSync(machine.hostsFile, "latin1");
            const held = await acquireFileLock(machine.hostsFile, LOCK);
            const { lock, waiting } = waitingLock();
            const { location } = remote(machine);
            const edit = add(storeWith([], lock), location, "10.7.0.1", "after-local.test");
            await waiting;
            assert.equal(
                readFileSync(machine.hostsFile, "latin1"),
                original,
                "nothing written while the local lock is held",
            );
            await held.release();
            await edit;
            assert.equal(readFileSync(machine.hostsFile, "latin1"), `${original}10.7.0.1\tafter-local.test\n`);
            assertOnly(machine.dir, ["hosts"]);
            writeFileSync(machine.hostsFile, original);
        });

        it("a remote holder blocks a local writer until it releases", async () => {
            const machine = fleet.machine(PLAIN);
            const original = readFileSync(machine.hostsFile, "latin1");
            const { location } = remote(machine);
            const held = await location.access.lock(machine.hostsFile, LOCK);
            assert.equal(held.path, join(dirname(machine.hostsFile), ".hosts.pulumi-lifecycle.lock"));
            assert.match(readFileSync(lockPathFor(machine.hostsFile), "utf8"), / via ssh"/);
            const { lock, waiting } = waitingLock();
            const edit = add(storeWith([], lock), machine.hostsFile, "10.7.0.2", "after-remote.test");
            await waiting;
            assert.equal(
                readFileSync(machine.hostsFile, "latin1"),
                original,
                "nothing written while the remote lock is held",
            );
            await held.release();
            await edit;
            assert.equal(readFileSync(machine.hostsFile, "latin1"), `${original}10.7.0.2\tafter-remote.test\n`);
            assertOnly(machine.dir, ["hosts"]);
            writeFileSync(machine.hostsFile, original);
        });
    });
});
