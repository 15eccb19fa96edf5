// tasks.AsyncResource per dialect (issue 19, section 5): 100 creates at once against each dialect's test
// server, through the provider in-process on real time (systemClock, timerSleep), so the polls are real
// polls at real waits. Measures, per operation: how long after its end on the server the create returned
// in the provider, how many times the provider looked at it (beside log2(duration / 100 ms) + 3), and the
// provider's CPU per resource; and what hint the server gave while it ran.
//
// The servers advance an operation per poll, never by the wall clock (test/dialects/servers/kit.ts). Here
// each operation is given a script that never ends by polls, and a timer on the server's side ends it
// 2-5 s after the server accepted it (seeded): the servers keep the script they were handed and read its
// pollsToFinish at every poll, so from that moment the next poll finds the operation done, as on a real
// API. The time the timer fired is the operation's end, recorded by the server's process.
//
// The server runs in a child process (this file, started with SERVE), so this process's CPU is the
// provider's alone (and this file's few lines of bookkeeping around fetch).

import { AsyncLocalStorage } from "node:async_hooks";
import { type ChildProcess, fork } from "node:child_process";
import { performance } from "node:perf_hooks";
import { seededRandom } from "../../../provider/shared/random";
import { systemClock, timerSleep } from "../../../provider/shared/time";
import { AsyncResourceProvider } from "../../../provider/tasks/asyncResourceProvider";
import type { AsyncResourceInputs } from "../../../provider/tasks/asyncResourceSchema";
import { HINT_FLOOR_MS } from "../../../provider/tasks/client/pollSchedule";
import type { TaskProcessContext } from "../../../provider/tasks/processContext";
import { parseRetryAfter, parseRetryAt } from "../../../provider/tasks/protocol/retryAfter";
import { settingsFrom } from "../../../provider/tasks/taskApiSettings";
import type { DialectServer, OperationPlan, OperationScript, ServerCounts } from "../../dialects/servers/kit";
import { type DialectFixture, FIXTURES, TOKEN_ENV, WIDGETS_TOKEN } from "../../tasks/asyncResource/dialectFixtures";
import { machineLine, table } from "./machine";
import { percentile } from "./tasksBench";

/** Resources created at once per dialect. */
export const DIALECT_RESOURCES = 100;
/** Operations last this long on the server's clock, drawn per operation (seeded). */
const MIN_DURATION_MS = 2000;
const MAX_DURATION_MS = 5000;
/** The argument that makes this file the server's process. */
const SERVE = "--serve-dialect";
/** The warm-up resource's name: its operation is left out of the figures. */
const WARM_UP = "bench-warm-up";

/** An operation as the server's process saw it. */
interface ServerOperation {
    /** The server's id of it (an operation id, a Google operation name, a Cloud Control RequestToken). */
    readonly id: string;
    readonly acceptedAt: number;
    readonly endedAt: number | undefined;
}

/** One request the provider sent, when its answer came, and the wait that answer asked for, if any. */
interface Call {
    readonly resource: string | undefined;
    readonly url: string;
    readonly body: string;
    answeredAt: number;
    hintMs: number | undefined;
}

/**
 * Where each dialect's server puts its hint on a running operation, when not in a Retry-After header:
 * Cloud Control's ProgressEvent.RetryAfter, a timestamp. Only these answers are read twice (a clone).
 */
const BODY_HINTS: Readonly<Record<string, (body: unknown, now: number) => number | undefined>> = {
    "aws-cloudcontrol": (body, now) =>
        parseRetryAt(
            (body as { ProgressEvent?: { RetryAfter?: unknown } } | undefined)?.ProgressEvent?.RetryAfter,
            now,
        ),
};

/** What one dialect's run measured. */
export interface DialectRun {
    readonly dialect: string;
    readonly resources: number;
    /** Creates that returned (the others failed: `firstFailure` says why). */
    readonly returned: number;
    readonly firstFailure: string | undefined;
    readonly counts: ServerCounts;
    readonly seconds: number;
    /** Per operation: its duration on the server, from acceptance to end. */
    readonly durationsMs: number[];
    /** Per operation: from its end on the server to its create returning in the provider. */
    readonly lagMs: number[];
    /** Per operation: from the answer of its last poll to its create returning. */
    readonly afterLastPollMs: number[];
    /** Per operation: the provider's looks at it, and the bound log2(duration / 100 ms) + 3. */
    readonly polls: { polls: number; bound: number }[];
    /** Requests of all kinds per resource (look-up, create, polls, read back). */
    readonly requestsPerResource: number;
    /** Answers of polls that found the operation running; how many carried a hint, and its values (ms). */
    readonly runningAnswers: number;
    readonly hintedAnswers: number;
    readonly hintsMs: number[];
    /** Where the hint is: `Retry-After` or the body's field. */
    readonly hintSource: string;
    readonly cpuMsPerResource: number;
}

/** The dialects with a fixture (a test server and a widget declared against it). */
export function benchedDialects(): readonly DialectFixture[] {
    return FIXTURES;
}

/** The provider's environment: the token, the fixture's credentials, and the poll schedule if this process sets it. */
function providerEnv(fixture?: DialectFixture): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { [TOKEN_ENV]: WIDGETS_TOKEN, ...fixture?.env };
    for (const name of ["TASK_POLL_INITIAL_MS", "TASK_POLL_MAX_MS"]) {
        if (process.env[name] !== undefined) env[name] = process.env[name];
    }
    return env;
}

/** Creates `count` widgets at once against `fixture`'s server, after one warm-up create. */
export async function benchAsyncDialect(fixture: DialectFixture, count = DIALECT_RESOURCES): Promise<DialectRun> {
    const server = await ServerProcess.start(fixture.dialect);
    try {
        // Which resource each request is for, so each operation is paired with its create. (Its cost to
        // the provider's CPU was within this benchmark's run-to-run noise, 11-13 ms per resource.)
        const resourceOf = new AsyncLocalStorage<string>();
        const calls: Call[] = [];
        const counted: typeof globalThis.fetch = async (input, init) => {
            const call: Call = {
                resource: resourceOf.getStore(),
                url: input instanceof Request ? input.url : String(input),
                body: typeof init?.body === "string" ? init.body : "",
                answeredAt: Number.NaN,
                hintMs: undefined,
            };
            calls.push(call);
            const response = await globalThis.fetch(input, init);
            const answeredAt = Date.now();
            call.answeredAt = answeredAt;
            call.hintMs = parseRetryAfter(response.headers.get("retry-after"), answeredAt);
            const inBody = BODY_HINTS[fixture.dialect];
            if (inBody && call.hintMs === undefined) {
                response
                    .clone()
                    .json()
                    .then((body: unknown) => {
                        call.hintMs = inBody(body, answeredAt);
                    })
                    .catch(() => undefined);
            }
            return response;
        };
        const env = providerEnv(fixture);
        // As processContext builds it (real time, one signal for every operation of the process), without
        // its signal handlers and the engine's log.
        const context: TaskProcessContext = {
            clock: systemClock,
            sleep: timerSleep,
            random: Math.random,
            signal: new AbortController().signal,
            report: () => {},
            track: (work) => work,
        };
        const provider = new AsyncResourceProvider(context, env, counted);
        const declare = async (name: string) => {
            const { inputs, failures } = await provider.check(
                {} as AsyncResourceInputs,
                fixture.args(server.url, name, 1) as unknown as AsyncResourceInputs,
            );
            if (inputs === undefined || (failures ?? []).length > 0)
                throw new Error(`${fixture.dialect}: ${name} failed check: ${JSON.stringify(failures)}`);
            return inputs;
        };
        // One create first, so the figures are of a provider whose code is loaded and warm, as after its first resource.
        const warmUp = await declare(WARM_UP);
        await resourceOf.run(WARM_UP, () => provider.create(warmUp));

        const names = Array.from({ length: count }, (_, n) => `bench-${String(n).padStart(3, "0")}`);
        const declared = await Promise.all(names.map(declare));
        const returnedAt = new Map<string, number>();
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        const results = await Promise.allSettled(
            declared.map((inputs, n) =>
                resourceOf.run(names[n] as string, async () => {
                    await provider.create(inputs);
                    returnedAt.set(names[n] as string, Date.now());
                }),
            ),
        );
        const seconds = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        const failed = results.find((result): result is PromiseRejectedResult => result.status === "rejected");

        const report = await server.report();
        const run = {
            durationsMs: [] as number[],
            lagMs: [] as number[],
            afterLastPollMs: [] as number[],
            polls: [] as { polls: number; bound: number }[],
            runningAnswers: 0,
            hintedAnswers: 0,
            hintsMs: new Set<number>(),
        };
        for (const operation of report.operations) {
            const id = operation.id.toLowerCase();
            const looks = calls.filter((call) => `${call.url}\n${call.body}`.toLowerCase().includes(id));
            const owners = new Set(looks.map((call) => call.resource));
            if (owners.size > 1) {
                throw new Error(
                    `${fixture.dialect}: operation ${operation.id} was looked at for ${owners.size} resources`,
                );
            }
            const resource = [...owners][0];
            if (resource === WARM_UP) continue;
            const returned = returnedAt.get(resource ?? "");
            if (returned === undefined || operation.endedAt === undefined) continue; // a failed create: counted apart
            if (returned < operation.endedAt) {
                // Its create saw it done before it ended: the pairing, not the provider, would be wrong.
                throw new Error(`${fixture.dialect}: ${resource} returned before its operation ended`);
            }
            const duration = operation.endedAt - operation.acceptedAt;
            run.durationsMs.push(duration);
            run.lagMs.push(returned - operation.endedAt);
            run.afterLastPollMs.push(returned - Math.max(...looks.map((call) => call.answeredAt)));
            run.polls.push({ polls: looks.length, bound: Math.log2(duration / 100) + 3 });
            // Every look but the last found it running.
            for (const call of looks.slice(0, -1)) {
                run.runningAnswers++;
                if (call.hintMs === undefined) continue;
                run.hintedAnswers++;
                // To the tenth of a second: a date or a timestamp is read against the answer's arrival.
                run.hintsMs.add(Math.round(call.hintMs / 100) * 100);
            }
        }
        return {
            dialect: fixture.dialect,
            resources: count,
            returned: returnedAt.size,
            firstFailure: failed
                ? String(failed.reason instanceof Error ? failed.reason.message : failed.reason)
                : undefined,
            counts: report.counts,
            seconds,
            ...run,
            hintsMs: [...run.hintsMs].sort((a, b) => a - b),
            hintSource: BODY_HINTS[fixture.dialect] ? "RetryAfter (body)" : "Retry-After",
            requestsPerResource: calls.filter((call) => call.resource !== WARM_UP).length / count,
            cpuMsPerResource: (cpu.user + cpu.system) / 1000 / count,
        };
    } finally {
        await server.close();
    }
}

/** Prints the benchmark: one column per dialect. `npm run bench -- dialects`. */
export async function printAsyncDialectsBench(): Promise<void> {
    const schedule = settingsFrom(undefined, providerEnv()).schedule;
    const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;
    console.log(
        `tasks.AsyncResource: ${DIALECT_RESOURCES} creates at once per dialect, the provider in-process on real`,
    );
    console.log("time, each dialect's test server in a child process over HTTP; every operation ends 2-5 s (seeded)");
    console.log("after the server accepted it, by the server's clock. What paces the polls: the server's hint on a");
    console.log(
        `running operation, taken as at least ${seconds(HINT_FLOOR_MS)} (HINT_FLOOR_MS); without one, backoff from ${schedule.initialMs} ms`,
    );
    console.log(
        `doubling to ${seconds(schedule.maxMs)} (TASK_POLL_INITIAL_MS / TASK_POLL_MAX_MS), jittered over each step's upper half.`,
    );
    console.log(`Machine: ${machineLine()}\n`);
    const runs: DialectRun[] = [];
    for (const fixture of benchedDialects()) runs.push(await benchAsyncDialect(fixture));
    const cell = (f: (run: DialectRun) => string) => runs.map(f);
    const ms = (value: number) => `${value.toFixed(0)} ms`;
    const ratio = (value: number) => `${value.toFixed(2)}x`;
    const p = percentile;
    /**
     * The server's hint: the largest wait it asked for. A timestamp (Cloud Control) is read against the
     * answer's arrival, so it comes out shorter by the answer's time in transit and queued.
     */
    const hintOf = (run: DialectRun) => (run.hintsMs.length > 0 ? Math.max(...run.hintsMs) : undefined);
    const hintRange = (run: DialectRun) => {
        const [low, high] = [Math.min(...run.hintsMs), Math.max(...run.hintsMs)];
        return low === high ? seconds(high) : `${seconds(low)}-${seconds(high)}`;
    };
    const share = (run: DialectRun) => (run.runningAnswers === 0 ? 0 : run.hintedAnswers / run.runningAnswers);
    const polls = (run: DialectRun) => run.polls.map((look) => look.polls);
    const overBound = (run: DialectRun) => run.polls.map((look) => look.polls / look.bound);
    const rows = [
        ["creates returned", ...cell((r) => `${r.returned} of ${r.resources}`)],
        [
            "duplicates / strays / unauthorized (server)",
            ...cell((r) => `${r.counts.duplicates} / ${r.counts.requestsOutsideApi} / ${r.counts.unauthorized}`),
        ],
        [
            "operation duration, p50 (min-max)",
            ...cell(
                (r) =>
                    `${seconds(p(r.durationsMs, 50))} (${seconds(Math.min(...r.durationsMs))}-${seconds(Math.max(...r.durationsMs))})`,
            ),
        ],
        [
            "server's hint while running",
            ...cell((r) =>
                r.hintedAnswers === 0
                    ? "none"
                    : `${r.hintSource} ${hintRange(r)}, ${(share(r) * 100).toFixed(0)}% of answers`,
            ),
        ],
        [
            "what paces the polls",
            ...cell((r) => {
                if (r.hintedAnswers === 0) return "backoff";
                const hint = hintOf(r);
                const taken = hint === undefined ? "the hint" : `the hint (${seconds(Math.max(hint, HINT_FLOOR_MS))})`;
                return share(r) > 0.99 ? taken : `${taken}, backoff between`;
            }),
        ],
        ["operation end -> create returned, p50", ...cell((r) => ms(p(r.lagMs, 50)))],
        ["operation end -> create returned, p95", ...cell((r) => ms(p(r.lagMs, 95)))],
        [
            "  p50 / p95 over the server's hint",
            ...cell((r) => {
                const hint = hintOf(r);
                return hint === undefined ? "n/a" : `${ratio(p(r.lagMs, 50) / hint)} / ${ratio(p(r.lagMs, 95) / hint)}`;
            }),
        ],
        [
            "  p50 / p95 over the operation's duration",
            ...cell((r) => {
                const shares = r.lagMs.map((lag, i) => (lag / (r.durationsMs[i] ?? Number.NaN)) * 100);
                return `${p(shares, 50).toFixed(1)}% / ${p(shares, 95).toFixed(1)}%`;
            }),
        ],
        ["  of which after the last poll's answer, p50", ...cell((r) => ms(p(r.afterLastPollMs, 50)))],
        ["polls per operation, p50 / max", ...cell((r) => `${p(polls(r), 50)} / ${Math.max(...polls(r))}`)],
        [
            "bound log2(duration / 100 ms) + 3, p50",
            ...cell((r) =>
                p(
                    r.polls.map((look) => look.bound),
                    50,
                ).toFixed(1),
            ),
        ],
        [
            "polls over the bound, p50 / max",
            ...cell((r) => `${ratio(p(overBound(r), 50))} / ${ratio(Math.max(...overBound(r)))}`),
        ],
        ["operations past the bound", ...cell((r) => String(r.polls.filter((look) => look.polls > look.bound).length))],
        ["requests per resource", ...cell((r) => r.requestsPerResource.toFixed(1))],
        ["provider CPU per resource", ...cell((r) => `${r.cpuMsPerResource.toFixed(1)} ms`)],
        ["wall time", ...cell((r) => `${r.seconds.toFixed(2)} s`)],
    ];
    console.log(table(["", ...runs.map((run) => run.dialect)], rows));
    console.log("\nRequests per resource: the look-up by natural key, the create, the polls, the read of the result.");
    for (const run of runs) {
        if (run.firstFailure) {
            console.log(
                `\n${run.dialect}: ${run.resources - run.returned} creates failed; the first: ${run.firstFailure}`,
            );
        }
    }
}

// The server's process ----------------------------------------------------------------------------

type ToServer = { type: "report" } | { type: "close" };
type FromServer =
    | { type: "ready"; url: string }
    | { type: "report"; operations: ServerOperation[]; counts: ServerCounts }
    | { type: "failed"; message: string };

/** A dialect's test server in a child process. */
class ServerProcess {
    private constructor(
        private readonly child: ChildProcess,
        private readonly dialect: string,
        readonly url: string,
    ) {}

    static async start(dialect: string): Promise<ServerProcess> {
        const child = fork(__filename, [SERVE, dialect], {
            execArgv: ["-r", "ts-node/register/transpile-only"],
            stdio: ["ignore", "inherit", "inherit", "ipc"],
        });
        const ready = await answerOf(child, dialect);
        if (ready.type !== "ready") throw new Error(`the ${dialect} server did not start: ${JSON.stringify(ready)}`);
        return new ServerProcess(child, dialect, ready.url);
    }

    /** The server's operations in the order it accepted them, and its counts. */
    async report(): Promise<{ operations: ServerOperation[]; counts: ServerCounts }> {
        this.child.send({ type: "report" } satisfies ToServer);
        const answer = await answerOf(this.child, this.dialect);
        if (answer.type !== "report") throw new Error(`the ${this.dialect} server: ${JSON.stringify(answer)}`);
        return answer;
    }

    async close(): Promise<void> {
        if (this.child.exitCode !== null || this.child.signalCode !== null) return;
        const exited = new Promise((resolve) => this.child.once("exit", resolve));
        this.child.send({ type: "close" } satisfies ToServer);
        await exited;
    }
}

/** The child's next message; rejects when it exits first. */
function answerOf(child: ChildProcess, dialect: string): Promise<FromServer> {
    return new Promise((resolve, reject) => {
        const onMessage = (message: FromServer) => {
            child.off("exit", onExit);
            resolve(message);
        };
        const onExit = (code: number | null) => {
            child.off("message", onMessage);
            reject(new Error(`the ${dialect} server's process exited (${code}) before answering`));
        };
        child.once("message", onMessage);
        child.once("exit", onExit);
    });
}

/** The ids of the server's operations, in the order it accepted them. */
function operationIds(server: DialectServer): string[] {
    const views = server as DialectServer & {
        operations?: () => ReadonlyArray<Record<string, unknown>>;
        requests?: () => ReadonlyArray<Record<string, unknown>>;
    };
    const records = views.operations?.() ?? views.requests?.() ?? [];
    return records.map((record) => String(record.id ?? record.name ?? record.RequestToken));
}

/** Runs `dialect`'s server with operations that end by the wall clock, and answers the parent. */
async function serve(dialect: string): Promise<void> {
    const fixture = FIXTURES.find((candidate) => candidate.dialect === dialect);
    if (!fixture) throw new Error(`no fixture for dialect ${JSON.stringify(dialect)}`);
    const random = seededRandom(19);
    const accepted: { acceptedAt: number; endedAt: number | undefined }[] = [];
    const plan: OperationPlan = {
        next() {
            // Never ends by polls; the timer below ends it, and the server sees that at its next poll.
            const script: OperationScript = { pollsToFinish: Number.MAX_SAFE_INTEGER, outcome: "succeeded" };
            const operation = { acceptedAt: Date.now(), endedAt: undefined as number | undefined };
            accepted.push(operation);
            const durationMs = Math.round(MIN_DURATION_MS + random() * (MAX_DURATION_MS - MIN_DURATION_MS));
            setTimeout(() => {
                script.pollsToFinish = 0;
                operation.endedAt = Date.now();
            }, durationMs);
            return script;
        },
    };
    const server = await fixture.start({ operations: plan });
    const send = (message: FromServer) => process.send?.(message);
    process.on("disconnect", () => process.exit(0));
    process.on("message", (message: ToServer) => {
        if (message.type === "close") {
            void server.close().finally(() => process.exit(0));
            return;
        }
        const ids = operationIds(server);
        if (ids.length !== accepted.length) {
            send({ type: "failed", message: `${ids.length} operations listed, ${accepted.length} accepted` });
            return;
        }
        send({
            type: "report",
            operations: accepted.map((operation, i) => ({ id: ids[i] as string, ...operation })),
            counts: server.counts(),
        });
    });
    send({ type: "ready", url: server.url });
}

if (require.main === module && process.argv[2] === SERVE) {
    serve(process.argv[3] ?? "").catch((error: unknown) => {
        process.send?.({ type: "failed", message: error instanceof Error ? error.message : String(error) });
        process.exit(1);
    });
}
