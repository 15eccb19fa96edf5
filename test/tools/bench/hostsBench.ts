// Hosts-file benchmark: N creates through the real dynamic-provider server with as many calls in flight
// as the engine runs at once (ENGINE_PARALLEL: 8 on 2 cores), against N `set` calls of hostile (the
// library most tools use) on the same file.
// Two more runs separate what is ours from what is not: the same calls to a provider that does nothing
// (the cost of the SDK's gRPC server and of this Node.js client, which share the machine's cores), and
// the provider alone, in a plain Node.js process running the compiled package, as many calls at a time.

import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { serializeFunction } from "@pulumi/pulumi/runtime/closure/serializeClosure";
import { HostsDocument } from "../../../provider/hosts/logic/hostsDocument";
import { createHostEntry, numberedEntry } from "../../support/hostEntryClient";
import { fixture } from "../../support/hostsFixtures";
import { makeProject, REPO_ROOT } from "../../support/projects";
import { ProviderServer } from "../../support/providerServer";
import { peakRssMb } from "./machine";

/**
 * Resource operations the engine runs at once: `--parallel` defaults to PULUMI_PARALLEL, else
 * 4 x GOMAXPROCS (pkg/cmd/pulumi/operations/up.go, defaultParallel(), v3.259.0): 8 on 2 cores.
 */
export const ENGINE_PARALLEL = Number(process.env.PULUMI_PARALLEL) || 4 * availableParallelism();

/** One measured run. */
export interface HostsRun {
    readonly seconds: number;
    readonly writes: number;
    readonly peakMb: number | undefined;
}

/** Runs `work(i)` for i < n, ENGINE_PARALLEL at a time; resolves with the wall time in seconds. */
export async function inFlight(
    n: number,
    work: (i: number) => Promise<unknown>,
    parallel: number = ENGINE_PARALLEL,
): Promise<number> {
    let next = 0;
    const started = performance.now();
    const worker = async () => {
        for (let i = next++; i < n; i = next++) await work(i);
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    return (performance.now() - started) / 1000;
}

/** N creates through the provider server, ENGINE_PARALLEL at a time. */
export async function benchProvider(n: number): Promise<HostsRun> {
    const project = await makeProject("hosts-bench");
    const file = join(project.dir, "hosts");
    const trace = join(project.dir, "trace.jsonl");
    await writeFile(file, fixture("debian"));
    const server = await ProviderServer.start({
        projectDir: project.dir,
        env: { PULUMI_LIFECYCLE_TRACE: trace },
        asInstalled: true,
    });
    try {
        await server.configure({});
        const seconds = await inFlight(n, (i) => createHostEntry(server, `e${i}`, numberedEntry(i, file, "bench")));
        const peakMb = peakRssMb(server.pid);
        const entries = HostsDocument.parse(await readFile(file))
            .allLines()
            .filter((l) => l.entry).length;
        if (entries !== n + 5) throw new Error(`expected ${n + 5} entries in the file, found ${entries}`);
        const writes = (await readFile(trace, "utf8")).split("\n").filter(Boolean).length;
        return { seconds, writes, peakMb };
    } finally {
        await server.stop();
        await project.cleanup();
    }
}

/** The same Check and Create calls to a dynamic provider that does nothing: the machinery's share. */
export async function benchNoop(n: number): Promise<HostsRun> {
    const project = await makeProject("noop-bench");
    const server = await ProviderServer.start({ projectDir: project.dir, asInstalled: true });
    try {
        await server.configure({});
        const noop = {
            check: async (_olds: unknown, news: unknown) => ({ inputs: news }),
            create: async (inputs: unknown) => ({ id: "noop", outs: inputs }),
        };
        const __provider = (await serializeFunction(() => noop, { allowSecrets: true })).text;
        const urn = "urn:pulumi:dev::bench::pulumi-nodejs:dynamic/noop:Noop::n";
        const seconds = await inFlight(n, async (i) => {
            const checked = await server.check(urn, {}, { __provider, ...numberedEntry(i, "/unused", "bench") });
            await server.create(urn, checked.inputs);
        });
        return { seconds, writes: 0, peakMb: peakRssMb(server.pid) };
    } finally {
        await server.stop();
        await project.cleanup();
    }
}

/** N creates through the compiled HostEntryProvider in a plain Node.js process: the provider alone. */
export async function benchInProcess(n: number): Promise<HostsRun> {
    const project = await makeProject("inprocess-bench");
    const file = join(project.dir, "hosts");
    await writeFile(file, fixture("debian"));
    const dist = (path: string) => JSON.stringify(join(REPO_ROOT, "dist", "hosts", path));
    const script = `
        const { HostEntryProvider } = require(${dist("hostEntryProvider.js")});
        const { HostsFileStore } = require(${dist("io/hostsFileStore.js")});
        const { CreateJournal } = require(${dist("io/createJournal.js")});
        const { performance } = require("node:perf_hooks");
        let writes = 0;
        const journal = new CreateJournal();
        const store = new HostsFileStore({ lock: { timeoutMs: 30000, staleMs: 60000 }, onWrite: () => writes++, journal });
        const provider = new HostEntryProvider(store, journal);
        const n = ${n};
        let next = 0;
        const started = performance.now();
        const worker = async () => {
            for (let i = next++; i < n; i = next++) {
                const args = { address: "10." + ((i >> 16) & 255) + "." + ((i >> 8) & 255) + "." + (i & 255), names: ["bench-" + i + ".test"], file: ${JSON.stringify(file)}, __owner: "organization/bench/dev" };
                const { inputs, failures } = await provider.check({}, args);
                if (failures.length) throw new Error(JSON.stringify(failures));
                await provider.create(inputs);
            }
        };
        Promise.all(Array.from({ length: ${ENGINE_PARALLEL} }, worker)).then(() => {
            const seconds = (performance.now() - started) / 1000;
            process.stdout.write(JSON.stringify({ seconds, writes, peakMb: process.resourceUsage().maxRSS / 1024 }));
        });
    `;
    try {
        const { stdout } = await promisify(execFile)(process.execPath, ["-e", script], { cwd: project.dir });
        return JSON.parse(stdout) as HostsRun;
    } finally {
        await project.cleanup();
    }
}

/**
 * The limit for N creates arriving ENGINE_PARALLEL at a time with whole-file atomic writes: N / ENGINE_PARALLEL
 * atomic writes (temporary file, fsync, rename, fsync of the directory) of a file growing by ENGINE_PARALLEL
 * lines each time, with nothing parsed or computed. Its growth is quadratic in bytes written, whoever writes.
 */
export async function benchAtomicLimit(n: number): Promise<HostsRun> {
    const project = await makeProject("limit-bench");
    const file = join(project.dir, "hosts");
    const start = fixture("debian");
    await writeFile(file, start);
    const script = `
        const { writeFileAtomicSync } = require(${JSON.stringify(join(REPO_ROOT, "dist", "shared", "files", "atomicWrite.js"))});
        const { performance } = require("node:perf_hooks");
        const lines = [];
        for (let i = 0; i < ${n}; i++) lines.push(Buffer.from("10." + ((i >> 16) & 255) + "." + ((i >> 8) & 255) + "." + (i & 255) + "\\tbench-" + i + ".test\\n"));
        const content = Buffer.concat([Buffer.from(${JSON.stringify(start.toString("latin1"))}, "latin1"), ...lines]);
        let length = content.length - lines.reduce((sum, line) => sum + line.length, 0);
        let writes = 0;
        const started = performance.now();
        for (let i = 0; i < ${n}; i += ${ENGINE_PARALLEL}) {
            for (let k = i; k < Math.min(${n}, i + ${ENGINE_PARALLEL}); k++) length += lines[k].length;
            writeFileAtomicSync(process.argv[1], content.subarray(0, length));
            writes++;
        }
        const seconds = (performance.now() - started) / 1000;
        process.stdout.write(JSON.stringify({ seconds, writes, peakMb: process.resourceUsage().maxRSS / 1024 }));
    `;
    try {
        const { stdout } = await promisify(execFile)(process.execPath, ["-e", script, file], { cwd: project.dir });
        return JSON.parse(stdout) as HostsRun;
    } finally {
        await project.cleanup();
    }
}

/** N hostile.set calls (synchronous, one read and one write of the whole file each) in a child process. */
export async function benchHostile(n: number): Promise<HostsRun> {
    const project = await makeProject("hostile-bench");
    const file = join(project.dir, "hosts");
    await writeFile(file, fixture("debian"));
    const script = `
        const hostile = require("hostile");
        const { performance } = require("node:perf_hooks");
        hostile.HOSTS = ${JSON.stringify(file)};
        const n = ${n};
        const started = performance.now();
        for (let i = 0; i < n; i++) {
            hostile.set("10." + ((i >> 16) & 255) + "." + ((i >> 8) & 255) + "." + (i & 255), "bench-" + i + ".test");
        }
        const seconds = (performance.now() - started) / 1000;
        process.stdout.write(JSON.stringify({ seconds, peakMb: process.resourceUsage().maxRSS / 1024 }));
    `;
    try {
        const { stdout } = await promisify(execFile)(process.execPath, ["-e", script], { cwd: REPO_ROOT });
        const { seconds, peakMb } = JSON.parse(stdout) as { seconds: number; peakMb: number };
        return { seconds, writes: n, peakMb };
    } finally {
        await project.cleanup();
    }
}
