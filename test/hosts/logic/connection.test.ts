// Guards the pure side of remote entries: a `connection` is validated before anything reaches a socket
// or a remote command line (sftpServer, user, host), secrets are never quoted in a failure, host-key pins
// parse and match as OpenSSH prints them, ids carry the machine, and the diff replaces on the machine
// only (host, port), updating in place for another login.

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HostEntryInputs, HostEntryOutputs } from "../../../provider/hosts/hostEntrySchema";
import { checkHostEntry } from "../../../provider/hosts/logic/check";
import { checkConnection, machineOf, parseMachine, sessionKey } from "../../../provider/hosts/logic/connection";
import { diffHostEntry } from "../../../provider/hosts/logic/diff";
import { formatId, parseId } from "../../../provider/hosts/logic/entries";
import { fingerprintOf, parseHostKeyPin, publicKeyLineOf } from "../../../provider/hosts/logic/hostKey";
import { UNKNOWN } from "../../../provider/shared/unknown";
import { skipBecause } from "../../support/system";

const ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA8EzUzaDrvJ1wqyPQrA/Srzv8em1QZUqb5wRlHDipHu";
const KEY_TEXT =
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-secret-body\n-----END OPENSSH PRIVATE KEY-----\n";

function failuresOf(connection: unknown, credentials?: unknown): { property: string; reason: string }[] {
    const failures: { property: string; reason: string }[] = [];
    checkConnection(connection, credentials, (property, reason) => failures.push({ property, reason }));
    return failures;
}

describe("remote entries: connection, host key, id and diff (pure)", () => {
    describe("checkConnection", () => {
        it("fills the defaults (port 22, user root) and normalizes the host", () => {
            const checked = checkConnection({ host: "Web1.Example.COM", hostKey: ED25519 }, undefined, () =>
                assert.fail(),
            );
            assert.deepEqual(checked?.connection, {
                host: "web1.example.com",
                port: 22,
                user: "root",
                hostKey: ED25519,
            });
            const v6 = checkConnection({ host: "[0:0:0:0:0:0:0:1]", port: 2222 }, undefined, () => assert.fail());
            assert.equal(v6?.connection.host, "::1");
            assert.equal(machineOf(v6?.connection ?? { host: "", port: 0 }), "[::1]:2222");
        });

        it("refuses what could reach a command line or a socket unchecked, naming the field", () => {
            const cases: [Record<string, unknown>, string][] = [
                [{ host: "web 1" }, "connection.host"],
                [{ host: "" }, "connection.host"],
                [{ host: "h", port: 0 }, "connection.port"],
                [{ host: "h", port: 22.5 }, "connection.port"],
                [{ host: "h", user: "root; rm -rf /" }, "connection.user"],
                [{ host: "h", sftpServer: "/usr/lib/openssh/sftp-server; id" }, "connection.sftpServer"],
                [{ host: "h", sftpServer: "sftp-server" }, "connection.sftpServer"],
                [{ host: "h", sftpServer: "/usr/../bin/sh" }, "connection.sftpServer"],
                [{ host: "h", privilege: "su" }, "connection.privilege"],
                [{ host: "h", hostKey: "ssh-ed25519 not-base64!" }, "connection.hostKey"],
                [{ host: "h", hostKye: ED25519 }, "connection.hostKye"],
            ];
            for (const [connection, property] of cases) {
                const failures = failuresOf(connection);
                assert.ok(
                    failures.some((failure) => failure.property === property),
                    `${JSON.stringify(connection)} fails on ${property}: ${JSON.stringify(failures)}`,
                );
            }
        });

        it("never quotes a secret in a failure", () => {
            const failures = [
                ...failuresOf({ host: "h", privateKey: "not a key but a secret-ish 5up3r" }),
                ...failuresOf({ host: "h" }, { password: 12345 }),
            ];
            assert.ok(failures.length >= 2);
            for (const failure of failures) assert.ok(!/5up3r|12345/.test(failure.reason), failure.reason);
        });

        it("keeps credentials apart from the connection, and tells logins apart without them", () => {
            const checked = checkConnection({ host: "h", privateKey: KEY_TEXT }, { password: "pw" }, () =>
                assert.fail(),
            );
            assert.deepEqual(checked?.credentials, { privateKey: KEY_TEXT, password: "pw" });
            assert.equal("privateKey" in (checked?.connection ?? {}), false);
            const a = sessionKey({ host: "h", port: 22, user: "root" }, { password: "one" });
            const b = sessionKey({ host: "h", port: 22, user: "root" }, { password: "two" });
            assert.notEqual(a, b);
            assert.ok(!a.includes("one") && !b.includes("two"), "a digest, not the secret");
        });

        it("a remote entry's file defaults to /etc/hosts and must be absolute", () => {
            const good = checkHostEntry(
                { address: "10.0.0.1", names: ["a.test"], connection: { host: "h" } },
                () => "/local/hosts",
            );
            assert.equal(good.inputs.file, "/etc/hosts");
            const relative = checkHostEntry(
                { address: "10.0.0.1", names: ["a.test"], file: "hosts", connection: { host: "h" } },
                () => "/local/hosts",
            );
            assert.ok(
                relative.failures.some((failure) => failure.property === "file" && /absolute/.test(failure.reason)),
            );
        });
    });

    describe("host key pins", () => {
        let dir: string;
        before(() => {
            dir = mkdtempSync(join(tmpdir(), "pl-hostkey-"));
        });
        after(() => rmSync(dir, { recursive: true, force: true }));

        it("match what ssh-keygen prints, for a key line and for a bare fingerprint", function () {
            try {
                execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "k")]);
            } catch {
                skipBecause(this, "ssh-keygen (Debian package openssh-client) is not installed");
            }
            const line = readFileSync(join(dir, "k.pub"), "utf8").trim();
            const printed = execFileSync("ssh-keygen", ["-lf", join(dir, "k.pub")], { encoding: "utf8" }).split(" ")[1];
            const pin = parseHostKeyPin(line);
            assert.equal(pin?.fingerprint, printed);
            assert.equal(pin?.text, line.split(" ").slice(0, 2).join(" "), "the comment is dropped");
            assert.equal(parseHostKeyPin(printed as string)?.fingerprint, printed);
            const blob = Buffer.from(line.split(" ")[1] as string, "base64");
            assert.equal(fingerprintOf(blob), printed);
            assert.equal(publicKeyLineOf(blob), pin?.text);
        });

        it("refuses a key line whose type disagrees with its blob", () => {
            assert.ok(parseHostKeyPin(ED25519));
            assert.equal(parseHostKeyPin(ED25519.replace("ssh-ed25519", "ssh-rsa")), undefined);
            assert.equal(parseHostKeyPin("SHA256:short"), undefined);
        });
    });

    describe("ids and machines", () => {
        it("carry the machine after @, and read back", () => {
            const id = formatId({ family: "ipv4", name: "web.test" }, "[::1]:2222");
            assert.equal(id, "ipv4/web.test@[::1]:2222");
            assert.deepEqual(parseId(id), { family: "ipv4", name: "web.test", machine: "[::1]:2222" });
            assert.deepEqual(parseId("ipv6/web.test"), { family: "ipv6", name: "web.test" });
            assert.equal(parseId("ipv4/a@b@c"), undefined);
            assert.deepEqual(parseMachine("[::1]:2222"), { host: "::1", port: 2222 });
            assert.deepEqual(parseMachine("web1:22"), { host: "web1", port: 22 });
            assert.equal(parseMachine("web1:99999"), undefined);
        });
    });

    describe("diff", () => {
        const olds: HostEntryOutputs = {
            address: "10.0.0.1",
            names: ["web.test"],
            file: "/etc/hosts",
            adopt: false,
            line: 3,
            connection: { host: "m1", port: 22, user: "root", hostKey: ED25519 },
            credentials: { privateKey: KEY_TEXT },
        };
        const news = (change: Partial<HostEntryInputs>): HostEntryInputs => ({
            address: "10.0.0.1",
            names: ["web.test"],
            file: "/etc/hosts",
            adopt: false,
            connection: { host: "m1", port: 22, user: "root", hostKey: ED25519 },
            credentials: { privateKey: KEY_TEXT },
            ...change,
        });
        const id = "ipv4/web.test@m1:22";

        it("another host or port replaces, create-before-delete (the lines are on different machines)", () => {
            for (const connection of [
                { host: "m2", port: 22, user: "root" },
                { host: "m1", port: 2222, user: "root" },
            ]) {
                const diff = diffHostEntry(id, olds, news({ connection }), true);
                assert.deepEqual(diff.replaces, ["connection"]);
                assert.equal(diff.deleteBeforeReplace, false);
            }
        });

        it("another user, key or credentials updates in place", () => {
            for (const change of [
                { connection: { host: "m1", port: 22, user: "deploy", hostKey: ED25519 } },
                { credentials: { password: "pw" } },
                { connection: { host: "m1", port: 22, user: "root", hostKey: ED25519, privilege: "sudo" as const } },
            ]) {
                const diff = diffHostEntry(id, olds, news(change), true);
                assert.deepEqual(diff.replaces, [], JSON.stringify(change));
                assert.equal(diff.changes, true);
            }
            assert.equal(diffHostEntry(id, olds, news({}), true).changes, false);
        });

        it("an unknown host replaces, delete-before-replace (it may be the same machine)", () => {
            const diff = diffHostEntry(
                id,
                olds,
                news({ connection: { host: UNKNOWN as unknown as string, port: 22, user: "root" } }),
                true,
            );
            assert.deepEqual(diff.replaces, ["connection"]);
            assert.equal(diff.deleteBeforeReplace, true);
        });

        it("moving a local entry to a machine replaces it", () => {
            const local: HostEntryOutputs = {
                address: "10.0.0.1",
                names: ["web.test"],
                file: "/etc/hosts",
                adopt: false,
                line: 3,
            };
            const diff = diffHostEntry("ipv4/web.test", local, news({}), false);
            assert.ok(diff.replaces.includes("connection"));
            assert.equal(diff.deleteBeforeReplace, false);
        });
    });
});
