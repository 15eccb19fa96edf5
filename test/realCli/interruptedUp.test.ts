// Guards, under the REAL Pulumi CLI, an `up` of many entries interrupted with two Ctrl-Cs after the
// provider wrote lines but before the engine recorded their creates (issue 18: the next `up` then failed
// with EntryConflictError on its own lines). To land the Ctrl-Cs in exactly that window, the provider's
// write trace (PULUMI_LIFECYCLE_TRACE, written right after each write and before the answers) is a FIFO
// nobody reads: the provider blocks there, holding answers the engine never gets, and is killed by the
// engine after the second Ctrl-C. The next `up` must converge without anyone editing the file: the lines
// its interrupted creates wrote are taken over, every other entry created, no line doubled, while a line
// someone else wrote for an entry of the program still fails row 4.

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { constants } from "node:fs";
import { appendFile, open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { assertOk, CliProject, nameOf, type ResourceSpec } from "../support/cliProject";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";

const BASE = "127.0.0.1\tlocalhost\n# keep me\n";
const COUNT = 40;

function entry(i: number): ResourceSpec {
    return { name: `e${i}`, args: { address: `10.0.${i >> 8}.${i & 255}`, names: [`e${i}.test`], file: "hosts" } };
}
const line = (i: number) => `10.0.${i >> 8}.${i & 255}\te${i}.test`;

describe("an up interrupted by two Ctrl-Cs after its lines were written (real CLI)", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let project: CliProject;
    let file: string;
    let trace: string;

    before(function () {
        cli = requirePulumiCli(this);
    });
    beforeEach(async () => {
        project = await CliProject.create(cli);
        file = join(project.dir, "hosts");
        await writeFile(file, BASE);
        trace = join(project.temp.dir, "trace");
        execFileSync("mkfifo", [trace]);
        await project.program(Array.from({ length: COUNT }, (_, i) => entry(i)));
    });
    afterEach(async () => {
        // Whatever still waits on the FIFO goes on (and, its engine gone, exits).
        const unblock = await open(trace, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => undefined);
        await unblock?.close();
        await project?.cleanup();
    });

    /** Runs `up` until its provider has written lines it cannot answer for, then presses Ctrl-C twice. */
    async function interruptedUp(): Promise<{ written: string[]; pending: string[] }> {
        const run = project.spawn(["up", "--yes", "--skip-preview", "--non-interactive"], {
            PULUMI_LIFECYCLE_TRACE: trace,
        });
        for (;;) {
            const text = await readFile(file, "utf8");
            if (text !== BASE) break;
            assert.equal(run.child.exitCode, null, `the up ended before writing:\n${run.output()}`);
            await sleep(100);
        }
        process.kill(-(run.child.pid as number), "SIGINT");
        await sleep(500);
        process.kill(-(run.child.pid as number), "SIGINT");
        const { code, output } = await run.done;
        assert.notEqual(code, 0, output);
        const written = (await readFile(file, "utf8")).slice(BASE.length).split("\n").filter(Boolean);
        assert.ok(written.length > 0);
        const state = await project.state();
        const pending = state.pendingOperations.map((op) => nameOf(op.resource.urn)).sort();
        for (const text of written) {
            const name = /\te(\d+)\.test$/.exec(text)?.[1];
            assert.ok(
                pending.includes(`e${name}`),
                `the create that wrote ${JSON.stringify(text)} is pending: ${pending}`,
            );
        }
        return { written, pending };
    }

    it("converges on the next up: the interrupted creates' lines are taken over, nothing doubled", async () => {
        const { written, pending } = await interruptedUp();
        const up = await project.up();
        assertOk(up);
        const lines = (await readFile(file, "utf8")).slice(BASE.length).split("\n").filter(Boolean);
        assert.equal((await readFile(file, "utf8")).slice(0, BASE.length), BASE);
        assert.deepEqual([...lines].sort(), Array.from({ length: COUNT }, (_, i) => line(i)).sort());
        assert.deepEqual(lines.slice(0, written.length), written, "the lines written before stayed where they were");
        const state = await project.state();
        assert.equal(state.resources.length, COUNT);
        // The CLI keeps listing the interrupted run's pending creates until a refresh clears them.
        assert.deepEqual(state.pendingOperations.map((op) => nameOf(op.resource.urn)).sort(), pending);
        const cleared = await project.spawn(["refresh", "--yes", "--non-interactive", "--clear-pending-creates"]).done;
        assert.equal(cleared.code, 0, cleared.output);
        const after = await project.state();
        assert.deepEqual(after.pendingOperations, []);
        assert.equal(after.resources.length, COUNT);
        assert.deepEqual((await readFile(file, "utf8")).slice(BASE.length).split("\n").filter(Boolean), lines);
        const preview = await project.preview();
        assertOk(preview);
        assert.deepEqual(
            preview.steps.filter((step) => !step.startsWith("same ")),
            [],
            "nothing left to change",
        );
    });

    it("still fails row 4 on a line someone else wrote for an entry of the program", async () => {
        const { written } = await interruptedUp();
        const untouched = Array.from({ length: COUNT }, (_, i) => i).find((i) => !written.includes(line(i)));
        assert.ok(untouched !== undefined, "some entry was not written before the interruption");
        await appendFile(file, `${line(untouched)}\n`);
        const up = await project.up();
        assert.equal(up.ok, false);
        assert.ok(up.steps.includes(`create e${untouched} (failed)`), up.steps.join("\n"));
        assert.match(up.errors.join("\n"), new RegExp(`e${untouched}\\.test.*adopt: true`, "s"));
        for (const text of written) {
            const name = /\te(\d+)\.test$/.exec(text)?.[1];
            assert.ok(
                !up.steps.includes(`create e${name} (failed)`),
                `e${name}, which it wrote itself, was taken over`,
            );
        }
    });
});
