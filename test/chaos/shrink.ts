// Shrinks a failing chaos run: fewer fault kinds, steps, resources and hazards, as long as the same
// invariant still breaks. Greedy, one removal at a time; every try is a whole run, so it is bounded.

import { type RunReport, runSeed } from "./chaosRun";
import { FAULT_KINDS, type FaultKind } from "./faults";
import type { InvariantName } from "./invariants";
import type { Plan, Step } from "./program";

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

/** A smaller plan and fault set that still break the first violated invariant of `report`. */
export async function shrink(
    report: RunReport,
    options: ShrinkOptions,
): Promise<{ plan: Plan; faults: Set<FaultKind>; invariant: InvariantName }> {
    // The gravest broken invariant unless told: lower numbers are about data, 6 about messages.
    const invariant =
        options.invariant ??
        [...report.violations].map((violation) => violation.invariant).sort((a, b) => a.localeCompare(b))[0] ??
        "6 errors";
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
        return result.violations.some(
            (violation) => violation.invariant === invariant && (options.match?.test(violation.detail) ?? true),
        );
    };
    options.log(`shrinking seed ${report.seed} on invariant ${invariant}`);
    if (!(await fails(plan, faults))) {
        options.log("the run does not fail again with only the faults it injected; keeping every fault kind");
        faults = new Set(FAULT_KINDS);
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
    for (const spec of [...plan.foreign]) {
        const fewer = { ...plan, foreign: plan.foreign.filter((f) => f !== spec) };
        if (await fails(fewer, faults)) {
            plan = fewer;
            options.log(`  without someone else's ${spec.key.name}: still fails`);
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
