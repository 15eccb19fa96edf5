// Guards the promise of `hosts import`: every declaration it prints is adopted by the real provider,
// run by the real dynamic-provider server, without writing the file. Each entry goes through check and
// create exactly as the engine sends them; afterwards the file must be byte for byte what it was, and
// each id `<family>/<canonical name>`. Skipped lines are shown to be ones adopt would refuse.

import { strict as assert } from "node:assert";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HostsDocument } from "../../provider/hosts/logic/hostsDocument";
import { type ImportPlan, planImport } from "../../provider/hosts/logic/importer";
import { makeProject, type TempDir } from "../support/projects";
import { ProviderCallError, ProviderServer } from "../support/providerServer";
import { providerTextOf } from "../support/providerTextOf";

/** A workstation's file: distribution defaults, hand-written entries, and lines that cannot be adopted. */
const WORKSTATION = [
    "# /etc/hosts: static lookup table for host names",
    "127.0.0.1\tlocalhost",
    "127.0.1.1\tWorkstation.example.org\tworkstation",
    "",
    "# The following lines are desirable for IPv6 capable hosts",
    "::1     localhost ip6-localhost ip6-loopback",
    "ff02::1 ip6-allnodes",
    "ff02::2 ip6-allrouters",
    "",
    "# Development",
    "10.0.0.5    Web.Internal  API.internal\t# web tier",
    "10.0.0.6 db.internal #",
    "FE80:0:0:0:0:0:0:1 router.lan   # link-local, written long",
    "::ffff:10.0.0.7 mapped.internal",
    '192.168.1.11 printer.lan # say "hi" \\ */ # second hash',
    "10.1.0.1 old.internal   # duplicated name",
    "10.1.0.2 old.internal",
    "10.2.0.1 bad_name.internal",
    "fd00::10 web.internal # same name, other family",
    "10.3.0.1 tabbed.internal # a\tcomment",
];

/** The same file with a BOM, CRLF endings, a byte that is not UTF-8 and no final newline. */
const WINDOWS = Buffer.concat([
    Buffer.from(`\uFEFF${WORKSTATION.join("\r\n")}\r\n192.168.1.10 nas.lan # caf`),
    Buffer.from([0xe9]),
]);

const FIXTURES: [string, Buffer][] = [
    ["an LF file with a final newline", Buffer.from(`${WORKSTATION.join("\n")}\n`)],
    ["a CRLF file with a BOM, a latin-1 byte and no final newline", WINDOWS],
];

function urnOf(resourceName: string): string {
    return `urn:pulumi:test::test-project::pulumi-nodejs:dynamic/hosts:HostEntry::${resourceName}`;
}

describe("hosts import: every declaration is adopted by the real provider without a write", () => {
    let project: TempDir;
    let server: ProviderServer;
    let provider: string;

    before(async () => {
        project = await makeProject();
        server = await ProviderServer.start({ projectDir: project.dir });
        await server.configure({});
        provider = providerTextOf("hosts:HostEntry");
    });

    after(async () => {
        await server?.stop();
        await project?.cleanup();
    });

    for (const [label, bytes] of FIXTURES) {
        it(`adopts each entry of ${label}, leaving the file byte-identical`, async () => {
            const file = join(project.dir, `hosts-${FIXTURES.findIndex(([l]) => l === label)}`);
            await writeFile(file, bytes);
            const plan: ImportPlan = planImport(HostsDocument.parse(bytes), { file, includeSystem: true });
            assert.equal(plan.entries.length, bytes === WINDOWS ? 12 : 11);
            assert.deepEqual(
                plan.skipped.map((s) => s.text.trim()),
                [
                    "10.1.0.1 old.internal   # duplicated name",
                    "10.1.0.2 old.internal",
                    "10.2.0.1 bad_name.internal",
                    "10.3.0.1 tabbed.internal # a\tcomment",
                ],
            );

            // The engine runs up to 16 operations at once; so do we, as one batch of the provider's store.
            const results = await Promise.all(
                plan.entries.map(async (entry) => {
                    const urn = urnOf(entry.resourceName);
                    const checked = await server.check(urn, {}, { __provider: provider, ...entry.args });
                    assert.deepEqual(checked.failures, [], entry.resourceName);
                    const { __provider, ...inputs } = checked.inputs;
                    assert.equal(__provider, provider);
                    assert.deepEqual(inputs, entry.args, "check changes nothing");
                    return { entry, created: await server.create(urn, checked.inputs) };
                }),
            );

            assert.deepEqual(await readFile(file), bytes, "adopting wrote nothing");
            for (const { entry, created } of results) {
                const family = entry.args.address.includes(":") ? "ipv6" : "ipv4";
                assert.equal(created.id, `${family}/${entry.args.names[0]}`);
                assert.match(created.id, /^ipv[46]\/[a-z0-9.-]+$/);
                assert.equal(created.properties.line, entry.lineNumber, entry.resourceName);
                assert.equal(created.properties.adopt, true);
            }
            assert.deepEqual(
                results.map(({ created }) => created.id),
                [
                    "ipv4/localhost",
                    "ipv4/workstation.example.org",
                    "ipv6/localhost",
                    "ipv6/ip6-allnodes",
                    "ipv6/ip6-allrouters",
                    "ipv4/web.internal",
                    "ipv4/db.internal",
                    "ipv6/router.lan",
                    "ipv6/mapped.internal",
                    "ipv4/printer.lan",
                    "ipv6/web.internal",
                    ...(bytes === WINDOWS ? ["ipv4/nas.lan"] : []),
                ],
            );
        });
    }

    it("skips only what adopt would refuse: a line sharing a name fails to adopt and the file stays", async () => {
        const bytes = Buffer.from(`${WORKSTATION.join("\n")}\n`);
        const file = join(project.dir, "hosts-refused");
        await writeFile(file, bytes);
        const [first] = planImport(HostsDocument.parse(bytes), { file, includeSystem: true }).skipped;
        assert.equal(first?.text, "10.1.0.1 old.internal   # duplicated name");
        const args = { address: "10.1.0.1", names: ["old.internal"], comment: "duplicated name", file, adopt: true };
        const urn = urnOf("old.internal");
        const checked = await server.check(urn, {}, { __provider: provider, ...args });
        assert.deepEqual(checked.failures, []);
        await assert.rejects(server.create(urn, checked.inputs), (error: unknown) => {
            assert.ok(error instanceof ProviderCallError);
            assert.match(error.details, /cannot adopt an existing line .* its names are on 2 lines/);
            return true;
        });
        assert.deepEqual(await readFile(file), bytes);
    });
});
