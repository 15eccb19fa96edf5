// Guards the file layer under the engine's parallelism: 200 creates at once through the real provider
// server leave 200 correct lines and every other byte intact, coalesced into far fewer writes; the same
// holds with a second provider process (another stack) writing the same file at the same time. hostile,
// the library most people use, is the baseline: the same check shows it losing writes.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { HostsDocument } from "../../../provider/hosts/logic/hostsDocument";
import { createHostEntry, numberedEntry } from "../../support/hostEntryClient";
import { fixture } from "../../support/hostsFixtures";
import { makeProject, REPO_ROOT, type TempDir } from "../../support/projects";
import { ProviderServer } from "../../support/providerServer";

const COUNT = 200;
const BASE = fixture("messy");

/** Names of `expected` entries missing from the file, and whether the original bytes are intact. */
function audit(file: Buffer, prefix: string, count: number): { missing: string[]; baseIntact: boolean } {
    const present = new Set<string>();
    for (const line of HostsDocument.parse(file).allLines()) {
        for (const name of line.entry?.names ?? []) present.add(name);
    }
    const missing = Array.from({ length: count }, (_, n) => `${prefix}-${n}.test`).filter((name) => !present.has(name));
    return { missing, baseIntact: file.subarray(0, BASE.length).equals(BASE) };
}

/** Write events the server reported through PULUMI_LIFECYCLE_TRACE. */
async function writesTraced(trace: string): Promise<number> {
    const text = await readFile(trace, "utf8").catch(() => "");
    return text.split("\n").filter(Boolean).length;
}

describe("concurrent writes", () => {
    let project: TempDir;
    let file: string;
    const servers: ProviderServer[] = [];

    beforeEach(async () => {
        project = await makeProject();
        file = join(project.dir, "hosts");
        await writeFile(file, BASE);
    });
    afterEach(async () => {
        await Promise.all(servers.splice(0).map((server) => server.stop()));
        await project.cleanup();
    });

    async function start(trace: string): Promise<ProviderServer> {
        const server = await ProviderServer.start({ projectDir: project.dir, env: { PULUMI_LIFECYCLE_TRACE: trace } });
        await server.configure({});
        servers.push(server);
        return server;
    }

    function createAll(server: ProviderServer, prefix: string) {
        return Promise.all(
            Array.from({ length: COUNT }, (_, n) =>
                createHostEntry(server, `${prefix}${n}`, numberedEntry(n, file, prefix)),
            ),
        );
    }

    it(`keeps all ${COUNT} parallel creates through one provider process, in far fewer writes`, async () => {
        const trace = join(project.dir, "trace.jsonl");
        const server = await start(trace);
        const created = await createAll(server, "host");
        const bytes = await readFile(file);
        assert.deepEqual(audit(bytes, "host", COUNT), { missing: [], baseIntact: true });
        const doc = HostsDocument.parse(bytes);
        const lines = created.map((c) => c.properties.line as number);
        assert.equal(new Set(lines).size, COUNT, "every entry reports its own line");
        for (const [n, c] of created.entries()) {
            const line = doc.allLines()[(c.properties.line as number) - 1];
            assert.deepEqual(line?.entry?.names, [`host-${n}.test`], `line ${c.properties.line} is entry ${n}`);
        }
        const writes = await writesTraced(trace);
        console.log(`      ${COUNT} creates, ${writes} writes`);
        assert.ok(writes < COUNT, `writes were coalesced (${writes} writes for ${COUNT} creates)`);
    });

    it(`keeps all creates of two provider processes writing the same file at the same time`, async () => {
        const [first, second] = await Promise.all([
            start(join(project.dir, "a.jsonl")),
            start(join(project.dir, "b.jsonl")),
        ]);
        await Promise.all([createAll(first, "alpha"), createAll(second, "beta")]);
        const bytes = await readFile(file);
        assert.deepEqual(audit(bytes, "alpha", COUNT), { missing: [], baseIntact: true });
        assert.deepEqual(audit(bytes, "beta", COUNT), { missing: [], baseIntact: true });
        assert.equal(
            HostsDocument.parse(bytes).allLines().length,
            HostsDocument.parse(BASE).allLines().length + 2 * COUNT,
        );
    });

    it("finds the writes hostile loses with the same check (the baseline)", async () => {
        const script = `
            const hostile = require("hostile");
            hostile.HOSTS = ${JSON.stringify(file)};
            let done = 0;
            for (let n = 0; n < 20; n++) hostile.set("10.9.0." + n, "host-" + n + ".test", () => { if (++done === 20) process.exit(0); });
        `;
        await promisify(execFile)(process.execPath, ["-e", script], { cwd: REPO_ROOT });
        const { missing, baseIntact } = audit(await readFile(file), "host", 20);
        console.log(
            `      hostile: 20 concurrent set() calls kept ${20 - missing.length}; other lines intact: ${baseIntact}`,
        );
        assert.ok(missing.length > 0, "the audit detects lost writes");
        assert.equal(baseIntact, false, "the audit detects the comments and spacing hostile rewrote");
    });
});
