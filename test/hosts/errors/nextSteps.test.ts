// Guards the words of the hosts errors a user meets without a file or a machine at hand (an id, a
// connection): each is a LifecycleError of its own name, says what was given, and leaves a next step
// that works. The errors raised by files and machines are checked where they are raised (test/hosts/io,
// test/hosts/remote, test/realCli).

import { strict as assert } from "node:assert";
import { ConnectionSettingsError } from "../../../provider/hosts/errors/connectionSettingsError";
import { EntryMachineError } from "../../../provider/hosts/errors/entryMachineError";
import { HostEntryIdError } from "../../../provider/hosts/errors/hostEntryIdError";
import { UnsupportedHostsFileError } from "../../../provider/hosts/errors/unsupportedHostsFileError";
import { LifecycleError } from "../../../provider/shared/errors/lifecycleError";

describe("hosts errors about ids and connections", () => {
    it("EntryMachineError, an id of another machine: names both machines and says to pass that machine's connection", () => {
        const error = new EntryMachineError("ipv4/web.internal@10.0.0.5:22", "10.0.0.5:22", "10.0.0.6:22");
        assert.ok(error instanceof LifecycleError);
        assert.equal(error.name, "EntryMachineError");
        assert.equal(
            error.message,
            'host entry id "ipv4/web.internal@10.0.0.5:22" is an entry on 10.0.0.5:22, but `connection` names ' +
                "10.0.0.6:22: pass `connection` with the host and port of 10.0.0.5:22 (and its hostKey and credentials).",
        );
    });

    it("EntryMachineError, a local id with a connection: says to leave the connection out or name the machine in the id", () => {
        const error = new EntryMachineError("ipv4/web.internal", undefined, "[fd00::5]:2222");
        assert.match(
            error.message,
            /is an entry of the machine running Pulumi, but `connection` names \[fd00::5\]:2222/,
        );
        assert.match(error.message, /leave `connection` out, or use the id with `@<host>:<port>`/);
    });

    it("HostEntryIdError: quotes what was given and shows the id's shape, local and remote", () => {
        const error = new HostEntryIdError("web.internal");
        assert.ok(error instanceof LifecycleError);
        assert.match(error.message, /^"web\.internal" is not a HostEntry id: ids are "<family>\/<canonical name>"/);
        assert.match(error.message, /"ipv4\/web\.internal@10\.0\.0\.5:22"/);
    });

    it("ConnectionSettingsError: names every failing field with its reason", () => {
        const error = new ConnectionSettingsError([
            { property: "connection.port", reason: "must be a whole number from 1 to 65535, not the number 0" },
            { property: "connection.hostKey", reason: "is required" },
        ]);
        assert.equal(
            error.message,
            "the connection cannot be used: connection.port must be a whole number from 1 to 65535, not the number 0; " +
                "connection.hostKey is required.",
        );
    });

    it("UnsupportedHostsFileError: a LifecycleError of its own name, carrying the parser's words", () => {
        const error = new UnsupportedHostsFileError(
            "the file is UTF-16 encoded; save it as UTF-8 (or ANSI) and try again",
        );
        assert.ok(error instanceof LifecycleError);
        assert.equal(error.name, "UnsupportedHostsFileError");
        assert.match(error.message, /save it as UTF-8/);
    });
});
