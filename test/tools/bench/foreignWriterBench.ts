// Foreign-writer benchmark: how many lines does a writer that ignores our lock lose while we write?
//
// A child process appends 1,000 numbered lines to the hosts file (open with O_APPEND, write, close, as
// `echo ... >> /etc/hosts` does), one every `intervalMs`, while this process creates and deletes
// entries through the provider as fast as it can, 4 operations in flight. Afterwards the foreign lines
// still in the file are counted. Our writes are atomic renames: a foreign append that lands between our
// read and our rename is on the old inode and is gone unless the write notices and is redone.

import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HostEntryProvider } from "../../../provider/hosts/hostEntryProvider";
import type { HostEntryInputs } from "../../../provider/hosts/hostEntrySchema";
import { CreateJournal } from "../../../provider/hosts/io/createJournal";
import { HostsFileStore } from "../../../provider/hosts/io/hostsFileStore";
import { fixture } from "../../support/hostsFixtures";
import { makeProject } from "../../support/projects";

/** The figures of one run. */
export interface ForeignWriterRun {
    readonly intervalMs: number;
    readonly appends: number;
    readonly lost: number;
    /** Our creates and deletes that completed while the appender ran. */
    readonly ourOperations: number;
    readonly ourWrites: number;
    /** Our operations that failed (the file kept changing under them), with the first message. */
    readonly ourFailures: number;
    readonly firstFailure?: string;
}

const APPENDS = 1_000;
const OUR_IN_FLIGHT = 4;

/** Appends `count` lines to `file`, one every `intervalMs` (a synchronous sleep, so the pace holds). */
const APPENDER = `
    const { appendFileSync } = require("node:fs");
    const [file, count, intervalMs] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < count; i++) {
        appendFileSync(file, "10.99." + (i >> 8) + "." + (i & 255) + " foreign-" + i + ".test\\n");
        Atomics.wait(pause, 0, 0, intervalMs);
    }
`;

/** One run: the appender at `intervalMs` against our writer. */
export async function benchForeignWriter(intervalMs: number): Promise<ForeignWriterRun> {
    const project = await makeProject("foreign-writer-bench");
    const file = join(project.dir, "hosts");
    try {
        await writeFile(file, fixture("debian"));
        let ourWrites = 0;
        const journal = new CreateJournal();
        const store = new HostsFileStore({
            lock: { timeoutMs: 30_000, staleMs: 60_000 },
            onWrite: () => ourWrites++,
            journal,
        });
        const provider = new HostEntryProvider(store, journal);
        const appender = spawn(process.execPath, ["-e", APPENDER, file, String(APPENDS), String(intervalMs)], {
            stdio: "inherit",
        });
        let running = true;
        const finished = new Promise<void>((resolve, reject) => {
            appender.on("error", reject);
            appender.on("exit", (code) =>
                code === 0 ? resolve() : reject(new Error(`the appender exited with ${code}`)),
            );
        }).finally(() => {
            running = false;
        });
        let ourOperations = 0;
        let ourFailures = 0;
        let firstFailure: string | undefined;
        const worker = async (slot: number) => {
            for (let round = 0; running; round++) {
                const args = {
                    address: `10.98.${slot}.${round & 255}`,
                    names: [`ours-${slot}.test`],
                    file,
                    __owner: "organization/bench/dev",
                };
                const { inputs } = await provider.check({} as HostEntryInputs, args as HostEntryInputs);
                if (!inputs) throw new Error("check returned no inputs");
                try {
                    const { id, outs } = await provider.create(inputs);
                    if (outs) await provider.delete(id, outs);
                    ourOperations += 2;
                } catch (error) {
                    ourFailures++;
                    firstFailure ??= error instanceof Error ? error.message : String(error);
                }
            }
        };
        await Promise.all([finished, ...Array.from({ length: OUR_IN_FLIGHT }, (_, slot) => worker(slot))]);
        const text = await readFile(file, "utf8");
        const kept = new Set(text.match(/foreign-\d+\.test/g) ?? []);
        return {
            intervalMs,
            appends: APPENDS,
            lost: APPENDS - kept.size,
            ourOperations,
            ourWrites,
            ourFailures,
            firstFailure,
        };
    } finally {
        await project.cleanup();
    }
}
