// A machine that stops answering in the middle of a session (hung, or cut off without a reset): the
// keepalive probes go unanswered, the connection is dropped, and the operation fails naming the machine
// instead of holding the `up` (and the file's lock) forever. The probe interval is injected (200 ms),
// and the test waits only for the failure, bounded by mocha's timeout: no timing is asserted.

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { HostsFileStore } from "../../../provider/hosts/io/hostsFileStore";
import { checkConnection } from "../../../provider/hosts/logic/connection";
import { SshMachines } from "../../../provider/hosts/remote/sshMachines";
import { type Fleet, type FleetMachine, fleetServerPids, requireFleet, startFleet } from "../../support/sshFleet";

/** The sshd listener of `machine` and every process under it (its sessions and their sftp-server). */
function processTree(root: number): number[] {
    const children = (pid: number): number[] => {
        try {
            return execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
                .split("\n")
                .filter(Boolean)
                .map(Number);
        } catch {
            return [];
        }
    };
    const tree = [root];
    for (let i = 0; i < tree.length; i++) tree.push(...children(tree[i] as number));
    return tree;
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
    for (const pid of pids) {
        try {
            process.kill(pid, signal);
        } catch {
            // Gone already.
        }
    }
}

describe("a machine that stops answering mid-session (real sshd, frozen)", function () {
    this.timeout(60_000);
    let fleet: Fleet;
    let machine: FleetMachine;
    let frozen: number[] = [];

    before(async function () {
        requireFleet(this);
        fleet = await startFleet(1);
        machine = fleet.machines[0] as FleetMachine;
    });
    after(async () => {
        signalAll(frozen, "SIGCONT");
        await fleet?.stop({ remove: true });
    });

    it("fails the operation, naming the machine, once the keepalive probes go unanswered", async () => {
        const checked = checkConnection(
            { host: machine.host, port: machine.port, hostKey: machine.hostKey, privateKey: fleet.privateKey },
            undefined,
            () => assert.fail("a valid connection"),
        );
        assert.ok(checked);
        const machines = new SshMachines(undefined, 200);
        const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
        const location = {
            file: machine.remoteHostsPath,
            access: machines.filesOn(checked.connection, checked.credentials),
        };
        // A failure here is not the one under test: say what the server said (one CI run saw an ECONNRESET).
        const lines = await store
            .read(location, (doc) => doc.lineCount)
            .catch((error: Error) => {
                assert.fail(`the first read, before any freeze, failed: ${error.message}\nsshd: ${machine.log()}`);
            });
        assert.ok(lines > 0, "the session works");

        const [listener] = fleetServerPids(fleet.root);
        assert.ok(listener !== undefined);
        frozen = processTree(listener);
        assert.ok(frozen.length >= 3, `the listener, its session and its sftp-server: ${frozen.join(" ")}`);
        signalAll(frozen, "SIGSTOP");

        await assert.rejects(
            store.read(location, (doc) => doc.lineCount),
            (error: Error) => error.message.includes(`127.0.0.1:${machine.port}`),
        );
        signalAll(frozen, "SIGCONT");
        await machines.close();
    });
});
