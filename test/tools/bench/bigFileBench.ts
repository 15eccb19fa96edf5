// Big-file benchmark: a 150,000-line ad-blocking hosts file with 10 entries managed by Pulumi. Each of
// create, read (refresh), update and delete runs 10 times, one at a time, through the compiled
// HostEntryProvider and its store in a plain Node.js process (a provider process serves a deployment's
// operations the same way, after its first read); five fresh processes, medians over them. Beside it, in their own processes on the same file:
//   limit     what one change cannot avoid: read the file, write it whole to a temporary file, fsync,
//             rename, fsync the directory (our atomic write, with nothing computed)
//   naive     read, split into lines, edit, join, then the same atomic write
//   hostile   `hostile.set` / `hostile.remove`: read, edit, write in place, no fsync, no atomicity
// Peak RSS is compared with the file's size and an idle Node.js process that loaded the same modules.

import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { makeProject, REPO_ROOT } from "../../support/projects";
import { median } from "./median";

/** Lines in the file, and entries managed in it. */
export const BIG_FILE_LINES = 150_000;
export const MANAGED = 10;
/** Fresh processes ours and the limit each run in; their figures are the medians over these. */
export const FRESH_PROCESSES = 5;

/** Median ms per operation of each kind, the first operation (which reads the file cold), and peak RSS. */
export interface BigFileRun {
    readonly create: number;
    readonly read: number;
    readonly update: number;
    readonly delete: number;
    readonly firstMs: number;
    readonly peakMb: number;
}

/** What one benchmark process reports. */
export interface BigFileResults {
    readonly fileMb: number;
    readonly ours: BigFileRun;
    readonly limit: BigFileRun;
    readonly naive: BigFileRun;
    readonly hostile: BigFileRun;
    /** Peak RSS of a Node.js process that loaded the package and did nothing. */
    readonly idleMb: number;
}

/** An ad-blocking list as such tools write it: a header, then one blocked name per line. */
export function adBlockingFile(lines: number): Buffer {
    const header = "# Ad-blocking hosts file\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n\n";
    const body: string[] = [];
    for (let i = 0; i < lines - 4; i++) body.push(`0.0.0.0 ads${i}.tracker-${i % 977}.example.com\n`);
    return Buffer.from(header + body.join(""));
}

const dist = (path: string) => JSON.stringify(join(REPO_ROOT, "dist", path));

/** The part every script shares: timing helpers, the ten entries, and the report. */
const PRELUDE = `
    const { performance } = require("node:perf_hooks");
    const fs = require("node:fs");
    const file = process.argv[1];
    const entries = Array.from({ length: ${MANAGED} }, (_, i) => ({ address: "10.9.0." + (i + 1), names: ["managed-" + i + ".internal"] }));
    const times = { create: [], read: [], update: [], delete: [] };
    let firstMs;
    async function timed(kind, work) {
        const started = performance.now();
        await work();
        const ms = performance.now() - started;
        if (firstMs === undefined) firstMs = ms;
        times[kind].push(ms);
    }
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    function report() {
        const out = { firstMs, peakMb: process.resourceUsage().maxRSS / 1024 };
        for (const kind of Object.keys(times)) out[kind] = median(times[kind]);
        process.stdout.write(JSON.stringify(out));
    }
`;

const OURS = `${PRELUDE}
    const { HostEntryProvider } = require(${dist("hosts/hostEntryProvider.js")});
    const { HostsFileStore } = require(${dist("hosts/io/hostsFileStore.js")});
    const { CreateJournal } = require(${dist("hosts/io/createJournal.js")});
    const journal = new CreateJournal();
    const store = new HostsFileStore({ lock: { timeoutMs: 30000, staleMs: 60000 }, journal });
    const provider = new HostEntryProvider(store, journal);
    (async () => {
        const ids = [];
        const outputs = [];
        for (const entry of entries) {
            const { inputs } = await provider.check({}, { ...entry, file, __owner: "organization/bench/dev" });
            await timed("create", async () => {
                const created = await provider.create(inputs);
                ids.push(created.id);
                outputs.push(created.outs);
            });
        }
        for (let i = 0; i < ${MANAGED}; i++) await timed("read", () => provider.read(ids[i], outputs[i]));
        for (let i = 0; i < ${MANAGED}; i++) {
            const { inputs } = await provider.check(outputs[i], { ...entries[i], names: [...entries[i].names, "alias-" + i], file });
            await timed("update", async () => { outputs[i] = (await provider.update(ids[i], outputs[i], inputs)).outs; });
        }
        for (let i = 0; i < ${MANAGED}; i++) await timed("delete", () => provider.delete(ids[i], outputs[i]));
        report();
    })();
`;

/** The limit and the naive rewrite: the same loop around one read and one atomic write per operation. */
function rewriteScript(edit: "none" | "lines"): string {
    return `${PRELUDE}
    const { writeFileAtomicSync } = require(${dist("shared/files/atomicWrite.js")});
    function change(apply) {
        const bytes = fs.readFileSync(file);
        ${
            edit === "none"
                ? "writeFileAtomicSync(file, bytes);"
                : `const lines = bytes.toString("utf8").split("\\n");
        apply(lines);
        writeFileAtomicSync(file, Buffer.from(lines.join("\\n")));`
        }
    }
    const lineOf = (entry) => entry.address + "\\t" + entry.names.join(" ");
    const indexOf = (lines, name) => lines.findIndex((line) => line.split(/\\s+/).slice(1).includes(name));
    (async () => {
        for (const entry of entries) await timed("create", () => change((lines) => lines.splice(lines.length - 1, 0, lineOf(entry))));
        for (const entry of entries) await timed("read", () => ${
            edit === "none"
                ? "fs.readFileSync(file)"
                : `{ const lines = fs.readFileSync(file, "utf8").split("\\n"); indexOf(lines, entry.names[0]); }`
        });
        for (const entry of entries) await timed("update", () => change((lines) => { lines[indexOf(lines, entry.names[0])] = lineOf({ ...entry, names: [...entry.names, "alias"] }); }));
        for (const entry of entries) await timed("delete", () => change((lines) => lines.splice(indexOf(lines, entry.names[0]), 1)));
        report();
    })();
`;
}

const HOSTILE = `${PRELUDE}
    const hostile = require("hostile");
    hostile.HOSTS = file;
    (async () => {
        for (const entry of entries) await timed("create", () => hostile.set(entry.address, entry.names[0]));
        for (const entry of entries) await timed("read", () => hostile.getFile(file, false).find((pair) => pair[1] === entry.names[0]));
        for (const entry of entries) await timed("update", () => { hostile.remove(entry.address, entry.names[0]); hostile.set("10.9.1.1", entry.names[0]); });
        for (const entry of entries) await timed("delete", () => hostile.remove("10.9.1.1", entry.names[0]));
        report();
    })();
`;

const IDLE = `
    require(${dist("hosts/hostEntryProvider.js")});
    require(${dist("hosts/io/hostsFileStore.js")});
    process.stdout.write(JSON.stringify({ peakMb: process.resourceUsage().maxRSS / 1024 }));
`;

/** Each figure's median over the runs. */
function medianRun(runs: readonly BigFileRun[]): BigFileRun {
    const of = (pick: (run: BigFileRun) => number) => median(runs.map(pick));
    return {
        create: of((run) => run.create),
        read: of((run) => run.read),
        update: of((run) => run.update),
        delete: of((run) => run.delete),
        firstMs: of((run) => run.firstMs),
        peakMb: of((run) => run.peakMb),
    };
}

async function runScript(script: string, file: string): Promise<BigFileRun> {
    const { stdout } = await promisify(execFile)(process.execPath, ["-e", script, file], {
        cwd: REPO_ROOT,
        maxBuffer: 1 << 20,
    });
    return JSON.parse(stdout) as BigFileRun;
}

/** Runs every contender on a fresh copy of the same file. */
export async function benchBigFile(lines = BIG_FILE_LINES): Promise<BigFileResults> {
    const project = await makeProject("big-file-bench");
    const bytes = adBlockingFile(lines);
    const fresh = async (name: string) => {
        const file = join(project.dir, name);
        await writeFile(file, bytes);
        return file;
    };
    try {
        // The first operation is one sample per process, and a fresh process's first milliseconds vary
        // (a collection, the machine's page reclaim): ours and the limit each run in several, interleaved.
        const runs: { ours: BigFileRun[]; limit: BigFileRun[] } = { ours: [], limit: [] };
        for (let i = 0; i < FRESH_PROCESSES; i++) {
            runs.limit.push(await runScript(rewriteScript("none"), await fresh(`limit-${i}`)));
            runs.ours.push(await runScript(OURS, await fresh(`ours-${i}`)));
        }
        const [limit, ours] = [medianRun(runs.limit), medianRun(runs.ours)];
        const naive = await runScript(rewriteScript("lines"), await fresh("naive"));
        const hostile = await runScript(HOSTILE, await fresh("hostile"));
        const idle = await runScript(IDLE, await fresh("idle"));
        return { fileMb: bytes.length / 2 ** 20, ours, limit, naive, hostile, idleMb: idle.peakMb };
    } finally {
        await project.cleanup();
    }
}
