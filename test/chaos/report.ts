// Counts of chaos runs, summed and printed the same way by the CI suite and the soak.

import { timerSleep, timerTimeout } from "../../provider/shared/time";
import type { RunCounts, RunReport } from "./chaosRun";
import { FAULT_KINDS } from "./faults";
import { probeTimerOverflow } from "./virtualTime";

let overflow: Promise<boolean> | undefined;

/** Whether the production timers overflow beyond Node's largest delay (probed once per process). */
export function probeOverflow(): Promise<boolean> {
    overflow ??= probeTimerOverflow(timerSleep, timerTimeout).then((probe) => probe.sleep || probe.timeout);
    return overflow;
}

export function sumCounts(all: readonly RunCounts[]): RunCounts {
    const total: RunCounts = {
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
    for (const counts of all) {
        total.commands += counts.commands;
        total.operations += counts.operations;
        total.requests += counts.requests;
        total.interruptions += counts.interruptions;
        total.patienceCancels += counts.patienceCancels;
        total.invariantChecks += counts.invariantChecks;
        total.healingUps += counts.healingUps;
        total.virtualMs += counts.virtualMs;
        total.jumps += counts.jumps;
        for (const [kind, count] of Object.entries(counts.faults)) {
            const key = kind as keyof RunCounts["faults"];
            total.faults[key] = (total.faults[key] ?? 0) + (count ?? 0);
        }
    }
    return total;
}

/** One line, or (`detailed`) a paragraph with every fault kind. */
export function formatCounts(counts: RunCounts, detailed = false): string {
    const faults = Object.values(counts.faults).reduce((sum, count) => sum + (count ?? 0), 0);
    const line =
        `${counts.commands} commands, ${counts.operations} operations, ${counts.requests} requests, ` +
        `${faults} faults, ${counts.interruptions} interruptions, ${counts.invariantChecks} invariant checks`;
    if (!detailed) return line;
    const byKind = FAULT_KINDS.map((kind) => `${kind} ${counts.faults[kind] ?? 0}`).join(", ");
    return (
        `${line}\n` +
        `faults by kind: ${byKind}\n` +
        `healing ups ${counts.healingUps}, users who gave up ${counts.patienceCancels}, ` +
        `virtual time ${(counts.virtualMs / 3_600_000).toFixed(1)} h in ${counts.jumps} jumps`
    );
}

/** Which seeds broke which invariant: one line per invariant, the seeds listed smallest first. */
export function violationsByInvariant(reports: readonly RunReport[]): string[] {
    const seeds = new Map<string, number[]>();
    for (const report of reports) {
        for (const invariant of new Set(report.violations.map((violation) => violation.invariant))) {
            seeds.set(invariant, [...(seeds.get(invariant) ?? []), report.seed]);
        }
    }
    return [...seeds]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([invariant, list]) => {
            const shown = list.slice(0, 20).join(" ");
            return `${invariant}: ${list.length} seeds (${shown}${list.length > 20 ? " ..." : ""})`;
        });
}
