// Shrinks a failing chaos run, as long as the same invariant still breaks: first the run becomes a
// script (every fault, task failure and interruption it injected, pinned to its request), then script
// entries, steps, resources and someone else's datastores go one at a time. Greedy and bounded: every
// try is a whole run. What is left is a plan a finding file can hold (see findings.ts).

import { type RunReport, runSeed } from "./chaosRun";
import { FAULT_KINDS } from "./faults";
import type { InvariantName } from "./invariants";
import type { Plan, Script, Step } from "./program";

export interface ShrinkOptions {
    readonly overflowingTimers: boolean;
    readonly log: (line: string) => void;
    /** Runs tried at most. */
    readonly budget?: number;
    /** The invariant to keep broken (default: the gravest one broken). */
    readonly invariant?: InvariantName;
    /** Keep only violations whose detail matches this too. */
    readonly match?: RegExp;
}

/** A smaller plan that still breaks the chosen invariant of `report`, scripted when the script reproduces it. */
export async function shrink(
    report: RunReport,
    options: ShrinkOptions,
): Promise<{ plan: Plan; invariant: InvariantName }> {
    // The gravest broken invariant unless told: lower numbers are about data, 6 about messages.
    const invariant =
        options.invariant ??
        [...report.violations].map((violation) => violation.invariant).sort((a, b) => a.localeCompare(b))[0] ??
        "6 errors";
    let budget = options.budget ?? 200;
    const all = new Set(FAULT_KINDS);
    const fails = async (candidate: Plan): Promise<boolean> => {
        if (budget-- <= 0) return false;
        const result = await runSeed({
            seed: candidate.seed,
            plan: candidate,
            faults: all,
            overflowingTimers: options.overflowingTimers,
        });
        return result.violations.some(
            (violation) => violation.invariant === invariant && (options.match?.test(violation.detail) ?? true),
        );
    };
    const attempt = async (candidate: Plan, what: string): Promise<boolean> => {
        if (!(await fails(candidate))) return false;
        plan = candidate;
        options.log(`  ${what}: still fails`);
        return true;
    };
    options.log(
        `shrinking seed ${report.seed} on invariant ${invariant}${options.match ? ` matching ${options.match}` : ""}`,
    );
    let plan: Plan = report.plan;
    const scripted = { ...report.plan, script: report.script };
    if (await fails(scripted)) {
        plan = scripted;
        options.log(
            `  scripted: ${report.script.faults.length} faults, ${report.script.taskFailures.length} task failures, ${report.script.interrupts.length} interruptions`,
        );
        await dropScriptEntries();
    } else {
        options.log("  the script of the run does not reproduce it; shrinking the random plan");
    }
    for (const step of [...plan.steps]) {
        if (plan.steps.length <= 1) break;
        await attempt(
            { ...plan, steps: plan.steps.filter((s) => s !== step) },
            `without step ${step.id} (${step.kind})`,
        );
    }
    for (const step of [...plan.steps]) {
        if (step.kind !== "up") continue;
        for (const resource of step.program) {
            const current = plan.steps.find((s) => s.id === step.id);
            if (current?.kind !== "up" || current.program.length <= 1) break;
            const smaller: Step = { ...current, program: current.program.filter((r) => r.urn !== resource.urn) };
            await attempt(
                { ...plan, steps: plan.steps.map((s) => (s.id === step.id ? smaller : s)) },
                `without ${resource.key.name} in step ${step.id}`,
            );
        }
    }
    for (const spec of [...plan.foreign]) {
        await attempt(
            { ...plan, foreign: plan.foreign.filter((f) => f !== spec) },
            `without someone else's ${spec.key.name}`,
        );
    }
    // Entries of operations that no longer run go now.
    if (plan.script) await dropScriptEntries();
    if (!plan.script) {
        for (const hazard of ["interruptProbability", "taskFailureProbability"] as const) {
            if (plan.settings[hazard] === 0) continue;
            await attempt({ ...plan, settings: { ...plan.settings, [hazard]: 0 } }, `with ${hazard} 0`);
        }
    }
    return { plan, invariant };

    async function dropScriptEntries(): Promise<void> {
        const without = <K extends keyof Script>(key: K, entry: Script[K][number]): Plan => {
            const script = plan.script as Script;
            const kept = (script[key] as Script[K][number][]).filter((e) => e !== entry);
            return { ...plan, script: { ...script, [key]: kept } };
        };
        for (const key of ["faults", "taskFailures", "interrupts"] as const) {
            for (const entry of [...(plan.script as Script)[key]]) {
                const label = "fault" in entry ? entry.fault : key === "taskFailures" ? "task failure" : "interruption";
                await attempt(without(key, entry), `without the ${label} at ${entry.op} ${entry.route} #${entry.nth}`);
            }
        }
    }
}
