// The read helpers on another machine: `listHostEntries` and `findHostEntries` with a `connection` read
// the machine's file over one SSH connection (real sshd), with the host key pinned, and fail with the
// package's errors (unpinned key, bad settings, missing file) rather than answering "no entries".

import { strict as assert } from "node:assert";
import {
    ConnectionSettingsError,
    findHostEntries,
    HostsFileNotFoundError,
    listHostEntries,
    SshHostKeyError,
} from "../../../provider/hosts";
import { type Fleet, type FleetMachine, requireFleet, startFleet } from "../../support/sshFleet";

describe("listHostEntries and findHostEntries on another machine (real sshd)", function () {
    this.timeout(60_000);
    let fleet: Fleet;
    let machine: FleetMachine;
    const connection = () => ({
        host: machine.host,
        port: machine.port,
        hostKey: machine.hostKey,
        privateKey: fleet.privateKey,
    });

    before(async function () {
        requireFleet(this);
        fleet = await startFleet(1);
        machine = fleet.machines[0] as FleetMachine;
    });
    after(() => fleet?.stop({ remove: true }));

    it("lists the address lines of the machine's file, and finds by name", async () => {
        const entries = await listHostEntries({ connection: connection(), file: machine.remoteHostsPath });
        assert.deepEqual(
            entries.map((entry) => `${entry.line} ${entry.address} ${entry.names.join(" ")}`),
            [
                "1 127.0.0.1 localhost",
                `2 127.0.1.1 ${machine.name}.fleet.test ${machine.name}`,
                "5 ::1 localhost ip6-localhost ip6-loopback",
                "6 ff02::1 ip6-allnodes",
                "7 ff02::2 ip6-allrouters",
            ],
        );
        const found = await findHostEntries({
            name: machine.name,
            connection: connection(),
            file: machine.remoteHostsPath,
        });
        assert.deepEqual(
            found.map((entry) => entry.address),
            ["127.0.1.1"],
        );
    });

    it("refuses an unpinned host key, naming the key to pin", async () => {
        const { hostKey: _, ...unpinned } = connection();
        await assert.rejects(
            listHostEntries({ connection: unpinned as never, file: machine.remoteHostsPath }),
            (error: unknown) =>
                error instanceof SshHostKeyError &&
                error.message.includes(machine.hostKeyFingerprint) &&
                error.message.includes(machine.hostKey),
        );
    });

    it("refuses bad settings and a missing file with the package's errors", async () => {
        await assert.rejects(
            listHostEntries({
                connection: { ...connection(), sftpServer: "/bin/sh -c id" },
                file: machine.remoteHostsPath,
            }),
            (error: unknown) =>
                error instanceof ConnectionSettingsError && /connection\.sftpServer/.test(error.message),
        );
        await assert.rejects(
            listHostEntries({ connection: connection(), file: "relative/hosts" }),
            (error: unknown) => error instanceof ConnectionSettingsError && /absolute/.test(error.message),
        );
        await assert.rejects(
            listHostEntries({ connection: connection(), file: `${machine.dir}/missing` }),
            (error: unknown) =>
                error instanceof HostsFileNotFoundError &&
                error.message.includes(`127.0.0.1:${machine.port}:${machine.dir}/missing`),
        );
    });
});
