// Guards crash safety: SIGKILL of the provider process at any point in a stream of writes to a large
// hosts file never leaves a partial or empty file: every original byte is there and every entry line is
// whole. The next provider process then works at once: the dead process's lock is broken and its
// temporary files are swept.

import { strict as assert } from "node:assert";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { HostsDocument } from "../../../provider/hosts/logic/hostsDocument";
import { createHostEntry, numberedEntry } from "../../support/hostEntryClient";
import { blocklist } from "../../support/hostsFixtures";
import { makeProject, type TempDir } from "../../support/projects";
import { ProviderServer } from "../../support/providerServer";

const BASE = blocklist(100_000);
const IN_FLIGHT = 16;

/** Creates entries named `<prefix>-N.test`, IN_FLIGHT at a time, until a call fails (the process died). */
function streamCreates(server: ProviderServer, file: string, prefix: string): { ended: Promise<unknown> } {
    let next = 0;
    const worker = async () => {
        for (;;) {
            const n = next++;
            await createHostEntry(server, `e${n}`, numberedEntry(n, file, prefix));
        }
    };
    return { ended: Promise.all(Array.from({ length: IN_FLIGHT }, worker)).catch((error: unknown) => error) };
}

/** Resolves once the trace file reports at least `writes` writes; fails if the stream stops first. */
async function afterWrites(trace: string, writes: number, stream: { ended: Promise<unknown> }): Promise<void> {
    let ended: unknown;
    void stream.ended.then((error) => {
        ended = error ?? new Error("the stream ended");
    });
    for (;;) {
        const text = await readFile(trace, "utf8").catch(() => "");
        if (text.split("\n").filter(Boolean).length >= writes) return;
        if (ended) throw new Error(`the create stream stopped before ${writes} writes: ${String(ended)}`);
        await sleep(2);
    }
}

/** A wait on a dead holder's lock must never happen; a short timeout turns one into a failure. */
const FAST_LOCK_TIMEOUT = { PULUMI_LIFECYCLE_LOCK_TIMEOUT_MS: "5000" };

describe("crash safety", () => {
    let project: TempDir;
    let file: string;
    let server: ProviderServer | undefined;

    before(async () => {
        project = await makeProject();
        file = join(project.dir, "hosts");
        await writeFile(file, BASE);
    });
    after(() => project.cleanup());
    afterEach(async () => {
        await server?.stop();
        server = undefined;
    });

    for (const killAfter of [1, 3, 6, 10, 15]) {
        it(`leaves a whole file when the provider is killed after ${killAfter} writes`, async () => {
            const trace = join(project.dir, `trace-${killAfter}.jsonl`);
            server = await ProviderServer.start({
                projectDir: project.dir,
                env: { PULUMI_LIFECYCLE_TRACE: trace, ...FAST_LOCK_TIMEOUT },
            });
            await server.configure({});
            const stream = streamCreates(server, file, `crash${killAfter}`);
            await afterWrites(trace, killAfter, stream);
            server.kill("SIGKILL");
            await server.waitForExit();
            await stream.ended;

            const bytes = await readFile(file);
            assert.ok(bytes.subarray(0, BASE.length).equals(BASE), "every original byte is still there");
            const added = bytes.subarray(BASE.length).toString("latin1");
            assert.ok(added === "" || added.endsWith("\n"), "the file ends with a whole line");
            for (const line of added.split("\n").filter(Boolean)) {
                assert.match(
                    line,
                    /^10\.\d+\.\d+\.\d+\tcrash\d+-\d+\.test$/,
                    `a whole entry line: ${JSON.stringify(line)}`,
                );
            }
            HostsDocument.parse(bytes);
        });
    }

    it("lets the next provider process write at once, breaking the dead lock and sweeping temporaries", async () => {
        server = await ProviderServer.start({ projectDir: project.dir, env: FAST_LOCK_TIMEOUT });
        await server.configure({});
        const created = await createHostEntry(server, "after", numberedEntry(0, file, "after-crash"));
        assert.equal(created.id, "ipv4/after-crash-0.test");
        await server.stop();
        const leftovers = (await readdir(project.dir)).filter((name) => name.includes(".pulumi-lifecycle."));
        assert.deepEqual(leftovers, [], "no lock or temporary file is left");
        assert.ok((await stat(file)).size > BASE.length);
    });
});
