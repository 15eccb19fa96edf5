// One run of the multi-writer suite: sets up the file its seed's scenario names (plain or bind-mounted,
// in a directory all writers may write or only root), starts the writers as their uids with a TMPDIR of
// their own, hits the lock-using ones with SIGKILL (then restarts them) and SIGSTOP (then SIGCONT) on
// schedule while taking snapshots of the file without the lock, stops everyone, runs one more lock-using
// writer (the recovery run), and checks the file against every writer's log (invariants.ts).
// Needs root (other uids, bind mounts).

import { type ChildProcess, spawn } from "node:child_process";
import {
    chmodSync,
    chownSync,
    closeSync,
    existsSync,
    mkdirSync,
    mkdtempSync,
    openSync,
    readFileSync,
    rmSync,
    writeFileSync,
    writeSync,
} from "node:fs";
import { basename, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import * as ts from "typescript";
import { REPO_ROOT } from "../../support/projects";
import { bindMount } from "../../support/system";
import { type FileView, isWhole, viewOf } from "./fileView";
import type { ForeignWriterConfig } from "./foreignWriter";
import { type Counts, checkFinalFile, type ForeignWriterLog, type LockWriterLog } from "./invariants";
import { foreignLine } from "./lines";
import type { LockWriterConfig } from "./lockWriter";
import {
    describeScenario,
    type Fault,
    type ForeignWriterPlan,
    inPlaceRewriters,
    inPlaceWriters,
    type LockWriterPlan,
    type Scenario,
    scenarioFor,
} from "./scenario";

/** The build the writers use unless told otherwise. */
export const DEFAULT_DIST = join(REPO_ROOT, "dist");

export interface RunOptions {
    readonly seed: number;
    readonly durationMs: number;
    /** The package's build output the lock-using writers load (today's code, or a fix under test). */
    readonly dist?: string;
    /** Keep the run's directory (logs, the file) for a post-mortem. */
    readonly keep?: boolean;
    /** A scenario of its own instead of the seed's (a finding shrunk to what it needs). */
    readonly scenario?: Scenario;
}

/** Faults and snapshots, as they happened. */
export interface FaultCounts {
    kills: number;
    stops: number;
    longStops: number;
    longestStopMs: number;
    skipped: number;
    snapshots: number;
    /** Torn snapshots where some write was in place (documented as not atomic for readers without the lock). */
    tornInPlace: number;
    /** Torn snapshots where every write renames: a violation. */
    tornStrict: number;
    /** Snapshots holding a NUL byte (an in-place write's journal, seen without the lock). */
    withNul: number;
    wholeBeforeRecovery: boolean;
}

export interface RunReport {
    readonly scenario: Scenario;
    readonly counts: Counts;
    readonly faults: FaultCounts;
    readonly violations: readonly string[];
    /** What to print: the scenario, the writers, the counts. */
    readonly summary: readonly string[];
    /** Where the logs are when kept. */
    readonly directory: string | undefined;
}

/**
 * How long a writer asked to stop may take before it counts as hung: a liveness bound, not a speed one
 * (it only finishes its current operations, each bounded by the 4 s lock timeout).
 */
const STOP_GRACE_MS = 60_000;
const SNAPSHOT_EVERY_MS = 15;
const WORKERS = ["lines.ts", "lockWriter.ts", "foreignWriter.ts"];

interface Proc {
    readonly label: string;
    readonly kind: "lock" | "append" | "rewrite";
    readonly slot: number;
    readonly gen: number;
    readonly uid: number;
    readonly tmp: string;
    readonly log: string;
    readonly child: ChildProcess;
    readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
    stderr: string;
    exited: boolean;
    stopped: boolean;
    killedByUs: boolean;
}

/** Runs the scenario of `options.seed` and checks its invariants; never throws for a violation. */
export async function runSeed(options: RunOptions): Promise<RunReport> {
    const dist = options.dist ?? DEFAULT_DIST;
    if (!existsSync(join(dist, "hosts", "io", "hostsFileStore.js"))) {
        throw new Error(`${dist} has no hosts/io/hostsFileStore.js: build the package first (npm run build)`);
    }
    const scenario = options.scenario ?? scenarioFor(options.seed, options.durationMs);
    const root = mkdtempSync(join("/tmp", `pulumi-lifecycle-multiwriter-${options.seed}-`));
    chmodSync(root, 0o755);
    let unmount: (() => void) | undefined;
    const procs: Proc[] = [];
    let keepDirectory = options.keep === true;
    try {
        const bin = directory(root, "bin", 0, 0o755);
        transpileWorkers(bin);
        const logs = directory(root, "logs", 0, 0o755);
        const etc = directory(root, "etc", 0, scenario.directory === "writable" ? 0o777 : 0o755);
        const temps = directory(root, "tmp", 0, 0o755);
        const file = join(etc, "hosts");
        if (scenario.mount === "bind") {
            const source = join(directory(root, "source", 0, 0o755), "hosts");
            writeFileSync(source, scenario.base, "latin1");
            chmodSync(source, 0o666);
            writeFileSync(file, "");
            chmodSync(file, 0o666);
            unmount = bindMount(source, file);
        } else {
            writeFileSync(file, scenario.base, "latin1");
            chmodSync(file, 0o666);
        }

        // What the harness did when, on the writers' clock (monotonic ns), for post-mortems of kept runs.
        const events = openSync(join(logs, "harness.log"), "a", 0o644);
        const event = (what: string) => writeSync(events, `${process.hrtime.bigint()} ${what}\n`);
        const start = (
            kind: Proc["kind"],
            plan: { slot: number; uid: number },
            gen: number,
            config: LockWriterConfig | ForeignWriterConfig,
        ): Proc => {
            const label = kind === "lock" ? `w${plan.slot}.${gen}` : `${kind[0]}${plan.slot}`;
            const tmp = join(temps, kind === "lock" ? `w${plan.slot}` : label);
            if (!existsSync(tmp)) directory(temps, basename(tmp), plan.uid, 0o700);
            const log = join(logs, `${label}.log`);
            const fd = openSync(log, "a", 0o644);
            const script = join(bin, kind === "lock" ? "lockWriter.js" : "foreignWriter.js");
            const child = spawn(process.execPath, [script, JSON.stringify(config)], {
                cwd: root,
                uid: plan.uid,
                gid: plan.uid,
                env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TMPDIR: tmp },
                stdio: ["pipe", "ignore", "pipe", fd],
            });
            closeSync(fd);
            event(`start ${label} pid ${child.pid} uid ${plan.uid}`);
            const proc: Proc = {
                label,
                kind,
                slot: plan.slot,
                gen,
                uid: plan.uid,
                tmp,
                log,
                child,
                exit: new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal }))),
                stderr: "",
                exited: false,
                stopped: false,
                killedByUs: false,
            };
            child.stdin?.on("error", () => undefined);
            child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
                proc.stderr = (proc.stderr + chunk).slice(-4000);
            });
            void proc.exit.then(() => {
                proc.exited = true;
            });
            procs.push(proc);
            return proc;
        };
        const lockConfig = (plan: LockWriterPlan, gen: number, once = false): LockWriterConfig => ({
            dist,
            file,
            slot: plan.slot,
            gen,
            seed: mix(scenario.seed, plan.slot, gen),
            lanes: plan.lanes,
            lock: scenario.lock,
            once,
        });
        const foreignConfig = (plan: ForeignWriterPlan): ForeignWriterConfig => ({
            dist,
            kind: plan.kind,
            file,
            slot: plan.slot,
            seed: mix(scenario.seed, 100 + plan.slot, plan.kind === "append" ? 1 : 2),
        });

        const faults: FaultCounts = {
            kills: 0,
            stops: 0,
            longStops: 0,
            longestStopMs: 0,
            skipped: 0,
            snapshots: 0,
            tornInPlace: 0,
            tornStrict: 0,
            withNul: 0,
            wholeBeforeRecovery: true,
        };
        const violations: string[] = [];
        const strictSnapshots = !inPlaceWriters(scenario) && !inPlaceRewriters(scenario);
        let snapshotChecks = 0;
        const snapshot = () => {
            const text = readFileSync(file, "latin1");
            faults.snapshots++;
            snapshotChecks++;
            const view = viewOf(text, scenario.base);
            if (isWhole(view) || appendInFlight(view)) return;
            if (text.includes("\0")) faults.withNul++;
            if (!strictSnapshots) {
                faults.tornInPlace++;
                return;
            }
            faults.tornStrict++;
            if (faults.tornStrict <= 3) {
                violations.push(
                    `a reader without the lock saw a torn file where every write renames (base intact: ${view.baseIntact}; ` +
                        `torn lines: ${JSON.stringify(view.torn.slice(0, 3))}; unterminated: ${JSON.stringify(view.unterminated)})`,
                );
            }
        };

        // The run: writers, then faults on schedule, with snapshots throughout.
        const slots = scenario.writers.map((plan) => ({
            plan,
            gen: 0,
            proc: start("lock", plan, 0, lockConfig(plan, 0)),
        }));
        const foreign = scenario.foreign.map((plan) => start(plan.kind, plan, 0, foreignConfig(plan)));
        const began = Date.now();
        const snapshots = setInterval(snapshot, SNAPSHOT_EVERY_MS);
        let ending = false;
        const pending: Promise<void>[] = [];
        const apply = async (fault: Fault) => {
            const slot = slots[fault.slot];
            const proc = slot?.proc;
            if (!slot || !proc || proc.exited || proc.killedByUs || (fault.signal === "SIGSTOP" && proc.stopped)) {
                faults.skipped++;
                return;
            }
            if (fault.signal === "SIGKILL") {
                faults.kills++;
                proc.killedByUs = true;
                event(`SIGKILL ${proc.label}`);
                proc.child.kill("SIGKILL");
                await proc.exit;
                if (!ending) {
                    slot.gen++;
                    slot.proc = start("lock", slot.plan, slot.gen, lockConfig(slot.plan, slot.gen));
                }
                return;
            }
            faults.stops++;
            if (fault.pauseMs > scenario.lock.staleMs) faults.longStops++;
            faults.longestStopMs = Math.max(faults.longestStopMs, fault.pauseMs);
            proc.stopped = true;
            event(`SIGSTOP ${proc.label} for ${fault.pauseMs} ms`);
            proc.child.kill("SIGSTOP");
            await Promise.race([sleep(fault.pauseMs), proc.exit]);
            if (proc.stopped) event(`SIGCONT ${proc.label}`);
            resume(proc);
        };
        for (const fault of scenario.faults) {
            const wait = began + fault.atMs - Date.now();
            if (wait > 0) await sleep(wait);
            pending.push(apply(fault));
        }
        const rest = began + scenario.durationMs - Date.now();
        if (rest > 0) await sleep(rest);

        // Stop everyone: resume the stopped, let each finish its operations, and wait.
        ending = true;
        event("end: resume and stop everyone");
        for (const proc of procs) resume(proc);
        await Promise.all(pending);
        for (const proc of procs) resume(proc);
        const live = procs.filter((proc) => !proc.exited);
        for (const proc of live) proc.child.stdin?.end("stop\n");
        await Promise.all(
            live.map(async (proc) => {
                const outcome = await Promise.race([
                    proc.exit,
                    sleep(STOP_GRACE_MS, undefined, { ref: false }).then(() => undefined),
                ]);
                if (outcome === undefined) {
                    violations.push(
                        `${proc.label} (uid ${proc.uid}) did not stop within ${STOP_GRACE_MS} ms of being asked`,
                    );
                    proc.killedByUs = true;
                    proc.child.kill("SIGKILL");
                    await proc.exit;
                }
            }),
        );
        clearInterval(snapshots);
        snapshot();
        faults.wholeBeforeRecovery = isWhole(viewOf(readFileSync(file, "latin1"), scenario.base));

        // One more lock-using writer, with a TMPDIR of its own, must find the file whole and write.
        const recoveryPlan: LockWriterPlan = { slot: scenario.writers.length, uid: scenario.recoveryUid, lanes: 1 };
        const recovery = start("lock", recoveryPlan, 0, lockConfig(recoveryPlan, 0, true));
        const recovered = await Promise.race([
            recovery.exit,
            sleep(STOP_GRACE_MS, undefined, { ref: false }).then(() => undefined),
        ]);
        if (recovered === undefined) {
            recovery.killedByUs = true;
            recovery.child.kill("SIGKILL");
            await recovery.exit;
        }
        const recoveryLog = readFileSync(recovery.log, "utf8");
        if (!/^a\+ 0 /m.test(recoveryLog)) {
            violations.push(
                `the recovery run (uid ${recovery.uid}) did not acknowledge its entry: ${JSON.stringify(recoveryLog.trim())} ${recovery.stderr.trim()}`,
            );
        }
        const finalText = readFileSync(file, "latin1");
        closeSync(events);

        for (const proc of procs) {
            const { code, signal } = await proc.exit;
            const expected = proc.killedByUs ? signal === "SIGKILL" : code === 0;
            if (!expected) {
                violations.push(`${proc.label} (uid ${proc.uid}) exited with ${code ?? signal}: ${proc.stderr.trim()}`);
            }
        }
        const lockLogs: LockWriterLog[] = procs
            .filter((proc) => proc.kind === "lock")
            .map((proc) => ({ slot: proc.slot, gen: proc.gen, lines: readLog(proc.log) }));
        const foreignLogs: ForeignWriterLog[] = foreign.map((proc) => ({
            slot: proc.slot,
            kind: proc.kind as "append" | "rewrite",
            lines: readLog(proc.log),
        }));
        const verdict = checkFinalFile(finalText, scenario.base, lockLogs, foreignLogs);
        const { creates, deletes } = verdict.counts.acknowledged;
        verdict.counts.checks++;
        if (creates + deletes <= 1) {
            const failures = [...verdict.counts.failed].map(([why, n]) => `${why} ${n}`).join(", ");
            violations.push(
                `the writers had no operation acknowledged, so the run proves nothing (failures: ${failures || "none"})`,
            );
        }
        verdict.counts.checks += snapshotChecks + 1;
        const all = [...violations, ...verdict.violations];
        if (all.length > 0) keepDirectory ||= process.env.MULTI_WRITER_KEEP === "1";
        const summary = summarize(scenario, procs, verdict.counts, faults, all, strictSnapshots);
        return {
            scenario,
            counts: verdict.counts,
            faults,
            violations: all,
            summary,
            directory: keepDirectory ? root : undefined,
        };
    } finally {
        for (const proc of procs) {
            if (!proc.exited) {
                proc.child.kill("SIGKILL");
                await proc.exit;
            }
        }
        unmount?.();
        if (!keepDirectory) rmSync(root, { recursive: true, force: true });
    }
}

/** The command that runs `seed` again alone, with the same schedule. */
export function replayCommand(seed: number, durationMs: number, dist = DEFAULT_DIST): string {
    const build = dist === DEFAULT_DIST ? "npm run build && " : "";
    const other = dist === DEFAULT_DIST ? "" : ` --dist ${dist}`;
    return `${build}node -r ts-node/register/transpile-only test/hosts/faults/soak.ts --seed ${seed} --duration ${durationMs}${other}`;
}

/** SIGCONT for a process this run stopped. */
function resume(proc: Proc): void {
    if (!proc.stopped) return;
    proc.stopped = false;
    if (!proc.exited) proc.child.kill("SIGCONT");
}

/** A snapshot whose only flaw is a foreign `echo >>` caught half-way (the kernel's doing, not ours). */
function appendInFlight(view: FileView): boolean {
    const last = view.unterminated;
    if (!view.baseIntact || view.baseRepeated.length > 0 || last === undefined) return false;
    const onlyLastTorn = view.torn.length === 0 || (view.torn.length === 1 && view.torn[0] === last);
    return onlyLastTorn && appendPrefix(last);
}

/** Whether some foreign append line starts with `text`. */
function appendPrefix(text: string): boolean {
    const match = /^10\.250\.(\d+)\.(\d+)/.exec(text);
    if (!match) return "10.250.".startsWith(text) || text === "";
    const slot = Number(match[1]);
    // Its counter n has n % 256 equal to the last octet (or a prefix of it; a few candidates suffice).
    for (let n = 0; n < 20_000; n++) if (foreignLine("append", slot, n).startsWith(text)) return true;
    return false;
}

function readLog(path: string): string[] {
    return readFileSync(path, "utf8").split("\n").filter(Boolean);
}

function directory(parent: string, name: string, uid: number, mode: number): string {
    const path = join(parent, name);
    mkdirSync(path);
    chownSync(path, uid, uid);
    chmodSync(path, mode);
    return path;
}

/** The writer scripts as plain JavaScript, so every start costs a node start and nothing more. */
function transpileWorkers(bin: string): void {
    for (const name of WORKERS) {
        const source = readFileSync(join(__dirname, name), "utf8");
        const { outputText } = ts.transpileModule(source, {
            compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
            fileName: name,
        });
        writeFileSync(join(bin, name.replace(/\.ts$/, ".js")), outputText, { mode: 0o644 });
    }
}

/** A seed for one writer process, from the run's seed. */
function mix(seed: number, slot: number, gen: number): number {
    return (Math.imul(seed ^ 0x9e3779b9, 31 + slot) + Math.imul(gen + 1, 0x85ebca6b)) >>> 0;
}

function summarize(
    scenario: Scenario,
    procs: readonly Proc[],
    counts: Counts,
    faults: FaultCounts,
    violations: readonly string[],
    strictSnapshots: boolean,
): string[] {
    const uidName = (uid: number) => (uid === 0 ? "root" : uid === 65534 ? "nobody (65534)" : `uid ${uid}`);
    const writers = scenario.writers.map((plan) => {
        const processes = procs.filter((proc) => proc.kind === "lock" && proc.slot === plan.slot).length;
        return `w${plan.slot} ${uidName(plan.uid)} TMPDIR tmp/w${plan.slot}, ${plan.lanes} lane(s), ${processes} process(es)`;
    });
    const foreign = scenario.foreign.map(
        (plan) => `${plan.kind === "append" ? "a" : "r"}${plan.slot} ${plan.kind} ${uidName(plan.uid)}`,
    );
    const failed = [...counts.failed].map(([why, n]) => `${why} ${n}`).join(", ");
    const failedTotal = [...counts.failed.values()].reduce((a, b) => a + b, 0);
    return [
        `seed ${scenario.seed}: ${describeScenario(scenario)}`,
        `  lock-using writers: ${writers.join("; ")}; recovery run ${uidName(scenario.recoveryUid)} TMPDIR tmp/w${scenario.writers.length}`,
        `  foreign writers: ${foreign.length > 0 ? foreign.join("; ") : "none"}`,
        `  operations acknowledged: ${counts.acknowledged.creates} creates, ${counts.acknowledged.deletes} deletes; ` +
            `failed: ${failedTotal}${failedTotal > 0 ? ` (${failed})` : ""}; cut by a kill: ${counts.cutByKill}; ` +
            `failed creates found in the file: ${counts.failedCreatesInFile}`,
        ...[...counts.failureMessages].map(([why, message]) => `    first ${why}: ${message.replace(/\s+/g, " ")}`),
        `  faults: ${faults.kills} SIGKILL, ${faults.stops} SIGSTOP (${faults.longStops} longer than the stale time, ` +
            `longest ${faults.longestStopMs} ms), ${faults.skipped} skipped (writer not running or already stopped)`,
        `  foreign lines: ${counts.appended} appended, ${counts.appendedLost} lost; rewrites ${counts.rewrites.rename} by rename, ` +
            `${counts.rewrites.inPlace} in place, ${counts.rewriteLinesAdded} lines added, ${counts.rewriteLinesLost} lost`,
        `  snapshots without the lock: ${faults.snapshots}, ` +
            (strictSnapshots
                ? `every write renames: ${faults.tornStrict} torn (must be 0)`
                : `${faults.tornInPlace} torn while in-place writes run (documented: not atomic for readers without ` +
                  `the lock), ${faults.withNul} of them with NUL bytes`) +
            `; file whole before the recovery run: ${faults.wholeBeforeRecovery ? "yes" : "no"}`,
        `  invariant checks: ${counts.checks} (${counts.excused} findings excused as a foreign rewrite's own doing); ` +
            `violations: ${violations.length}${violations.length > 0 ? ` (${kindsOf(violations)})` : ""}`,
    ];
}

/** Violations counted by kind (entries and numbers left out). */
export function kindsOf(violations: readonly string[]): string {
    const kinds = new Map<string, number>();
    for (const violation of violations) {
        const kind = violation
            .replace(/entry w\d+-\d+-\d+( \(writer \d+, process \d+\))?:/, "entry")
            .replace(/ \((?:uid|writer|expected|base intact)[^)]*\)/g, "")
            .replace(/\d+ times/, "N times")
            .replace(/: .*$/, "")
            .trim();
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    return [...kinds].map(([kind, n]) => `${n}x ${kind}`).join("; ");
}
