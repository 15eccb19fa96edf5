// One run of the dialect chaos suite: a seed's plan (dialectPlan.ts) played by tasks.AsyncResource's
// provider, in this process on virtual time (test/chaos/virtualTime.ts), against one dialect's server
// with the kit's random faults over every kind and operations that fail, are canceled, end late or take
// long; with the engine's bookkeeping emulated (dialectEngine.ts); with Ctrl-C (the process's abort
// signal) and kills (the provider process dies: what it was doing is never answered) mid-operation.
// Then healing: the chaos off, time passing at the server, `pulumi refresh --import-pending-creates`, the
// final program applied until an up succeeds, a refresh, a destroy. The invariants (dialectInvariants.ts)
// are checked after every operation and command, counted on the server, and at the end.

import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDuration } from "../../../provider/shared/duration";
import { seededRandom } from "../../../provider/shared/random";
import { messageOf } from "../../../provider/shared/text";
import { AsyncResourceProvider } from "../../../provider/tasks/asyncResourceProvider";
import type { AsyncResourceInputs } from "../../../provider/tasks/asyncResourceSchema";
import { SENT_CREATES_DIR_ENV } from "../../../provider/tasks/io/sentCreates";
import type { TaskProcessContext } from "../../../provider/tasks/processContext";
import type { Fault } from "../../dialects/servers/kit";
import { TOKEN_ENV, WIDGETS_TOKEN } from "../../tasks/asyncResource/dialectFixtures";
import { hashSeed } from "../faults";
import { VirtualTime } from "../virtualTime";
import {
    type CommandResult,
    type Declared,
    DialectEngine,
    describeOutcome,
    type Operation,
    type Outcome,
    type Runner,
} from "./dialectEngine";
import { Checker, errorProblems, type InvariantName, SECRETS, secretsIn, type Violation } from "./dialectInvariants";
import { describePlan, describeResource, generatePlan, type Plan, type ResourceSpec, shortUrn } from "./dialectPlan";
import {
    type ChaosServer,
    type FaultKind,
    SeededOperations,
    SwitchableFaults,
    startChaosServer,
} from "./dialectServers";

/** The provider's defaults for operations without `timeouts` (asyncLifecycle.ts). */
const DEFAULT_TIMEOUT_MS = 20 * 60_000;
const DEFAULT_READ_TIMEOUT_MS = 5 * 60_000;
/** What an operation may run past its deadline: one request in flight (the client's request timeout) and a bit. */
const DEADLINE_SLACK_MS = 35_000;
/** After a Ctrl-C an operation must end within this much virtual time ("within seconds"). */
const INTERRUPT_SLACK_MS = 5_000;
/** More requests than this in one operation is a runaway loop: a violation, and the user presses Ctrl-C. */
const RUNAWAY_REQUESTS = 400;
/** Ups of the final program, with the chaos off, before healing counts as failed. */
const HEALING_UPS = 4;
/** Real time one command may take before it is given up as running away. */
const COMMAND_REAL_LIMIT_MS = 60_000;

/** The operation an async call belongs to, for the fetch that carries its requests. */
const operationContext = new AsyncLocalStorage<CurrentOperation>();

export interface RunOptions {
    readonly dialect: string;
    readonly seed: number;
    /** Whether the production timers overflow beyond 2^31-1 ms (report.ts probes it). */
    readonly overflowingTimers: boolean;
    readonly onTrace?: (line: string) => void;
}

export interface RunCounts {
    commands: number;
    operations: number;
    requests: number;
    faults: Partial<Record<FaultKind, number>>;
    /** Operations the server's plan failed, canceled, answered late or made long. */
    failedOperations: number;
    canceledOperations: number;
    lateOperations: number;
    longOperations: number;
    interruptions: number;
    kills: number;
    outsideChanges: number;
    checks: number;
    violations: number;
    healingUps: number;
}

export interface RunReport {
    readonly dialect: string;
    readonly seed: number;
    readonly plan: Plan;
    readonly counts: RunCounts;
    readonly violations: readonly Violation[];
    readonly trace: readonly string[];
    readonly realMs: number;
}

/** Plays one seed against one dialect's server and checks every invariant. */
export async function runSeed(options: RunOptions): Promise<RunReport> {
    const run = new DialectRun(options);
    const startedAt = Date.now();
    try {
        await run.play();
    } finally {
        await run.close();
    }
    run.counts.violations = run.violations.length;
    return {
        dialect: options.dialect,
        seed: options.seed,
        plan: run.plan,
        counts: run.counts,
        violations: run.violations,
        trace: run.trace,
        realMs: Date.now() - startedAt,
    };
}

/** A hazard pinned to an operation's nth request: before it is sent, or once its answer arrived. */
interface Hazard {
    readonly kind: "ctrl-c" | "kill";
    readonly nth: number;
    readonly when: "before" | "after";
}

/** One provider process: its abort signal, and whether it was killed. */
interface ProviderProcess {
    readonly controller: AbortController;
    dead: boolean;
    interruptedAt: number | undefined;
}

interface CurrentOperation {
    readonly operation: Operation;
    readonly where: string;
    readonly process: ProviderProcess;
    readonly hazard: Hazard | undefined;
    requests: number;
    runaway: boolean;
}

class DialectRun implements Runner {
    readonly plan: Plan;
    readonly counts: RunCounts = {
        commands: 0,
        operations: 0,
        requests: 0,
        faults: {},
        failedOperations: 0,
        canceledOperations: 0,
        lateOperations: 0,
        longOperations: 0,
        interruptions: 0,
        kills: 0,
        outsideChanges: 0,
        checks: 0,
        violations: 0,
        healingUps: 0,
    };
    readonly trace: string[] = [];
    readonly violations: Violation[] = [];
    private readonly time: VirtualTime;
    private readonly startedAt: number;
    private readonly engine = new DialectEngine();
    private readonly faults: SwitchableFaults;
    private readonly operations: SeededOperations;
    private readonly checker: Checker;
    private server: ChaosServer | undefined;
    private process: ProviderProcess = { controller: new AbortController(), dead: false, interruptedAt: undefined };
    private processes = 0;
    private where = "setup";
    private stepId = 0;
    private healing = false;
    private abandoned = false;
    /** Progress lines the provider reported. */
    private readonly reports: string[] = [];

    constructor(private readonly options: RunOptions) {
        this.plan = generatePlan(options.dialect, options.seed);
        // Virtual time starts at the wall clock: Cloud Control's server signs and times on the wall clock.
        this.time = new VirtualTime(Math.floor(Date.now() / 1000) * 1000, {
            overflowingTimers: options.overflowingTimers,
            onOverflow: (kind, ms) => {
                if (options.overflowingTimers)
                    this.violate("runaway", `a ${kind} of ${ms} ms: Node's timers fire after 1 ms beyond 2^31-1 ms`);
            },
        });
        this.startedAt = this.time.now;
        const { settings } = this.plan;
        this.faults = new SwitchableFaults(
            hashSeed("faults", options.dialect, options.seed),
            settings.faultRate,
            (fault, request) =>
                this.log(
                    `      fault ${describeFault(fault)} on ${request.operation} ${request.method} ${request.path}`,
                ),
        );
        this.operations = new SeededOperations(
            seededRandom(hashSeed("operations", options.dialect, options.seed)),
            settings.odds,
            (kind, script) => this.log(`      server: the ${kind} operation ${JSON.stringify(script)}`),
        );
        this.checker = new Checker((invariant, detail, where) => this.violate(invariant, detail, where), this.counts);
    }

    async play(): Promise<void> {
        for (const line of describePlan(this.plan)) this.log(line);
        await this.setUp();
        for (const step of this.plan.steps) {
            if (this.abandoned) break;
            this.stepId = step.id;
            this.where = `step ${step.id} ${step.kind}`;
            this.log(
                `== ${this.where}${step.kind === "up" ? ` [${step.program.map(describeResource).join(", ")}]` : ""}`,
            );
            if (step.kind === "up") await this.command("up", step.program);
            else if (step.kind === "refresh" || step.kind === "destroy") await this.command(step.kind, []);
            else if (step.kind === "wait") await this.passTime(30 * 60_000);
            else this.outsideChange(step);
        }
        if (!this.abandoned) await this.heal();
        const server = this.server as ChaosServer;
        this.counts.requests = server.server.counts().requests;
        this.counts.faults = { ...this.faults.injected };
        const drawn = this.operations.drawn;
        this.counts.failedOperations = drawn.failed;
        this.counts.canceledOperations = drawn.canceled;
        this.counts.lateOperations = drawn.late;
        this.counts.longOperations = drawn.long;
    }

    async close(): Promise<void> {
        await this.server?.server.close();
        rmSync(this.sentCreates, { recursive: true, force: true });
    }

    /** The run's own record of creates in flight, which its provider processes share as one user's do. */
    private readonly sentCreates = mkdtempSync(join(tmpdir(), "dialect-chaos-sent-"));

    // ---- set-up, outside changes, healing ----

    private async setUp(): Promise<void> {
        this.server = await startChaosServer(this.options.dialect, {
            faults: this.faults,
            operations: this.operations,
            clock: this.time.clock,
            variant: this.plan.variant,
        });
        this.checker.attach(this.server, this.engine, this.plan.foreign);
        this.engine.importable = (name) => !this.checker.isForeign(name) || this.checker.isTaken(name);
        // Someone else's widgets, made by another program with no chaos.
        this.faults.enabled = false;
        this.operations.healing = true;
        for (const theirs of this.plan.foreign) {
            const outsider = this.newProcess();
            const { inputs } = await outsider.check(
                {} as never,
                this.server.fixture.args(this.server.server.url, theirs.name, theirs.size) as never,
            );
            const made = await this.drive(outsider.create(inputs as AsyncResourceInputs)).catch((error: unknown) => {
                this.violate(
                    "errors",
                    `with no chaos at all, the create of ${theirs.name} failed: ${messageOf(error)}`,
                );
            });
            if (!made) {
                this.abandoned = true;
                return;
            }
        }
        this.faults.enabled = true;
        this.operations.healing = false;
        this.log(`   the server has: ${this.describeServer()}`);
    }

    /** Another tool changes or deletes one of our widgets. */
    private outsideChange(step: Extract<Plan["steps"][number], { kind: "drift" | "outside-delete" }>): void {
        const server = this.server as ChaosServer;
        const ours = server.server
            .resources()
            .filter((record) => !this.checker.isForeign(String(server.fixture.nameOf(record))))
            .sort((a, b) => String(server.fixture.nameOf(a)).localeCompare(String(server.fixture.nameOf(b))));
        const target = ours[Math.floor(step.pick * ours.length)];
        if (!target) {
            this.log("   nothing of ours at the server to change");
            return;
        }
        const id = server.idOf(target);
        this.counts.outsideChanges++;
        if (step.kind === "drift") {
            server.server.mutate(id, server.fixture.drift(step.size));
            this.log(`   another tool sets the size of ${id} to ${step.size}`);
        } else {
            server.server.remove(id);
            this.checker.deletedOutside(id);
            this.log(`   another tool deletes ${id}`);
        }
    }

    /** Time passes at the server: every operation still running ends (nobody of ours is looking). */
    private async passTime(ms: number): Promise<void> {
        const server = this.server as ChaosServer;
        const wasEnabled = this.faults.enabled;
        this.faults.enabled = false;
        const polls = await server.settle();
        this.faults.enabled = wasEnabled;
        this.time.advance(ms);
        this.log(
            `   time passes (${ms / 60_000} min): ${polls} polls ended what ran; the server has: ${this.describeServer()}`,
        );
        this.checker.afterCommand(this.where);
    }

    private async heal(): Promise<void> {
        this.healing = true;
        this.faults.enabled = false;
        this.operations.healing = true;
        this.stepId = 1000;
        this.where = "healing";
        await this.passTime(60 * 60_000);
        const program = this.finalProgram();
        this.log(`== healing [${program.map(describeResource).join(", ")}]`);
        // Each round as the CLI advises for the pending creates a killed process left, then the program:
        // until an up succeeds and there is nothing more to import.
        let result: CommandResult = { ok: false, failures: ["never ran"] };
        for (let attempt = 1; attempt <= HEALING_UPS; attempt++) {
            if (attempt > 1) await this.passTime(10 * 60_000);
            this.where = `healing ${attempt}: refresh --import-pending-creates`;
            const imported = await this.command("refresh", [], true);
            if (this.abandoned) return;
            this.where = `healing ${attempt}: up`;
            this.counts.healingUps++;
            result = await this.command("up", program);
            if (this.abandoned) return;
            if (imported.ok && result.ok && this.engine.imported === 0) break;
        }
        this.checker.check(
            "heal",
            result.ok,
            () => `the final program did not converge in ${HEALING_UPS} ups: ${result.failures.join("; ")}`,
            "healing",
        );
        const cleared = this.engine.clearPendingCreates();
        if (cleared.length > 0)
            this.log(
                `   refresh --clear-pending-creates: ${cleared.map((create) => create.name).join(", ")} never found`,
            );
        this.where = "healing refresh";
        const refreshed = await this.command("refresh", []);
        if (this.abandoned) return;
        this.checker.check("heal", refreshed.ok, () => `the final refresh failed: ${refreshed.failures.join("; ")}`);
        this.checker.finalState(program, "after healing");
        this.where = "final destroy";
        const destroyed = await this.command("destroy", []);
        if (this.abandoned) return;
        this.checker.check("heal", destroyed.ok, () => `the final destroy failed: ${destroyed.failures.join("; ")}`);
        await this.passTime(60 * 60_000);
        this.checker.afterDestroy("after the final destroy");
        for (const report of this.reports) {
            for (const secret of secretsIn(report, SECRETS))
                this.violate("secrets", `a progress line carries the ${secret}: ${report}`);
            this.counts.checks++;
        }
    }

    /** The last program, as a user heals it: untaint off, no short timeouts, no name of someone else's without adopt. */
    private finalProgram(): ResourceSpec[] {
        const lastUp = [...this.plan.steps].reverse().find((step) => step.kind === "up");
        const program = lastUp?.kind === "up" ? lastUp.program : [];
        // Someone else's name declared without adopt fails every up (ResourceExistsError), so the user drops
        // it, unless the state records a resource of the API as this one (then it is managed, and the checks
        // tell whether it was theirs). A pending create sent while theirs held the name records none.
        const claimed = (resource: ResourceSpec) => {
            const entry = this.engine.state.get(resource.urn);
            return entry?.id === resource.name && entry.outputs.resourceId !== undefined;
        };
        return program
            .filter((resource) => !this.checker.isForeign(resource.name) || resource.adopt || claimed(resource))
            .map(({ timeouts: _, ...resource }) => ({ ...resource, untaint: false }));
    }

    // ---- commands and operations ----

    private async command(
        kind: "up" | "refresh" | "destroy",
        program: readonly ResourceSpec[],
        importPending = false,
    ): Promise<CommandResult> {
        this.counts.commands++;
        const server = this.server as ChaosServer;
        if (kind === "up") for (const resource of program) if (resource.adopt) this.checker.released(resource.name);
        const provider = this.newProcess();
        const parallel = this.plan.settings.parallel;
        const declared: Declared[] = program.map((resource) => ({
            urn: resource.urn,
            name: resource.name,
            args: argsOf(server, resource),
        }));
        const work =
            kind === "up"
                ? this.engine.up(declared, provider, this, parallel)
                : kind === "refresh"
                  ? this.engine.refresh(provider, this, parallel, importPending)
                  : this.engine.destroy(provider, this, parallel);
        const result = await this.drive(work);
        if (!result) {
            this.abandoned = true;
            return { ok: false, failures: ["abandoned: a command never ended"] };
        }
        if (kind === "refresh" && result.ok) this.checker.refreshed();
        this.log(
            `   ${kind} ${result.ok ? "ok" : "failed"}${result.failures.length ? `: ${result.failures.join("; ")}` : ""}`,
        );
        this.log(`   the server has: ${this.describeServer()}`);
        this.log(`   the state has: ${this.describeState()}`);
        this.checker.afterCommand(this.where);
        return result;
    }

    /** A provider process as the engine starts one per command: its own abort signal, a fetch we watch. */
    private newProcess(): AsyncResourceProvider {
        const process: ProviderProcess = { controller: new AbortController(), dead: false, interruptedAt: undefined };
        this.process = process;
        const random = seededRandom(hashSeed("process", this.options.dialect, this.options.seed, ++this.processes));
        const context: TaskProcessContext = {
            clock: this.time.clock,
            sleep: this.time.sleep,
            random,
            signal: process.controller.signal,
            report: (message) => this.reports.push(message),
            track: (work) => work,
        };
        const env = {
            [TOKEN_ENV]: WIDGETS_TOKEN,
            TASK_POLL_INITIAL_MS: String(this.plan.settings.pollInitialMs),
            [SENT_CREATES_DIR_ENV]: this.sentCreates,
            ...(this.server as ChaosServer).fixture.env,
        };
        return new AsyncResourceProvider(context, env, (input, init) => this.fetch(process, input, init));
    }

    /** The provider's fetch: hazards pinned to requests, the request marked in flight for virtual time. */
    private async fetch(
        process: ProviderProcess,
        input: Parameters<typeof fetch>[0],
        init: Parameters<typeof fetch>[1],
    ) {
        const current = operationContext.getStore();
        const method = init?.method ?? "GET";
        const path = String(input).replace(/^https?:\/\/[^/]+/, "");
        if (process.dead) throw new TypeError("fetch failed: the provider process is dead");
        const nth = current ? ++current.requests : 0;
        if (current && !current.runaway && nth > RUNAWAY_REQUESTS) {
            current.runaway = true;
            this.violate("runaway", `more than ${RUNAWAY_REQUESTS} requests in one operation`, current.where);
            this.hazard(current, { kind: "ctrl-c", nth, when: "before" });
        }
        const hazard = current?.hazard?.nth === nth ? current.hazard : undefined;
        if (current && hazard?.when === "before") this.hazard(current, hazard);
        if (process.dead) throw new TypeError("fetch failed: the provider process is dead");
        const cancel = this.time.timeout(30_000, () => undefined);
        this.time.touch();
        try {
            const response = await fetch(input, init);
            this.log(`      ${this.at()} ${method} ${path.slice(0, 160)} -> ${response.status}`);
            if (current && hazard?.when === "after") this.hazard(current, hazard);
            return response;
        } catch (error) {
            this.log(
                `      ${this.at()} ${method} ${path.slice(0, 160)} -> ${error instanceof Error ? error.message : String(error)}`,
            );
            throw error;
        } finally {
            cancel();
            this.time.touch();
        }
    }

    /** Ctrl-C (the process's signal aborted: every operation answers what it knows) or a kill (nothing is answered). */
    private hazard(current: CurrentOperation, hazard: Hazard): void {
        const process = current.process;
        if (process.controller.signal.aborted) return;
        if (hazard.kind === "kill") {
            this.counts.kills++;
            process.dead = true;
            this.log(`   !! the provider process is killed (${hazard.when} request ${hazard.nth} of ${current.where})`);
            process.controller.abort(new Error("killed (SIGKILL)"));
            return;
        }
        this.counts.interruptions++;
        process.interruptedAt = this.time.now;
        this.log(`   !! Ctrl-C (${hazard.when} request ${hazard.nth} of ${current.where})`);
        process.controller.abort(new Error("cancelled (Ctrl-C)"));
    }

    async run<T>(operation: Operation, work: () => Promise<T>): Promise<Outcome<T>> {
        this.counts.operations++;
        const key = `${this.stepId}/${operation.urn}/${operation.kind}`;
        const where = `${this.where}, ${operation.kind} ${operation.name} (${shortUrn(operation.urn)})`;
        const current: CurrentOperation = {
            operation,
            where,
            process: this.process,
            hazard: this.healing ? undefined : this.hazardOf(key, operation.tokened),
            requests: 0,
            runaway: false,
        };
        const startedAt = this.time.now;
        this.log(
            `-- ${where}${current.hazard ? ` (hazard: ${current.hazard.kind} ${current.hazard.when} request ${current.hazard.nth})` : ""}`,
        );
        let outcome: Outcome<T>;
        try {
            outcome = { ok: true, value: await operationContext.run(current, work) };
        } catch (error) {
            outcome = { ok: false, error };
        }
        if (current.process.dead) outcome = { ok: false, killed: true };
        if (operation.kind === "delete" && !outcome.ok) this.checker.deleteUnsure(operation.name);
        const endedAt = this.time.now;
        this.log(
            `   ${where}: ${describeOutcome(outcome)} (${current.requests} requests, ${((endedAt - startedAt) / 1000).toFixed(1)} s)`,
        );
        const limit = timeoutOf(operation) + DEADLINE_SLACK_MS;
        this.checker.check(
            "deadline",
            endedAt - startedAt <= limit,
            () => `ran ${endedAt - startedAt} ms, past its timeout of ${timeoutOf(operation)} ms`,
            where,
        );
        const interruptedAt = current.process.interruptedAt;
        if (interruptedAt !== undefined && !current.process.dead)
            this.checker.check(
                "deadline",
                endedAt - interruptedAt <= INTERRUPT_SLACK_MS,
                () => `ended ${endedAt - interruptedAt} ms after Ctrl-C`,
                where,
            );
        if (!outcome.ok && "error" in outcome)
            for (const problem of errorProblems(outcome.error, operation.name, SECRETS))
                this.violate("errors", problem, where);
        this.counts.checks++;
        return outcome;
    }

    stopped(): boolean {
        return this.process.controller.signal.aborted;
    }

    unencodable(operation: Operation, what: string, error: unknown): void {
        this.violate(
            "errors",
            `${operation.kind} ${operation.name}: the SDK cannot send its ${what} to the engine: ${String(error)}`,
        );
    }

    /**
     * The hazard of one operation, from the seed and the operation's place in the plan. A process is
     * killed only under operations of resources with a createToken: without one, a killed create's
     * resource cannot be told from a new one where the API neither lists a create in progress nor
     * refuses a second resource with its key (the README's reason for createToken); a Ctrl-C instead.
     */
    private hazardOf(key: string, tokened: boolean): Hazard | undefined {
        const { interruptProbability, killProbability } = this.plan.settings;
        const random = seededRandom(hashSeed("hazard", this.options.dialect, this.options.seed, key));
        const roll = random();
        if (roll >= interruptProbability + killProbability) return undefined;
        return {
            kind: roll < interruptProbability || !tokened ? "ctrl-c" : "kill",
            nth: 1 + Math.floor(random() * 6),
            when: random() < 0.5 ? "before" : "after",
        };
    }

    /** Runs a command's work on virtual time; undefined when it hung or ran away in real time. */
    private async drive<T>(work: Promise<T>): Promise<T | undefined> {
        const driven = await this.time.drive(work, { realLimitMs: COMMAND_REAL_LIMIT_MS });
        if (driven.settled) {
            if (driven.ok) return driven.value;
            throw driven.error;
        }
        this.violate("hang", `the command never ended (${driven.reason})`);
        return undefined;
    }

    private violate(invariant: InvariantName, detail: string, where = this.where): void {
        this.violations.push({ invariant, where, detail });
        this.log(`!! VIOLATION ${invariant} (${where}): ${detail}`);
    }

    private log(line: string): void {
        this.trace.push(line);
        this.options.onTrace?.(line);
    }

    private at(): string {
        return `+${((this.time.now - this.startedAt) / 1000).toFixed(3)}s`;
    }

    private describeServer(): string {
        const server = this.server as ChaosServer;
        const records = server.server
            .resources()
            .map(
                (record) =>
                    `${server.idOf(record)}=${String(server.fixture.nameOf(record))}(${String(server.fixture.sizeOf(record))})`,
            );
        return records.join(", ") || "nothing";
    }

    private describeState(): string {
        const entries = this.engine.entries().map((entry) => {
            const outputs = entry.outputs as {
                resourceId?: string;
                tainted?: boolean;
                operation?: unknown;
                keyHeldBy?: string;
            };
            const flags = [
                outputs.resourceId ? `id ${outputs.resourceId}` : "no id",
                outputs.keyHeldBy ? `key held by ${outputs.keyHeldBy}` : "",
                outputs.tainted ? "tainted" : "",
                outputs.operation ? "operation" : "",
                entry.initErrors.length ? "init errors" : "",
                this.engine.condemned.includes(entry) ? "pending delete" : "",
            ].filter(Boolean);
            return `${shortUrn(entry.urn)}=${entry.id} [${flags.join(" ")}]`;
        });
        const pending = this.engine.pendingCreates.map(
            (create) => `pending create ${shortUrn(create.urn)}=${create.name}`,
        );
        return [...entries, ...pending].join(", ") || "nothing";
    }
}

/** The raw inputs of a resource as the program passes them: the fixture's widget and the spec's settings. */
function argsOf(server: ChaosServer, resource: ResourceSpec): Record<string, unknown> {
    return {
        ...server.fixture.args(server.server.url, resource.name, resource.size),
        adopt: resource.adopt,
        untaint: resource.untaint,
        ...(resource.createToken ? { createToken: resource.createToken } : {}),
        ...(resource.timeouts ? { timeouts: resource.timeouts } : {}),
    };
}

/** How long an operation may take: its `timeouts`, or the provider's defaults. */
function timeoutOf(operation: Operation): number {
    const key = operation.kind;
    const value = (operation.timeouts as Record<string, string> | undefined)?.[key];
    const parsed = value === undefined ? undefined : parseDuration(value);
    if (typeof parsed === "number") return parsed;
    return key === "read" ? DEFAULT_READ_TIMEOUT_MS : DEFAULT_TIMEOUT_MS;
}

function describeFault(fault: Fault): string {
    if (fault.kind === "throttle") return `throttle (${fault.hint} ${fault.seconds} s)`;
    if (fault.kind === "server-error") return `server-error ${fault.status}`;
    if (fault.kind === "slow") return `slow ${fault.ms} ms`;
    return fault.kind;
}
