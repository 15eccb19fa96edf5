// Async-task benchmark: 200 datastores created at once through the real dynamic-provider process,
// against the task API server with tasks lasting 1-3 s (seeded) and a rate limit answering 429 with
// Retry-After. Measures, per datastore: that it was created exactly once, how long after its task ended
// the create returned, how many polls it took (against log2(duration / 100 ms) + 3), and the provider
// process's peak memory.

import { performance } from "node:perf_hooks";
import { seededRandom } from "../../../provider/shared/random";
import { startTaskApiServer } from "../../../provider/taskApiServer/taskApiServer";
import { ASYNC_OPERATIONS_PATH } from "../../../provider/tasks/protocol/wire";
import { CLUSTER, GIB, HCI, TOKEN } from "../../support/datastoreFixture";
import { makeProject } from "../../support/projects";
import { ProviderServer } from "../../support/providerServer";
import { providerTextOf } from "../../support/providerTextOf";
import { cpuSeconds, peakRssMb } from "./machine";

/** What the run measured. */
export interface TasksRun {
    readonly datastores: number;
    readonly created: number;
    readonly duplicates: number;
    readonly seconds: number;
    /** Per datastore: ms from its task's end to its create returning. */
    readonly lagMs: number[];
    /** Per datastore: the lag over the task's own duration, in %. */
    readonly lagPercent: number[];
    /** Per datastore: polls answered, and the bound log2(duration / 100 ms) + 3. */
    readonly polls: { polls: number; bound: number; throttled: number }[];
    readonly throttled: number;
    readonly peakMb: number | undefined;
    /** The provider process's CPU time for the whole run. */
    readonly cpuSeconds: number | undefined;
    /** All requests the server logged, and the most it logged within any one second. */
    readonly requests: number;
    readonly peakPerSecond: number;
}

/** Creates `count` datastores at once; tasks last 1-3 s; the server allows `perSecond` requests a second. */
export async function benchTasks(count = 200, perSecond = 200, throttledShare = 0): Promise<TasksRun> {
    const random = seededRandom(2026);
    const durations = Array.from({ length: count }, () => Math.round(1000 + random() * 2000));
    const api = await startTaskApiServer({ token: TOKEN, rateLimit: { perSecond, burst: perSecond }, seed: 2026 });
    if (throttledShare > 0) {
        // Before the task shapes: the oldest matching rule decides, and a spared request falls through.
        api.addFault({
            probability: throttledShare,
            times: 1_000_000,
            fault: { status: 429, retryAfterSeconds: 1 },
        });
    }
    const project = await makeProject("tasks-bench");
    const provider = await ProviderServer.start({ projectDir: project.dir, asInstalled: true });
    try {
        await provider.configure({ "pulumi-lifecycle:taskApiUrl": api.url, "pulumi-lifecycle:taskApiToken": TOKEN });
        for (const durationMs of durations)
            api.addFault({ match: { method: "POST" }, fault: { task: { durationMs } } });
        const __provider = providerTextOf("tasks:Datastore");
        const started = performance.now();
        const results = await Promise.all(
            durations.map(async (_, n) => {
                const urn = `urn:pulumi:bench::tasks::pulumi-nodejs:dynamic/tasks:Datastore::ds${n}`;
                const args = {
                    __provider,
                    hciClusterUuid: HCI,
                    clusterId: CLUSTER,
                    name: `ds${n}`,
                    sizeInBytes: 16 * GIB,
                    datastoreType: "VMFS",
                    createToken: `bench-${n}`,
                };
                const checked = await provider.check(urn, {}, args);
                const created = await provider.create(urn, checked.inputs);
                return { returnedAt: Date.now(), taskId: String(created.properties.taskId) };
            }),
        );
        const seconds = (performance.now() - started) / 1000;
        const requests = api.requests();
        const lagMs: number[] = [];
        const lagPercent: number[] = [];
        const polls = results.map(({ returnedAt, taskId }) => {
            const operation = api.operation(taskId);
            const created = Date.parse(operation?.createdAt ?? "");
            const ended = Date.parse(operation?.endedAt ?? "");
            const duration = ended - created;
            lagMs.push(returnedAt - ended);
            lagPercent.push(((returnedAt - ended) / duration) * 100);
            const path = `${ASYNC_OPERATIONS_PATH}/${taskId}`;
            const mine = requests.filter((r) => r.method === "GET" && r.path === path);
            return {
                polls: mine.filter((r) => r.status === 200).length,
                throttled: mine.filter((r) => r.status === 429).length,
                bound: Math.log2(duration / 100) + 3,
            };
        });
        const names = new Set(api.datastores().map((d) => d.name));
        return {
            datastores: count,
            created: api.stats().datastoresCreated,
            duplicates: api.stats().datastoresCreated - names.size,
            seconds,
            lagMs,
            lagPercent,
            polls,
            throttled: requests.filter((r) => r.status === 429).length,
            peakMb: peakRssMb(provider.pid),
            cpuSeconds: cpuSeconds(provider.pid),
            requests: requests.length,
            peakPerSecond: busiestSecond(requests.map((r) => Date.parse(r.at))),
        };
    } finally {
        await provider.stop();
        await project.cleanup();
        await api.close();
    }
}

/** The p-th percentile (0-100) of `values`. */
export function percentile(values: readonly number[], p: number): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** The most of `times` (ms) that fall within any window of one second. */
function busiestSecond(times: readonly number[]): number {
    const sorted = [...times].sort((a, b) => a - b);
    let most = 0;
    for (let first = 0, last = 0; last < sorted.length; last++) {
        while ((sorted[last] ?? 0) - (sorted[first] ?? 0) >= 1000) first++;
        most = Math.max(most, last - first + 1);
    }
    return most;
}
