// Guards the read helpers for Pulumi programs (listHostEntries, findHostEntries): what they return for
// a real file, canonical address and case-insensitive name queries, the default-file chain a HostEntry
// uses, and clear errors for a missing or unreadable file.

import { strict as assert } from "node:assert";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { HostsFileError } from "../../../provider/hosts/errors/hostsFileError";
import { HostsFileNotFoundError } from "../../../provider/hosts/errors/hostsFileNotFoundError";
import { findHostEntries, listHostEntries } from "../../../provider/hosts/io/lookup";
import { makeTempDir, type TempDir } from "../../support/projects";

const HOSTS = [
    "# static table",
    "127.0.0.1\tlocalhost",
    "10.0.0.5  Web.Internal  api.internal   # web tier",
    "",
    "::1     localhost ip6-localhost ip6-loopback",
    "FE80:0:0:0:0:0:0:1 router.lan",
    "10.0.0.6 web.internal",
    "not-an-address foo",
    "10.0.0.7 bad_name #",
].join("\r\n");

describe("hosts lookup: listHostEntries and findHostEntries", () => {
    let temp: TempDir;
    let file: string;

    before(async () => {
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
        // A BOM and CRLF endings, as Windows editors leave them: line numbers must not shift.
        await writeFile(file, `\uFEFF${HOSTS}`);
    });

    after(() => temp.cleanup());

    it("lists every address line, canonical and lowercase, with its 1-based line number", async () => {
        assert.deepEqual(await listHostEntries({ file }), [
            { address: "127.0.0.1", family: "ipv4", names: ["localhost"], line: 2 },
            {
                address: "10.0.0.5",
                family: "ipv4",
                names: ["web.internal", "api.internal"],
                comment: "web tier",
                line: 3,
            },
            { address: "::1", family: "ipv6", names: ["localhost", "ip6-localhost", "ip6-loopback"], line: 5 },
            { address: "fe80::1", family: "ipv6", names: ["router.lan"], line: 6 },
            { address: "10.0.0.6", family: "ipv4", names: ["web.internal"], line: 7 },
            { address: "10.0.0.7", family: "ipv4", names: ["bad_name"], line: 9 },
        ]);
    });

    it("filters with match on the address or any name, also with a global pattern", async () => {
        const global = /internal/g;
        const found = await listHostEntries({ file, match: global });
        assert.deepEqual(
            found.map((entry) => entry.line),
            [3, 7],
        );
        assert.equal(global.lastIndex, 0);
        assert.deepEqual(
            (await listHostEntries({ file, match: /^fe80::1$/ })).map((entry) => entry.line),
            [6],
        );
    });

    it("finds by name case-insensitively, on every line and in both families", async () => {
        assert.deepEqual(
            (await findHostEntries({ file, name: "WEB.internal" })).map((entry) => entry.line),
            [3, 7],
        );
        assert.deepEqual(
            (await findHostEntries({ file, name: "localhost" })).map((entry) => [entry.family, entry.address]),
            [
                ["ipv4", "127.0.0.1"],
                ["ipv6", "::1"],
            ],
        );
        assert.deepEqual(await findHostEntries({ file, name: "absent.example" }), []);
    });

    it("folds the case of ASCII letters only, as resolvers do", async () => {
        const kelvin = join(temp.dir, "kelvin-hosts");
        await writeFile(kelvin, "10.0.0.8 \u212Aelvin.test\n10.0.0.9 KELVIN.test\n");
        assert.deepEqual(
            (await findHostEntries({ file: kelvin, name: "kelvin.TEST" })).map((entry) => [entry.line, entry.names]),
            [[2, ["kelvin.test"]]],
        );
        assert.deepEqual(
            (await findHostEntries({ file: kelvin, name: "\u212Aelvin.test" })).map((entry) => entry.line),
            [1],
        );
    });

    it("finds by address in canonical form, and by name and address together", async () => {
        assert.deepEqual(
            (await findHostEntries({ file, address: "0:0:0:0:0:0:0:1" })).map((entry) => entry.line),
            [5],
        );
        assert.deepEqual(
            (await findHostEntries({ file, address: "fe80::0:1" })).map((entry) => entry.line),
            [6],
        );
        assert.deepEqual(
            (await findHostEntries({ file, name: "web.internal", address: "10.0.0.6" })).map((entry) => entry.line),
            [7],
        );
        assert.deepEqual(await findHostEntries({ file, name: "router.lan", address: "10.0.0.6" }), []);
    });

    it("refuses a query that names nothing or an address that is not one", async () => {
        await assert.rejects(findHostEntries({ file }), /needs a name, an address, or both/);
        await assert.rejects(findHostEntries({ file, address: "web.internal" }), /"web\.internal" is not an IPv4/);
    });

    it("never writes the file", async () => {
        const before = await readFile(file);
        await listHostEntries({ file });
        await findHostEntries({ file, name: "localhost" });
        assert.deepEqual(await readFile(file), before);
    });

    it("fails clearly when the file is missing or cannot be read", async () => {
        const missing = join(temp.dir, "missing", "hosts");
        await assert.rejects(listHostEntries({ file: missing }), (error: unknown) => {
            assert.ok(error instanceof HostsFileNotFoundError);
            assert.equal(error.file, missing);
            assert.equal(error.message, `cannot read hosts file ${missing}: it does not exist.`);
            return true;
        });
        const directory = join(temp.dir, "a-directory");
        await mkdir(directory);
        await assert.rejects(findHostEntries({ file: directory, name: "x" }), (error: unknown) => {
            assert.ok(error instanceof HostsFileError);
            assert.match(error.message, new RegExp(`^cannot read hosts file ${directory}: it is a directory`));
            return true;
        });
        const utf16 = join(temp.dir, "utf16");
        await writeFile(utf16, Buffer.from("\uFEFF127.0.0.1 localhost\n", "utf16le"));
        await assert.rejects(listHostEntries({ file: utf16 }), /^HostsFileError: cannot read hosts file .*UTF-16/);
    });

    describe("default file", () => {
        let configured: string;
        let fromEnv: string;
        const savedEnv = process.env.HOSTS_FILE;
        const savedConfig = pulumi.runtime.allConfig();

        before(async () => {
            configured = join(temp.dir, "configured-hosts");
            fromEnv = join(temp.dir, "env-hosts");
            await writeFile(configured, "10.9.0.1 configured.example\n");
            await writeFile(fromEnv, "10.9.0.2 env.example\n");
        });

        afterEach(() => {
            if (savedEnv === undefined) delete process.env.HOSTS_FILE;
            else process.env.HOSTS_FILE = savedEnv;
            pulumi.runtime.setAllConfig(savedConfig, []);
        });

        it("reads HOSTS_FILE when the stack config does not set one", async () => {
            process.env.HOSTS_FILE = fromEnv;
            pulumi.runtime.setAllConfig({}, []);
            assert.deepEqual(
                (await listHostEntries()).map((entry) => entry.names),
                [["env.example"]],
            );
        });

        it("prefers the stack config pulumi-lifecycle:hostsFile, as a HostEntry does", async () => {
            process.env.HOSTS_FILE = fromEnv;
            pulumi.runtime.setAllConfig({ "pulumi-lifecycle:hostsFile": configured }, []);
            assert.deepEqual(
                (await findHostEntries({ name: "configured.example" })).map((entry) => entry.address),
                ["10.9.0.1"],
            );
            assert.deepEqual(await findHostEntries({ name: "env.example" }), []);
        });
    });
});
