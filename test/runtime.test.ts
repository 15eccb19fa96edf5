// Guards the composition root (provider/runtime.ts) as the provider process loads it: each kind's
// composition is loaded with the first resource of that kind, so a process that serves only hosts
// entries never loads the task API client (nor the other way round), and a kind this version does not
// know is refused with UnknownResourceKindError. Run in a fresh Node.js process each, on the built
// package, as the engine's provider process runs it.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./support/projects";

const run = promisify(execFile);
const RUNTIME = join(REPO_ROOT, "dist", "runtime.js");

/** The package's modules (paths under dist/) a fresh process has loaded after asking for the providers of `kinds`. */
async function loadedFor(kinds: readonly string[]): Promise<string[]> {
    const script = `
        const runtime = require(${JSON.stringify(RUNTIME)});
        for (const kind of ${JSON.stringify(kinds)}) runtime.providerFor(kind);
        const dist = ${JSON.stringify(join(REPO_ROOT, "dist"))} + "/";
        process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((p) => p.startsWith(dist)).map((p) => p.slice(dist.length))));
    `;
    // No engine address: the provider does not watch for an engine that is gone.
    const { stdout } = await run(process.execPath, ["-e", script], { cwd: REPO_ROOT });
    return JSON.parse(stdout) as string[];
}

describe("the composition root, in a provider process", () => {
    it("loads the hosts composition only for a hosts entry, and the task API client only for a task kind", async () => {
        const hostsOnly = await loadedFor(["hosts:HostEntry"]);
        assert.ok(hostsOnly.includes("hostsRuntime.js") && hostsOnly.includes("hosts/io/hostsFileStore.js"));
        assert.deepEqual(
            hostsOnly.filter((path) => path.startsWith("tasks") || path.startsWith("tasksRuntime")),
            [],
        );

        const tasksOnly = await loadedFor(["tasks:Datastore", "tasks:AsyncResource"]);
        assert.ok(tasksOnly.includes("tasksRuntime.js") && tasksOnly.includes("tasks/client/taskApiClient.js"));
        assert.deepEqual(
            tasksOnly.filter((path) => path.startsWith("hosts")),
            [],
        );
    });

    it("refuses a kind this version does not serve, naming it", async () => {
        const script = `
            try { require(${JSON.stringify(RUNTIME)}).providerFor("tasks:Volume"); }
            catch (error) { process.stdout.write(error.name + ": " + error.message); }
        `;
        const { stdout } = await run(process.execPath, ["-e", script], { cwd: REPO_ROOT });
        assert.match(stdout, /^UnknownResourceKindError: .*tasks:Volume/);
    });
});
