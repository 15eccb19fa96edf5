// One run of the chaos suite: a seed's plan (program.ts) played against the real task API server behind
// the chaos proxy, by the Datastore provider in this process on virtual time, with the engine's
// bookkeeping emulated (engine.ts); then a healing phase with the chaos off (a refresh, the final program
// applied until an up succeeds, a refresh), and the invariants (invariants.ts) checked after every
// request, operation and command, and at the end. Everything a run does is traced, so a failing seed can
// be read request by request, and every hazard it injected is recorded as a script (see Script) that a
// plan replays.

import { AsyncLocalStorage } from "node:async_hooks";
import { parseDuration } from "../../provider/shared/duration";
import { seededRandom } from "../../provider/shared/random";
import { messageOf } from "../../provider/shared/text";
import { startTaskApiServer, type TaskApiServer } from "../../provider/taskApiServer/taskApiServer";
import { TaskApiClient } from "../../provider/tasks/client/taskApiClient";
import { DatastoreProvider } from "../../provider/tasks/datastoreProvider";
import type { NaturalKey } from "../../provider/tasks/datastoreSchema";
import { SENT_CREATES_DIR_ENV } from "../../provider/tasks/io/sentCreates";
import type { TaskProcessContext } from "../../provider/tasks/processContext";
import { DATASTORES_PATH, type DatastoreRecord } from "../../provider/tasks/protocol/wire";
import { clientOptionsFrom } from "../../provider/tasks/taskApiSettings";
import { recordsDirectory } from "../support/recordsDirectory";
import {
    type ChaosProxy,
    type ForeignOrigin,
    OPERATION_HEADER,
    type ProxyRequest,
    REQUEST_ID_HEADER,
    startChaosProxy,
    startForeignOrigin,
} from "./chaosProxy";
import { Engine, type Operation, type OperationRunner, type OpOutcome, partialOf } from "./engine";
import { FAULT_KINDS, type FaultKind, hashSeed, pickFault, type RouteKind } from "./faults";
import {
    errorProblems,
    finalStateChecks,
    hasKey,
    type InvariantName,
    requestProblem,
    secretsIn,
    targetId,
    type Violation,
} from "./invariants";
import { generatePlan, type Pinned, type Plan, type ResourceSpec, type Script } from "./program";
import { VirtualTime } from "./virtualTime";

/** When virtual time starts: 2030-01-01T00:00:00Z. */
export const START = Date.parse("2030-01-01T00:00:00.000Z");
/** The bearer token: it must reach the backend through the proxy and nowhere else. */
export const TOKEN = "chaos-Sekrit-Token-8d1e5b";
/** The password of the userinfo Locations the proxy makes up: it must appear nowhere. */
export const USERINFO_PASSWORD = "chaos-Passw0rd-41c7";
/** The provider's default timeout of a create, update or delete without `timeouts` (README). */
export const DEFAULT_OPERATION_TIMEOUT_MS = 20 * 60_000;
/**
 * A read's deadline without `timeouts.read`: 5 minutes, as issue 18's fix documents it. Not imported, so
 * the suite also runs on code from before that fix (whose reads had no deadline at all).
 */
export const DEFAULT_READ_TIMEOUT_MS = 5 * 60_000;
/** After this many requests in one operation the user gives up: an engine Cancel, not a violation. */
const PATIENCE_REQUESTS = 300;
/** Faster than one request per this many virtual ms, after a first burst, is a runaway loop. */
const RUNAWAY_MS_PER_REQUEST = 100;
const RUNAWAY_BURST = 40;
/** Ups of the final program with the chaos off before healing counts as failed. */
const HEALING_UPS = 6;
/** Virtual time between two healing ups: what a task started just before healing needs to end. */
const HEALING_PAUSE_MS = 10 * 60_000;
/** The step ids of healing's commands start here (a plan's steps are numbered from 1). */
const HEALING_STEP = 1000;
/** Real time one command may take before it counts as running away. */
const COMMAND_REAL_LIMIT_MS = 120_000;

/**
 * The operation an async call belongs to, for the fetch that tags its requests. One for the whole
 * process: every AsyncLocalStorage left enabled slows every later async call a little, and a soak makes
 * thousands of runs.
 */
const operationContext = new AsyncLocalStorage<CurrentOperation>();

/** How one run is made. */
export interface RunOptions {
    readonly seed: number;
    /** A plan to play instead of the seed's own (a shrunk one). */
    readonly plan?: Plan;
    /** The faults allowed (all by default). */
    readonly faults?: ReadonlySet<FaultKind>;
    /** Whether the production timers overflow beyond 2^31-1 ms (probed by the caller). */
    readonly overflowingTimers: boolean;
    /** Each trace line as it is written. */
    readonly onTrace?: (line: string) => void;
}

/** What a run counted. */
export interface RunCounts {
    commands: number;
    operations: number;
    requests: number;
    faults: Partial<Record<FaultKind, number>>;
    interruptions: number;
    patienceCancels: number;
    invariantChecks: number;
    healingUps: number;
    virtualMs: number;
    jumps: number;
}

/** The outcome of one run. */
export interface RunReport {
    readonly seed: number;
    readonly plan: Plan;
    readonly counts: RunCounts;
    readonly violations: readonly Violation[];
    readonly trace: readonly string[];
    readonly realMs: number;
    /** Every hazard the run injected, pinned to its request: replayed as the plan's script, it does the same. */
    readonly script: Script;
}

/** Plays one seed (or plan) and checks every invariant. */
export async function runSeed(options: RunOptions): Promise<RunReport> {
    const run = new ChaosRun(options);
    const startedAt = Date.now();
    try {
        await run.play();
    } finally {
        await run.close();
    }
    return {
        seed: options.seed,
        plan: run.plan,
        counts: run.counts,
        violations: run.violations,
        trace: run.trace,
        realMs: Date.now() - startedAt,
        script: run.script,
    };
}

/** The operation in progress, as the proxy hooks see it. */
interface CurrentOperation {
    readonly id: number;
    readonly operation: Operation;
    readonly where: string;
    readonly key: string;
    readonly controller: AbortController;
    /** When to interrupt: the `nth` request of `route` ("any": of any route) of this operation. */
    readonly interrupt:
        | (Omit<Pinned, "op" | "route"> & {
              readonly route: RouteKind | "any";
              readonly when: "arrival" | "answered";
              readonly reason: string;
          })
        | undefined;
    /** Requests so far, by route. */
    readonly routes: Map<RouteKind, number>;
    readonly startedAt: number;
    readonly requests: ProxyRequest[];
    gaveUp: boolean;
    runaway: boolean;
}

class ChaosRun implements OperationRunner {
    readonly plan: Plan;
    readonly counts: RunCounts = {
        commands: 0,
        operations: 0,
        requests: 0,
        faults: {},
        interruptions: 0,
        patienceCancels: 0,
        invariantChecks: 0,
        healingUps: 0,
        virtualMs: 0,
        jumps: 0,
    };
    readonly violations: Violation[] = [];
    readonly trace: string[] = [];
    readonly script: {
        faults: Script["faults"][number][];
        taskFailures: Pinned[];
        interrupts: Script["interrupts"][number][];
    } = {
        faults: [],
        taskFailures: [],
        interrupts: [],
    };
    private readonly time: VirtualTime;
    private readonly engine = new Engine();
    private readonly allowed: ReadonlySet<FaultKind>;
    private readonly reports: string[] = [];
    private readonly secrets = { "API token": TOKEN, "userinfo password": USERINFO_PASSWORD };
    private backend: TaskApiServer | undefined;
    private proxy: ChaosProxy | undefined;
    private foreignOrigin: ForeignOrigin | undefined;
    /** Someone else's datastores as made before the run: id -> record. */
    private readonly foreign = new Map<string, DatastoreRecord>();
    /** Foreign ids the program was told to adopt (adopt: true on their exact natural key). */
    private readonly released = new Set<string>();
    private controller = new AbortController();
    /** Operations in progress (several at once when the plan runs them in parallel), by id. */
    private readonly operations = new Map<number, CurrentOperation>();
    private readonly whereOf = new WeakMap<Operation, string>();
    private nextOperationId = 1;
    /** Set when a command had to be given up (hung): the run stops there. */
    private abandoned = false;
    private where = "setup";
    private stepId = 0;
    private processes = 0;

    constructor(private readonly options: RunOptions) {
        this.plan = options.plan ?? generatePlan(options.seed);
        this.allowed = options.faults ?? new Set(FAULT_KINDS);
        this.time = new VirtualTime(START, {
            overflowingTimers: options.overflowingTimers,
            onOverflow: (kind, ms) => {
                if (!options.overflowingTimers) return;
                this.violate("5 runaway", `a ${kind} of ${ms} ms: Node's timers fire after 1 ms beyond 2^31-1 ms`);
            },
        });
    }

    async play(): Promise<void> {
        await this.setUp();
        for (const step of this.plan.steps) {
            this.stepId = step.id;
            this.where = `step ${step.id} ${step.kind}`;
            this.log(
                `== ${this.where}${step.kind === "up" ? ` [${step.program.map(describeResource).join(", ")}]` : ""}`,
            );
            if (step.kind === "wait") {
                this.time.advance(step.ms);
                continue;
            }
            await this.command(step.kind, step.kind === "up" ? step.program : []);
            if (this.abandoned) break;
        }
        if (!this.abandoned) await this.heal();
        this.counts.virtualMs = this.time.now - START;
        this.counts.jumps = this.time.stats.jumps;
        this.counts.requests = this.proxy?.requests.length ?? 0;
    }

    async close(): Promise<void> {
        await this.proxy?.close();
        await this.backend?.close();
        await this.foreignOrigin?.close();
    }

    // ---- set-up and healing ----

    private async setUp(): Promise<void> {
        const { settings } = this.plan;
        this.backend = await startTaskApiServer({
            token: TOKEN,
            clock: this.time.clock,
            sleep: async () => undefined,
            taskDurationMs: settings.taskDurationMs,
            seed: this.options.seed,
        });
        this.foreignOrigin = await startForeignOrigin();
        this.proxy = await startChaosProxy({
            backendUrl: this.backend.url,
            foreignOrigin: this.foreignOrigin.url,
            time: this.time,
            userinfo: `chaos-user:${USERINFO_PASSWORD}`,
            truth: () => this.truth(),
            foreignRecords: () => this.truth().filter((record) => this.foreign.has(record.id)),
            hooks: {
                arrived: (request) => this.arrived(request),
                decide: (request) => this.decide(request),
                answered: (request) => this.answered(request),
                forwarding: (request, done) => this.forwarding(request, done),
            },
        });
        for (const spec of this.plan.foreign) {
            if (spec.fate === "ERROR") {
                this.backend.addFault({
                    match: { method: "POST" },
                    fault: { task: { fails: "someone else's create failed" } },
                });
            }
            await this.createDirectly(spec.key, spec.sizeInBytes);
        }
        this.time.advance(settings.taskDurationMs + 1);
        for (const record of this.truth()) this.foreign.set(record.id, record);
        this.log(`foreign: ${[...this.foreign.values()].map(describeRecord).join("; ")}`);
    }

    private async heal(): Promise<void> {
        const proxy = this.proxy as ChaosProxy;
        proxy.chaos = false;
        this.backend?.clearFaults();
        this.time.advance(60 * 60_000);
        const program = this.finalProgram();
        this.log(`== healing [${program.map(describeResource).join(", ")}]`);
        this.log(`   the API has: ${this.truth().map(describeRecord).join("; ") || "nothing"}`);
        // As a careful user does: refresh first (an interrupted delete may have left state behind).
        this.where = "healing refresh 1";
        this.stepId = HEALING_STEP;
        await this.command("refresh", []);
        if (this.abandoned) return;
        let healed = false;
        let failures: readonly string[] = [];
        for (let attempt = 1; attempt <= HEALING_UPS && !healed; attempt++) {
            // The user reads the error and runs `pulumi up` again some minutes later.
            if (attempt > 1) this.time.advance(HEALING_PAUSE_MS);
            this.where = `healing up ${attempt}`;
            this.stepId = HEALING_STEP + attempt;
            this.counts.healingUps++;
            const result = await this.command("up", program);
            if (this.abandoned) return;
            healed = result.ok;
            failures = result.failures;
        }
        this.check(
            "4 state",
            healed,
            () => `the final program did not converge in ${HEALING_UPS} ups: ${failures.join("; ")}`,
        );
        this.where = "healing refresh 2";
        this.stepId = HEALING_STEP + HEALING_UPS + 1;
        const refreshed = await this.command("refresh", []);
        if (this.abandoned) return;
        this.check("4 state", refreshed.ok, () => `the final refresh failed: ${refreshed.failures.join("; ")}`);
        this.where = "end";
        this.checkFinalState(program, healed && refreshed.ok);
        this.checkOrigin();
        this.checkBackendLog();
        for (const report of this.reports) {
            for (const secret of secretsIn(report, this.secrets))
                this.violate("4 state", `a progress line carries the ${secret}: ${report}`);
            this.counts.invariantChecks++;
        }
    }

    /**
     * The last program, as a user would run it to heal, following the provider's advice: untaint off,
     * timeouts raised to at least HEALING_TIMEOUT_MS, and without what can never be made (a name taken by
     * someone else's datastore it was not told to adopt, or one it cannot adopt as it is).
     */
    private finalProgram(): ResourceSpec[] {
        const lastUp = [...this.plan.steps].reverse().find((step) => step.kind === "up");
        const program = lastUp?.kind === "up" ? lastUp.program : [];
        const truth = this.truth();
        return program
            .map(({ timeouts, ...resource }) => ({ ...resource, untaint: false, ...patientTimeouts(timeouts) }))
            .filter((resource) => {
                const theirs = truth.find((record) => this.foreign.has(record.id) && hasKey(record, resource.key));
                if (!theirs) return true;
                // Someone else's that it was never told to adopt: the user must choose another name.
                if (!this.released.has(theirs.id)) return false;
                const ours = this.engine.state.get(resource.urn)?.outputs.datastoreId === theirs.id;
                const adoptable = resource.adopt && theirs.capacityInBytes === resource.sizeInBytes;
                return ours || adoptable;
            });
    }

    // ---- commands and operations ----

    private async command(kind: "up" | "refresh" | "destroy", program: readonly ResourceSpec[]) {
        this.counts.commands++;
        if (kind === "up") {
            for (const resource of program) {
                if (!resource.adopt) continue;
                for (const record of this.foreign.values())
                    if (hasKey(record, resource.key)) this.released.add(record.id);
            }
        }
        const provider = this.newProcess();
        const parallel = this.plan.settings.parallel === true;
        const result = await this.drive(
            kind === "up"
                ? this.engine.up(program, provider, this, parallel)
                : kind === "refresh"
                  ? this.engine.refresh(provider, this, parallel)
                  : this.engine.destroy(provider, this, parallel),
        );
        if (!result) return { ok: false, operations: 0, failures: ["abandoned: an operation hung"] };
        this.log(
            `   ${kind} ${result.ok ? "ok" : "failed"}${result.failures.length ? `: ${result.failures.join("; ")}` : ""}`,
        );
        this.checkForeign();
        this.checkOrigin();
        return result;
    }

    /** A provider process: a fresh context (its own abort signal) and a provider built as runtime.ts does. */
    private newProcess(): DatastoreProvider {
        this.controller = new AbortController();
        const proxy = this.proxy as ChaosProxy;
        const { settings } = this.plan;
        const random = seededRandom(hashSeed(this.options.seed, "process", ++this.processes));
        const context: TaskProcessContext = {
            clock: this.time.clock,
            sleep: this.time.sleep,
            random,
            signal: this.controller.signal,
            report: (message) => this.reports.push(message),
            track: (work) => work,
        };
        const env = {
            TASK_API_URL: proxy.url,
            TASK_API_TOKEN: TOKEN,
            TASK_POLL_INITIAL_MS: String(settings.pollInitialMs),
            TASK_POLL_MAX_MS: String(settings.pollMaxMs),
            TASK_REQUEST_TIMEOUT_MS: String(settings.requestTimeoutMs),
            [SENT_CREATES_DIR_ENV]: recordsDirectory(),
        };
        const time = this.time;
        // The client's fetch, tagged with the request timer it runs under (the client starts it just before).
        const taggedFetch: typeof fetch = (input, init) => {
            const headers = new Headers(init?.headers);
            headers.set(REQUEST_ID_HEADER, String(time.lastRequestId ?? 0));
            headers.set(OPERATION_HEADER, String(operationContext.getStore()?.id ?? 0));
            return fetch(input, { ...init, headers });
        };
        return new DatastoreProvider(
            context,
            env,
            (configured) =>
                new TaskApiClient({
                    ...clientOptionsFrom(configured),
                    clock: time.clock,
                    sleep: time.sleep,
                    timeout: time.timeout,
                    random,
                    fetch: taggedFetch,
                }),
        );
    }

    interrupted(): boolean {
        return this.controller.signal.aborted;
    }

    unencodable(operation: Operation, what: string, error: unknown): void {
        this.violate(
            "6 errors",
            `${operation.kind} ${operation.key.name}: the SDK cannot send its ${what} to the engine: ${String(error)}`,
        );
    }

    async run<T>(operation: Operation, work: () => Promise<T>): Promise<OpOutcome<T>> {
        this.counts.operations++;
        const { settings } = this.plan;
        const key = `${this.stepId}/${operation.urn}/${operation.kind}`;
        const chaos = (this.proxy as ChaosProxy).chaos;
        const interrupt = chaos ? this.interruptOf(key) : undefined;
        const where = `${this.where}, ${operation.kind} ${operation.urn.split("::").at(-1)}`;
        const current: CurrentOperation = {
            id: this.nextOperationId++,
            operation,
            where,
            key,
            controller: this.controller,
            interrupt,
            routes: new Map(),
            startedAt: this.time.now,
            requests: [],
            gaveUp: false,
            runaway: false,
        };
        this.operations.set(current.id, current);
        this.whereOf.set(operation, where);
        this.log(
            `-- ${where}${interrupt ? ` (interrupt at ${interrupt.route} request ${interrupt.nth}, ${interrupt.when})` : ""}`,
        );
        const deadline = current.startedAt + timeoutOf(operation);
        let outcome: OpOutcome<T>;
        try {
            outcome = { ok: true, value: await operationContext.run(current, work) };
        } catch (error) {
            outcome = { ok: false, error };
        }
        this.operations.delete(current.id);
        const endedAt = this.time.now;
        const over = endedAt - deadline;
        this.check(
            "3 deadline",
            over <= settings.requestTimeoutMs,
            () =>
                `ended ${over} ms after its deadline (${timeoutOf(operation)} ms from its start; one request timeout is ${settings.requestTimeoutMs} ms)`,
            where,
        );
        this.log(
            `   ${where}: ${describeOutcome(outcome)} (${current.requests.length} requests, ${((endedAt - current.startedAt) / 1000).toFixed(1)} s)`,
        );
        if (!outcome.ok && "error" in outcome) this.checkError(operation, outcome.error, current, where);
        return outcome;
    }

    recorded(operation: Operation): void {
        this.checkState(this.whereOf.get(operation) ?? this.where);
    }

    /** Runs a command's work on virtual time; a hang gives the whole run up (after saying which operations hung). */
    private async drive<T>(work: Promise<T>): Promise<T | undefined> {
        const driven = await this.time.drive(work, {
            realLimitMs: COMMAND_REAL_LIMIT_MS,
            onStuck: () => {
                this.log("   stuck: closing every connection");
                return (this.proxy as ChaosProxy).closeConnections() > 0;
            },
        });
        if (driven.settled) {
            if (driven.ok) return driven.value;
            throw driven.error;
        }
        for (const current of this.operations.values()) {
            this.violate(
                "3 deadline",
                `the operation never ended (${driven.reason}) after ${current.requests.length} requests`,
                current.where,
            );
        }
        this.abandoned = true;
        return undefined;
    }

    // ---- the proxy's hooks ----

    /** The operation that sent a request (undefined for one no operation owns, e.g. a leftover). */
    private operationOf(request: ProxyRequest): CurrentOperation | undefined {
        return request.operationId === undefined ? undefined : this.operations.get(request.operationId);
    }

    private arrived(request: ProxyRequest): void {
        const current = this.operationOf(request);
        const problem = requestProblem(request.method, request.url);
        const where = current?.where ?? this.where;
        this.check(
            "1 origin",
            problem === undefined,
            () => `${request.method} ${request.url.slice(0, 160)}: ${problem}`,
            where,
        );
        const target = request.method === "DELETE" || request.method === "PATCH" ? targetId(request.url) : undefined;
        const foreign = target !== undefined && this.foreign.has(target) && !this.released.has(target);
        this.check(
            "2 foreign",
            !foreign,
            () => `${request.method} of someone else's datastore ${target} (${this.foreign.get(target ?? "")?.name})`,
            where,
        );
        if (!current) return;
        current.requests.push(request);
        request.nth = (current.routes.get(request.route) ?? 0) + 1;
        current.routes.set(request.route, request.nth);
        const count = current.requests.length;
        const elapsed = this.time.now - current.startedAt;
        if (!current.runaway && count > RUNAWAY_BURST + elapsed / RUNAWAY_MS_PER_REQUEST) {
            current.runaway = true;
            this.violate("5 runaway", `${count} requests in ${elapsed} virtual ms`, current.where);
        }
        if (count >= PATIENCE_REQUESTS && !current.gaveUp && !current.controller.signal.aborted) {
            current.gaveUp = true;
            this.counts.patienceCancels++;
            this.log(`   the user gives up after ${count} requests: Ctrl-C`);
            current.controller.abort(new Error("cancelled (Ctrl-C)"));
        }
        if (current.interrupt?.when === "arrival") this.interrupt(current, request);
    }

    private decide(request: ProxyRequest): { fault: FaultKind; random: () => number } | undefined {
        const current = this.operationOf(request);
        const key = current?.key ?? `${this.stepId}/none`;
        const index = current?.requests.length ?? request.seq;
        const pinned: Pinned = { op: key, route: request.route, nth: request.nth ?? 0 };
        const at = (entry: Pinned) =>
            entry.op === pinned.op && entry.route === pinned.route && entry.nth === pinned.nth;
        const script = this.plan.script;
        if (request.route === "create" || request.route === "resize" || request.route === "delete") {
            request.taskFails = script
                ? script.taskFailures.some(at)
                : seededRandom(hashSeed(this.options.seed, "task", key, index))() <
                  this.plan.settings.taskFailureProbability;
            if (request.taskFails) this.script.taskFailures.push(pinned);
        }
        const random = seededRandom(hashSeed(this.options.seed, "fault", key, index));
        const drawn = script
            ? script.faults.find(at)?.fault
            : pickFault(request.route, random, this.plan.settings.faultProbability, this.allowed);
        const fault = drawn !== undefined && this.allowed.has(drawn) ? drawn : undefined;
        if (!fault) return undefined;
        if (script) {
            // Skip the two draws pickFault made, so the fault's details are those of the run recorded.
            random();
            random();
        }
        this.counts.faults[fault] = (this.counts.faults[fault] ?? 0) + 1;
        this.script.faults.push({ ...pinned, fault });
        return { fault, random };
    }

    /** The backend fails the task of a request the dice (or the script) chose, and no other. */
    private forwarding(request: ProxyRequest, done: boolean): void {
        if (!request.taskFails) return;
        const backend = this.backend as TaskApiServer;
        if (done) backend.clearFaults();
        else
            backend.addFault({
                match: { method: request.method },
                fault: { task: { fails: "the disk array went offline (simulated)" } },
            });
    }

    /** When to interrupt the operation `key`: as the script says, or as the dice say. */
    private interruptOf(key: string): CurrentOperation["interrupt"] {
        const script = this.plan.script;
        if (script) {
            const pinned = script.interrupts.find((entry) => entry.op === key);
            return pinned && { route: pinned.route, nth: pinned.nth, when: pinned.when, reason: pinned.reason };
        }
        const random = seededRandom(hashSeed(this.options.seed, "interrupt", key));
        if (random() >= this.plan.settings.interruptProbability) return undefined;
        return {
            route: "any",
            nth: 1 + Math.floor(random() * 6),
            when: random() < 0.5 ? "arrival" : "answered",
            // The reasons processContext gives: the engine's Cancel, or SIGINT.
            reason: random() < 0.5 ? "cancelled (Ctrl-C)" : "interrupted by SIGINT",
        };
    }

    private answered(request: ProxyRequest): void {
        const at = ((request.at - START) / 1000).toFixed(3);
        const fault = request.fault ? ` [${request.fault}${request.detail ? `: ${request.detail}` : ""}]` : "";
        const current = this.operationOf(request);
        const by = current ? `${current.operation.kind} ${current.operation.urn.split("::").at(-1)} ` : "";
        this.log(
            `   ${at}s #${request.seq} ${by}${request.method} ${request.url.slice(0, 140)}${fault} -> ${request.outcome ?? "?"}`,
        );
        if (current?.interrupt?.when === "answered" && current.requests.includes(request))
            this.interrupt(current, request);
    }

    /** Interrupts the operation if `request` is the one its interruption is pinned to. */
    private interrupt(current: CurrentOperation, request: ProxyRequest): void {
        const interrupt = current.interrupt;
        if (!interrupt || current.controller.signal.aborted) return;
        const hit =
            interrupt.route === "any"
                ? current.requests.indexOf(request) + 1 === interrupt.nth
                : request.route === interrupt.route && request.nth === interrupt.nth;
        if (!hit) return;
        this.counts.interruptions++;
        this.script.interrupts.push({
            op: current.key,
            route: request.route,
            nth: request.nth ?? 0,
            when: interrupt.when,
            reason: interrupt.reason,
        });
        this.log(`   interrupt: ${interrupt.reason}`);
        current.controller.abort(new Error(interrupt.reason));
    }

    // ---- invariants ----

    private checkError(operation: Operation, error: unknown, current: CurrentOperation, where: string): void {
        for (const problem of errorProblems(error, operation.key, this.secrets, this.truth()))
            this.violate("6 errors", problem, where);
        this.counts.invariantChecks++;
        // A Location elsewhere on a 200 (which the contract never reads) must not fail anything: an
        // error naming such a place when no 202, redirect or task of this operation pointed there.
        const message = messageOf(error);
        const elsewhere = message.includes(this.foreignOrigin?.url ?? "\u0000") || message.includes("chaos-user");
        const pointed = current.requests.some((request) =>
            ["locationForeign", "locationUserinfo", "redirect", "taskBadResource"].includes(request.fault ?? ""),
        );
        const on200 = current.requests.some((request) => request.fault === "locationOn200");
        this.check(
            "6 errors",
            !(elsewhere && on200 && !pointed),
            () => `failed on a Location of a 200 answer, which the contract never reads: ${message.slice(0, 300)}`,
            where,
        );
        // A create recorded as of unknown outcome, when every POST it sent was plainly refused.
        const partial = partialOf(error);
        if (operation.kind !== "create" || !partial || partial.properties.datastoreId || partial.properties.taskId)
            return;
        const posts = current.requests.filter((request) => request.route === "create");
        const refused = (request: ProxyRequest) =>
            typeof request.outcome === "number" &&
            request.outcome >= 400 &&
            request.outcome < 500 &&
            request.outcome !== 408 &&
            request.outcome !== 429 &&
            (request.fault === undefined || request.fault === "definite4xx" || request.fault === "nestedJson");
        this.check(
            "6 errors",
            posts.length === 0 || !posts.every(refused) || current.controller.signal.aborted,
            () =>
                `a create recorded as of unknown outcome though every POST was refused (${posts.map((p) => p.outcome).join(", ")}): ${messageOf(error)}`,
            where,
        );
    }

    /** After every operation: nothing of someone else's in state, no secret in it. */
    private checkState(where: string): void {
        for (const entry of this.engine.state.values()) {
            const id = String(entry.outputs.datastoreId ?? "").toLowerCase();
            const theirs = id !== "" && this.foreign.has(id) && !this.released.has(id);
            this.check(
                "2 foreign",
                !theirs,
                () => `${entry.key.name} records someone else's datastore ${id} (${this.foreign.get(id)?.name})`,
                where,
            );
            const json = JSON.stringify(entry.outputs);
            const leaked = secretsIn(json, this.secrets);
            this.check(
                "4 state",
                leaked.length === 0,
                () => `the state of ${entry.key.name} carries the ${leaked.join(", ")}`,
                where,
            );
        }
    }

    /** After every command: someone else's datastores are all there, unchanged. */
    private checkForeign(): void {
        const truth = new Map(this.truth().map((record) => [record.id, record]));
        for (const [id, before] of this.foreign) {
            if (this.released.has(id)) continue;
            const now = truth.get(id);
            this.check(
                "2 foreign",
                now !== undefined,
                () => `someone else's datastore ${before.name} (${id}) was deleted`,
            );
            this.check(
                "2 foreign",
                now === undefined || now.capacityInBytes === before.capacityInBytes,
                () =>
                    `someone else's datastore ${before.name} (${id}) was resized from ${before.capacityInBytes} to ${now?.capacityInBytes}`,
            );
        }
    }

    private checkOrigin(): void {
        const received = this.foreignOrigin?.received ?? [];
        this.check("1 origin", received.length === 0, () => {
            const first = received[0];
            const token = received.some((request) => request.authorization?.includes(TOKEN))
                ? ", carrying the token"
                : "";
            return `the foreign origin received ${received.length} request(s)${token}, first ${first?.method} ${first?.url}`;
        });
        received.length = 0;
    }

    private checkBackendLog(): void {
        for (const entry of this.proxy?.backendLog ?? []) {
            if (entry.method !== "DELETE" && entry.method !== "PATCH") continue;
            const id = targetId(entry.url);
            const theirs = id !== undefined && this.foreign.has(id) && !this.released.has(id);
            this.check(
                "2 foreign",
                !theirs,
                () =>
                    `${entry.method} of someone else's datastore ${id} reached the backend (answered ${entry.status})`,
            );
        }
    }

    /** After healing: each resource is one datastore with its key and size, OK and untainted; no zombie, no duplicate. */
    private checkFinalState(program: readonly ResourceSpec[], healed: boolean): void {
        const checks = finalStateChecks({
            program: program.map((resource) => ({ ...resource, label: describeResource(resource) })),
            state: [...this.engine.state.values()],
            truth: this.truth(),
            foreign: new Set(this.foreign.keys()),
            healed,
        });
        for (const { holds, detail } of checks) this.check("4 state", holds, detail);
    }

    private check(invariant: InvariantName, holds: boolean, detail: () => string, where = this.where): void {
        this.counts.invariantChecks++;
        if (!holds) this.violate(invariant, detail(), where);
    }

    private violate(invariant: InvariantName, detail: string, where = this.where): void {
        this.violations.push({ invariant, where, detail });
        this.log(`!! VIOLATION ${invariant} (${where}): ${detail}`);
    }

    private log(line: string): void {
        this.trace.push(line);
        this.options.onTrace?.(line);
    }

    private truth(): DatastoreRecord[] {
        return [...(this.backend?.datastores() ?? [])];
    }

    private async createDirectly(key: NaturalKey, sizeInBytes: number): Promise<void> {
        const backend = this.backend as TaskApiServer;
        const answer = await fetch(`${backend.url}${DATASTORES_PATH}`, {
            method: "POST",
            headers: { authorization: backend.authorization, "content-type": "application/json" },
            body: JSON.stringify({
                name: key.name,
                sizeInBytes,
                storageSystemId: key.hciClusterUuid,
                targetHypervisorClusterId: key.clusterId,
                datastoreType: "VMFS",
            }),
        });
        if (answer.status !== 202)
            throw new Error(
                `could not make someone else's datastore ${key.name}: ${answer.status} ${await answer.text()}`,
            );
        await answer.arrayBuffer();
    }
}

/** No timeout shorter than this in the healing program: tasks take up to a few minutes. */
const HEALING_TIMEOUT_MS = 10 * 60_000;

/** `timeouts` without any shorter than HEALING_TIMEOUT_MS (the user raised them, as the error says). */
function patientTimeouts(timeouts: ResourceSpec["timeouts"]): Pick<ResourceSpec, "timeouts"> {
    if (!timeouts) return {};
    const kept = Object.fromEntries(
        Object.entries(timeouts).filter(([, value]) => {
            const parsed = value === undefined ? undefined : parseDuration(value);
            return typeof parsed === "number" && parsed >= HEALING_TIMEOUT_MS;
        }),
    );
    return Object.keys(kept).length > 0 ? { timeouts: kept } : {};
}

/** How long an operation may take, as the README documents its timeouts. */
export function timeoutOf(operation: Operation): number {
    const duration = (operation.timeouts as Record<string, string | undefined> | undefined)?.[operation.kind];
    const parsed = duration === undefined ? undefined : parseDuration(duration);
    if (typeof parsed === "number") return parsed;
    return operation.kind === "read" ? DEFAULT_READ_TIMEOUT_MS : DEFAULT_OPERATION_TIMEOUT_MS;
}

function describeResource(resource: ResourceSpec): string {
    const flags = [
        `${resource.sizeInBytes / 1024 ** 3} GiB`,
        resource.adopt ? "adopt" : "",
        resource.untaint ? "untaint" : "",
        resource.createToken ? "token" : "",
        resource.timeouts ? JSON.stringify(resource.timeouts) : "",
    ].filter(Boolean);
    return `${resource.urn.split("::").at(-1)} (${flags.join(" ")})`;
}

function describeRecord(record: DatastoreRecord): string {
    return `${record.name}@${record.clusterInfo.id.slice(0, 8)} ${record.id} ${record.state} ${record.capacityInBytes / 1024 ** 3} GiB`;
}

function describeOutcome(outcome: OpOutcome<unknown>): string {
    if (outcome.ok) return "ok";
    if ("abandoned" in outcome) return `abandoned: ${outcome.abandoned}`;
    const error = outcome.error;
    const partial = partialOf(error) ? "partial state: " : "";
    return `${partial}${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`.slice(0, 400);
}
