// `npm run bench`: runs the benchmarks and prints their tables. `npm run bench -- hosts` runs one.

import { printAsyncDialectsBench } from "./asyncDialectsBench";
import { BIG_FILE_LINES, benchBigFile, FRESH_PROCESSES, MANAGED } from "./bigFileBench";
import { benchCli, type CliBenchRun, REFRESHES, REPLAYS } from "./cliBench";
import { printFleetBench } from "./fleet";
import { benchForeignWriter, type ForeignWriterRun } from "./foreignWriterBench";
import {
    benchAtomicLimit,
    benchHostile,
    benchInProcess,
    benchNoop,
    benchProvider,
    ENGINE_PARALLEL,
    type HostsRun,
} from "./hostsBench";
import { machineLine, table } from "./machine";
import { WARM_PASSES } from "./refreshReplay";
import { benchTasks, percentile, type TasksRun } from "./tasksBench";

const SIZES = [100, 1_000, 10_000];
/** Run by the provider alone and the limit only. */
const LARGEST = 100_000;

const seconds = (run: HostsRun) => `${run.seconds.toFixed(2)} s`;
const mb = (run: HostsRun) => (run.peakMb === undefined ? "n/a" : `${run.peakMb.toFixed(0)} MB`);
const cells = (run: HostsRun) => [seconds(run), String(run.writes), mb(run)];

async function hosts(): Promise<void> {
    console.log(`Hosts-file entries: N creates, ${ENGINE_PARALLEL} in flight (as the engine runs them)`);
    console.log(`Machine: ${machineLine()}\n`);
    // Warm up this process's gRPC client, which stands in for the engine (a Go program, warm by then);
    // every measured run still starts its provider process cold, as the engine does per deployment.
    await benchProvider(500);
    await benchNoop(500);
    const endToEnd: string[][] = [];
    const ours: HostsRun[] = [];
    for (const n of SIZES) {
        const [provider, noop, inProcess, hostile] = [
            await benchProvider(n),
            await benchNoop(n),
            await benchInProcess(n),
            await benchHostile(n),
        ];
        ours.push(inProcess);
        const size = n.toLocaleString("en-US");
        endToEnd.push([size, ...cells(provider), seconds(noop), mb(noop), ...cells(hostile)]);
    }
    console.log(
        "Through the real dynamic-provider server (gRPC), beside the same calls to a provider that does nothing:",
    );
    console.log(
        table(
            [
                "N",
                "HostEntry",
                "writes",
                "server peak",
                "no-op provider",
                "server peak",
                "hostile set()",
                "writes",
                "peak RSS",
            ],
            endToEnd,
        ),
    );
    // The provider alone goes one size further, beside the limit for the same writes: N / ENGINE_PARALLEL
    // whole-file atomic writes of a file that grows by ENGINE_PARALLEL lines each time (hostile and gRPC
    // would take hours there).
    const limits: HostsRun[] = [];
    for (const n of [...SIZES, LARGEST]) {
        if (n === LARGEST) ours.push(await benchInProcess(n));
        limits.push(await benchAtomicLimit(n));
    }
    const alone = ours.map((run, i) => {
        const limit = limits[i] as HostsRun;
        const size = ([...SIZES, LARGEST][i] as number).toLocaleString("en-US");
        return [
            size,
            ...cells(run),
            seconds(limit),
            String(limit.writes),
            `${(run.seconds / limit.seconds).toFixed(2)}x`,
        ];
    });
    console.log("\nThe provider alone (compiled package, plain Node.js process, no gRPC), beside the limit:");
    console.log(table(["N", "HostEntry", "writes", "peak RSS", "limit", "writes", "HostEntry / limit"], alone));
    const growth = (runs: HostsRun[], from: number, to: number) =>
        ((runs[to] as HostsRun).seconds / (runs[from] as HostsRun).seconds).toFixed(1);
    console.log(
        `\nGrowth, 1,000 to 10,000: HostEntry x${growth(ours, 1, 2)}, limit x${growth(limits, 1, 2)}; ` +
            `10,000 to 100,000: HostEntry x${growth(ours, 2, 3)}, limit x${growth(limits, 2, 3)}`,
    );
    console.log(
        `(N creates make N / ${ENGINE_PARALLEL} whole-file writes of a file of up to N lines: bytes written grow as N squared.)`,
    );
}

/** A limit no run reaches: the provider's own pace. */
const UNLIMITED = 100_000;

async function tasks(): Promise<void> {
    console.log("Async tasks: 200 datastores created at once through the real provider server, tasks of 1-3 s:");
    console.log("first at the provider's own pace, then with the server's limit (429 + Retry-After) at half the");
    console.log("busiest second that run measured, then at its own pace with 30% of every request answered 429");
    console.log(`Machine: ${machineLine()}\n`);
    const free = await benchTasks(200, UNLIMITED, 0);
    const limit = Math.max(1, Math.floor(free.peakPerSecond / 2));
    const runs = [free, await benchTasks(200, limit, 0), await benchTasks(200, UNLIMITED, 0.3)];
    const labels = ["own pace", `limit ${limit}/s (2x over)`, "own pace, 30% 429"];
    const cell = (f: (run: TasksRun) => string) => runs.map(f);
    const rows = [
        ["datastores created (duplicates)", ...cell((r) => `${r.created} of ${r.datastores} (${r.duplicates})`)],
        ["wall time", ...cell((r) => `${r.seconds.toFixed(2)} s`)],
        ["requests (busiest second)", ...cell((r) => `${r.requests} (${r.peakPerSecond})`)],
        ["requests answered 429", ...cell((r) => String(r.throttled))],
        [
            "task end to create returned, p50",
            ...cell((r) => `${ms(percentile(r.lagMs, 50))} (${pct(percentile(r.lagPercent, 50))})`),
        ],
        [
            "task end to create returned, p95",
            ...cell((r) => `${ms(percentile(r.lagMs, 95))} (${pct(percentile(r.lagPercent, 95))})`),
        ],
        ["within 10% + 100 ms of the task's end", ...cell((r) => `${withinTarget(r)} of ${r.datastores}`)],
        ["polls per task, p50 / max", ...cell((r) => `${percentile(polls(r), 50)} / ${Math.max(...polls(r))}`)],
        [
            "tasks over log2(duration / 100 ms) + 3 polls",
            ...cell((r) => String(r.polls.filter((p) => p.polls > p.bound).length)),
        ],
        ["provider CPU", ...cell((r) => (r.cpuSeconds === undefined ? "n/a" : `${r.cpuSeconds.toFixed(2)} s`))],
        ["provider peak RSS", ...cell((r) => (r.peakMb === undefined ? "n/a" : `${r.peakMb.toFixed(0)} MB`))],
    ];
    console.log(table(["", ...labels], rows));
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
const pct = (value: number) => `${value.toFixed(1)}%`;
const polls = (run: TasksRun) => run.polls.map((p) => p.polls);
/** Datastores whose create returned within 10% of their task's duration + 100 ms after it ended. */
const withinTarget = (run: TasksRun) =>
    run.lagMs.filter((lag, i) => lag <= 0.1 * (lag / ((run.lagPercent[i] ?? 0) / 100)) + 100).length;

/** Append intervals of the writer that ignores our lock: a busy script, and a slow one. */
const FOREIGN_INTERVALS_MS = [1, 50];

async function foreign(): Promise<void> {
    console.log("A writer that ignores our lock appends 1,000 lines (O_APPEND, one every 1 or 50 ms) while the");
    console.log("provider creates and deletes entries in the same file, 4 operations in flight");
    console.log(`Machine: ${machineLine()}\n`);
    const runs: ForeignWriterRun[] = [];
    for (const intervalMs of FOREIGN_INTERVALS_MS) runs.push(await benchForeignWriter(intervalMs));
    const rows = runs.map((run) => [
        `${run.intervalMs} ms`,
        `${run.lost} of ${run.appends}`,
        String(run.ourOperations),
        String(run.ourWrites),
        String(run.ourFailures),
    ]);
    console.log(table(["append every", "foreign lines lost", "our operations", "our writes", "ours failed"], rows));
    for (const run of runs) {
        if (run.firstFailure) console.log(`\nFirst failure at ${run.intervalMs} ms: ${run.firstFailure}`);
    }
}

async function bigFile(): Promise<void> {
    const size = BIG_FILE_LINES.toLocaleString("en-US");
    console.log(`A ${size}-line ad-blocking hosts file with ${MANAGED} managed entries: each operation 10 times,`);
    console.log("one at a time, median ms, beside the limit (read + whole atomic write + fsync) and two peers;");
    console.log(`ours and the limit: medians over ${FRESH_PROCESSES} fresh processes each`);
    console.log(`Machine: ${machineLine()}\n`);
    const results = await benchBigFile();
    const { ours, limit, naive, hostile } = results;
    const kinds = ["create", "read", "update", "delete"] as const;
    const cell = (ms: number, of: number) => `${ms.toFixed(1)} ms (${(ms / of).toFixed(2)}x)`;
    const rows = kinds.map((kind) => [
        kind,
        cell(ours[kind], limit[kind]),
        `${limit[kind].toFixed(1)} ms`,
        cell(naive[kind], limit[kind]),
        `${hostile[kind].toFixed(1)} ms`,
    ]);
    rows.push([
        "first operation (cold)",
        cell(ours.firstMs, limit.firstMs),
        `${limit.firstMs.toFixed(1)} ms`,
        `${naive.firstMs.toFixed(1)} ms`,
        `${hostile.firstMs.toFixed(1)} ms`,
    ]);
    const mb = (value: number) => `${value.toFixed(0)} MB`;
    const overIdle = (value: number) =>
        `${mb(value)} (${((value - results.idleMb) / results.fileMb).toFixed(1)}x file)`;
    rows.push([
        "peak RSS (over idle)",
        overIdle(ours.peakMb),
        overIdle(limit.peakMb),
        overIdle(naive.peakMb),
        overIdle(hostile.peakMb),
    ]);
    console.log(table(["", "HostEntry (x limit)", "limit", "naive rewrite (x limit)", "hostile (no fsync)"], rows));
    console.log(
        `\nFile: ${results.fileMb.toFixed(1)} MB; idle Node.js process with the package loaded: ${mb(results.idleMb)}.`,
    );
    console.log('For "read" the limit is one read of the file; HostEntry answers from the document it last');
    console.log(
        "read or wrote (kept while the file's size, inode and mtime are unchanged), so its read is below the limit.",
    );
}

/** Resources per program in the real-CLI benchmark. */
const CLI_RESOURCES = 1_000;

async function cli(): Promise<void> {
    const n = CLI_RESOURCES.toLocaleString("en-US");
    console.log(`The real pulumi CLI: up, then refresh, of ${n} HostEntry resources beside ${n} resources of a`);
    console.log("dynamic provider that does nothing with the same arguments, the package installed from its tarball,");
    console.log("file backend");
    console.log(`Machine: ${machineLine()}`);
    const { hostEntry, noop, cli: version } = await benchCli(CLI_RESOURCES);
    console.log(`CLI: ${version}\n`);
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
    const cpu = (seconds: number | undefined) => (seconds === undefined ? "n/a (no /proc)" : `${seconds.toFixed(2)} s`);
    /** A row of CPU seconds that a system without /proc cannot measure. */
    const cpuRow = (label: string, of: (run: CliBenchRun) => number | undefined) => {
        const [ours, theirs] = [of(hostEntry), of(noop)];
        return [
            label,
            cpu(ours),
            cpu(theirs),
            ours !== undefined && theirs !== undefined ? ratio(ours, theirs) : "n/a",
        ];
    };
    const rows = [
        [
            "pulumi up",
            `${hostEntry.upSeconds.toFixed(1)} s`,
            `${noop.upSeconds.toFixed(1)} s`,
            ratio(hostEntry.upSeconds, noop.upSeconds),
        ],
        [
            `pulumi refresh (median of ${REFRESHES}, alternated)`,
            `${hostEntry.refreshSeconds.toFixed(1)} s`,
            `${noop.refreshSeconds.toFixed(1)} s`,
            ratio(hostEntry.refreshSeconds, noop.refreshSeconds),
        ],
        cpuRow(`provider CPU, a refresh's RPCs replayed (median of ${REPLAYS})`, (run) => run.replayCpuSeconds),
        cpuRow(
            `the same RPCs again in that process, warm (median of ${REPLAYS * WARM_PASSES})`,
            (run) => run.warmReplayCpuSeconds,
        ),
        // The no-op provider's own code is two one-line functions: a ratio to its CPU says nothing.
        [
            `the providers' own code for those RPCs, no SDK (median of ${REPLAYS})`,
            cpu(hostEntry.codeCpuSeconds),
            cpu(noop.codeCpuSeconds),
            "n/a",
        ],
        [
            "state (checkpoint)",
            `${(hostEntry.stateBytes / 1024).toFixed(0)} KB`,
            `${(noop.stateBytes / 1024).toFixed(0)} KB`,
            ratio(hostEntry.stateBytes, noop.stateBytes),
        ],
    ];
    console.log(table(["", "HostEntry", "no-op provider", "ratio"], rows));
    const [ourRange, theirRange] = [hostEntry.replayCpuRange, noop.replayCpuRange];
    if (hostEntry.replayCpuSeconds !== undefined && noop.replayCpuSeconds !== undefined && ourRange && theirRange) {
        // Both medians, not their difference's breakdown: a replay varies by more than the gap it measures.
        const seconds = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(2)} s`;
        const range = ([low, high]: readonly [number, number]) => `${low.toFixed(2)}-${high.toFixed(2)} s`;
        console.log(
            `\nOver the no-op provider: the replayed RPCs ${seconds(hostEntry.replayCpuSeconds - noop.replayCpuSeconds)} ` +
                `of CPU (the replays ranged ${range(ourRange)} and ${range(theirRange)}), the providers' own code ` +
                `for them, without the SDK, ${seconds(hostEntry.codeCpuSeconds - noop.codeCpuSeconds)}.`,
        );
    }
}

const BENCHMARKS: Record<string, () => Promise<void>> = {
    hosts,
    bigfile: bigFile,
    cli,
    tasks,
    foreign,
    dialects: printAsyncDialectsBench,
    fleet: printFleetBench,
};

async function main(): Promise<void> {
    const chosen = process.argv.slice(2);
    for (const name of chosen.length > 0 ? chosen : Object.keys(BENCHMARKS)) {
        const bench = BENCHMARKS[name];
        if (!bench)
            throw new Error(`unknown benchmark ${JSON.stringify(name)}; known: ${Object.keys(BENCHMARKS).join(", ")}`);
        await bench();
        console.log("");
    }
}

main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
});
