// Prints what a run planned or did, in the shape of Pulumi's own preview and update output.

import type { Step, StepKind } from "./engine";

const SYMBOL: Record<StepKind, string> = {
    create: "+",
    update: "~",
    replace: "+-",
    delete: "-",
    same: " ",
    read: ">",
    refresh: "~",
    forget: "-",
};

const HEADING = {
    up: "Updating",
    preview: "Previewing update",
    refresh: "Refreshing",
    destroy: "Destroying",
} as const;

/** The run's steps as a table, then a summary line and any errors. */
export function formatPlan(
    operation: keyof typeof HEADING,
    stack: string,
    steps: readonly Step[],
    errors: readonly Error[],
): string {
    const typeWidth = Math.max(4, ...steps.map((s) => s.type.length));
    const nameWidth = Math.max(4, ...steps.map((s) => s.name.length));
    const rows = steps.map((step) => {
        const detail = step.detail ? `  [${step.detail}]` : "";
        return ` ${SYMBOL[step.kind].padEnd(3)}${step.type.padEnd(typeWidth + 2)}${step.name.padEnd(nameWidth + 2)}${step.kind}${detail}`;
    });
    const counts = new Map<StepKind, number>();
    for (const step of steps) counts.set(step.kind, (counts.get(step.kind) ?? 0) + 1);
    const summary = [...counts].map(([kind, count]) => `${SYMBOL[kind].trim() || "="} ${count} ${kind}`).join(", ");
    const failure = errors.map((error) => `\n  error: ${error.message}`).join("");
    return [
        `${HEADING[operation]} (${stack}):`,
        `    ${"Type".padEnd(typeWidth + 2)}${"Name".padEnd(nameWidth + 2)}Plan`,
        ...rows,
        "",
        `Resources: ${summary || "no changes"}${failure}`,
    ].join("\n");
}
