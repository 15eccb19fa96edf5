// Shrinks a failing chaos run: fewer fault kinds, steps, resources and hazards, as long as the same
// invariant still breaks. Greedy, one removal at a time; every try is a whole run, so it is bounded.

import { type RunReport, runSeed } from "./chaosRun";
import type { FaultKind } from "./faults";
import type { InvariantName } from "./invariants";
import type { Plan, Step } from "./program";

export interface ShrinkOptions {
    readonly overflowingTimers: boolean;
    readonly log: (line: string) => void;
    /** Runs tried at most. */
    readonly budget?: number;
}

/** A smaller plan and fault set that still break the first violated invariant of `report`. */
export async function shrink(
    report: RunReport,
    options: ShrinkOptions,
): Promise<{ plan: Plan; faults: Set<FaultKind>; invariant: InvariantName }> {
    const invariant = (report.violations[0] as { invariant: InvariantName }).invariant;
    let budget = options.budget ?? 150;
    let plan = report.plan;
    let faults = new Set(Object.keys(report.counts.faults) as FaultKind[]);
    const fails = async (candidate: Plan, kinds: Set<FaultKind>): Promise<boolean> => {
        if (budget-- <= 0) return false;
        const result = await runSeed({
            seed: candidate.seed,
            plan: candidate,
            faults: kinds,
            overflowingTimers: options.overflowingTimers,
        });
        return result.violations.some((violation) => violation.invariant === invariant);
    };
    options.log(`shrinking seed ${report.seed} on invariant ${invariant}`);
    if (!(await fails(plan, faults))) {
        options.log("the run does not fail again with only the faults it injected; keeping every fault kind");
        faults = new Set(report.counts.faults ? (Object.keys(report.counts.faults) as FaultKind[]) : []);
        return { plan, faults, invariant };
    }
    for (const kind of [...faults]) {
        const fewer = new Set([...faults].filter((k) => k !== kind));
        if (await fails(plan, fewer)) {
            faults = fewer;
            options.log(`  without ${kind}: still fails`);
        }
    }
    for (const step of [...plan.steps]) {
        if (plan.steps.length <= 1) break;
        const fewer = { ...plan, steps: plan.steps.filter((s) => s !== step) };
        if (await fails(fewer, faults)) {
            plan = fewer;
            options.log(`  without step ${step.id} (${step.kind}): still fails`);
        }
    }
    for (const step of [...plan.steps]) {
        if (step.kind !== "up") continue;
        for (const resource of step.program) {
            const current = plan.steps.find((s) => s.id === step.id);
            if (current?.kind !== "up" || current.program.length <= 1) break;
            const smaller: Step = { ...current, program: current.program.filter((r) => r.urn !== resource.urn) };
            const candidate = { ...plan, steps: plan.steps.map((s) => (s.id === step.id ? smaller : s)) };
            if (await fails(candidate, faults)) {
                plan = candidate;
                options.log(`  without ${resource.key.name} in step ${step.id}: still fails`);
            }
        }
    }
    for (const hazard of ["interruptProbability", "taskFailureProbability"] as const) {
        if (plan.settings[hazard] === 0) continue;
        const calmer = { ...plan, settings: { ...plan.settings, [hazard]: 0 } };
        if (await fails(calmer, faults)) {
            plan = calmer;
            options.log(`  with ${hazard} 0: still fails`);
        }
    }
    return { plan, faults, invariant };
}
