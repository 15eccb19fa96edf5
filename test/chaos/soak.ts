// The chaos soak: many seeds of the chaos task API suite, or one seed replayed with its whole trace.
//
//   node -r ts-node/register/transpile-only test/chaos/soak.ts --seeds 1000 [--from 1]
//   node -r ts-node/register/transpile-only test/chaos/soak.ts --seed 123 [--quiet]
//   node -r ts-node/register/transpile-only test/chaos/soak.ts --seed 123 --shrink [--invariant 2] [--match zombie] [--out f.json]
//   node -r ts-node/register/transpile-only test/chaos/soak.ts --plan test/chaos/findings/<name>.json
//   ... --faults reset,dribble (only these kinds; "none" for none)
//
// --seed replays exactly one seed and prints every request, fault, operation and violation; --shrink
// turns the run into a script of the hazards it injected and drops entries, steps, resources and someone
// else's datastores while the same invariant still breaks, and writes the result as a finding for --plan
// (and for findings/, which the CI suite replays). Exits 1 when any invariant was broken.

import { readFileSync, writeFileSync } from "node:fs";
import type { RunCounts, RunReport } from "./chaosRun";
import { runSeed } from "./chaosRun";
import { FAULT_KINDS, type FaultKind } from "./faults";
import { INVARIANTS, type InvariantName } from "./invariants";
import type { Plan } from "./program";
import { formatCounts, probeOverflow, sumCounts, violationsByInvariant } from "./report";
import { shrink } from "./shrink";

interface Arguments {
    seeds: number;
    from: number;
    seed: number | undefined;
    plan: string | undefined;
    faults: Set<FaultKind> | undefined;
    shrink: boolean;
    out: string;
    quiet: boolean;
    invariant: InvariantName | undefined;
    match: RegExp | undefined;
}

function parseArguments(argv: readonly string[]): Arguments {
    const args: Arguments = {
        seeds: 100,
        from: 1,
        seed: undefined,
        plan: undefined,
        faults: undefined,
        shrink: false,
        out: "chaos-plan.json",
        quiet: false,
        invariant: undefined,
        match: undefined,
    };
    for (let i = 0; i < argv.length; i++) {
        const flag = argv[i];
        const value = () => {
            const next = argv[++i];
            if (next === undefined) throw new Error(`${flag} needs a value`);
            return next;
        };
        const number = () => {
            const parsed = Number(value());
            if (!Number.isSafeInteger(parsed) || parsed < 0) throw new Error(`${flag} needs a whole number`);
            return parsed;
        };
        if (flag === "--seeds") args.seeds = number();
        else if (flag === "--from") args.from = number();
        else if (flag === "--seed") args.seed = number();
        else if (flag === "--plan") args.plan = value();
        else if (flag === "--faults") {
            const text = value();
            const kinds = text === "none" ? [] : text.split(",");
            const unknown = kinds.filter((kind) => !(FAULT_KINDS as readonly string[]).includes(kind));
            if (unknown.length > 0)
                throw new Error(`unknown fault kinds ${unknown.join(", ")}; known: ${FAULT_KINDS.join(", ")}`);
            args.faults = new Set(kinds as FaultKind[]);
        } else if (flag === "--shrink") args.shrink = true;
        else if (flag === "--out") args.out = value();
        else if (flag === "--quiet") args.quiet = true;
        else if (flag === "--match") args.match = new RegExp(value());
        else if (flag === "--invariant") {
            const text = value();
            const known = INVARIANTS.find((name) => name === text || name.startsWith(`${text} `));
            if (!known) throw new Error(`unknown invariant ${text}; known: ${INVARIANTS.join(", ")}`);
            args.invariant = known;
        } else throw new Error(`unknown argument ${flag}; see the comment at the top of test/chaos/soak.ts`);
    }
    return args;
}

async function main(): Promise<number> {
    const args = parseArguments(process.argv.slice(2));
    const overflowingTimers = await probeOverflow();
    if (args.seed !== undefined || args.plan !== undefined) {
        const plan = args.plan ? planIn(args.plan) : undefined;
        const seed = plan?.seed ?? (args.seed as number);
        const report = await runSeed({
            seed,
            ...(plan ? { plan } : {}),
            ...(args.faults ? { faults: args.faults } : {}),
            overflowingTimers,
            ...(args.quiet ? {} : { onTrace: (line: string) => console.log(line) }),
        });
        console.log(`\nseed ${seed}: ${formatCounts(report.counts)} in ${(report.realMs / 1000).toFixed(1)} s`);
        printViolations(report);
        if (args.shrink && report.violations.length > 0) {
            const smaller = await shrink(report, {
                overflowingTimers,
                log: (line) => console.log(line),
                ...(args.invariant ? { invariant: args.invariant } : {}),
                ...(args.match ? { match: args.match } : {}),
            });
            const finding = { title: "(say what happens)", invariant: smaller.invariant, plan: smaller.plan };
            writeFileSync(args.out, `${JSON.stringify(finding, null, 2)}\n`);
            console.log(`\nshrunk to ${smaller.plan.steps.length} steps: ${args.out}`);
            console.log(`replay: node -r ts-node/register/transpile-only test/chaos/soak.ts --plan ${args.out}`);
        }
        return report.violations.length > 0 ? 1 : 0;
    }
    const totals: RunCounts[] = [];
    const failing: RunReport[] = [];
    const startedAt = Date.now();
    for (let seed = args.from; seed < args.from + args.seeds; seed++) {
        const report = await runSeed({ seed, overflowingTimers, ...(args.faults ? { faults: args.faults } : {}) });
        totals.push(report.counts);
        const verdict = report.violations.length === 0 ? "ok" : `${report.violations.length} VIOLATIONS`;
        console.log(
            `seed ${seed}: ${verdict}; ${formatCounts(report.counts)} (${(report.realMs / 1000).toFixed(1)} s)`,
        );
        if (report.violations.length > 0) {
            failing.push(report);
            printViolations(report);
        }
    }
    console.log(
        `\n${args.seeds} seeds (${args.from}..${args.from + args.seeds - 1}) in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`,
    );
    console.log(formatCounts(sumCounts(totals), true));
    if (failing.length === 0) console.log("every invariant held");
    else console.log(`${failing.length} seeds broke invariants:\n  ${violationsByInvariant(failing).join("\n  ")}`);
    return failing.length > 0 ? 1 : 0;
}

/** The plan in a file: a plan, or a finding holding one (findings/). */
function planIn(file: string): Plan {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Plan | { plan: Plan };
    return "plan" in parsed ? parsed.plan : parsed;
}

function printViolations(report: RunReport): void {
    for (const violation of report.violations) {
        console.log(`  VIOLATION ${violation.invariant} (${violation.where}): ${violation.detail}`);
    }
    if (report.violations.length > 0) {
        console.log(`  replay: node -r ts-node/register/transpile-only test/chaos/soak.ts --seed ${report.seed}`);
    }
}

// Only as a command: loading the module (a test runner globbing the folder) starts nothing.
if (require.main === module) {
    main().then(
        (code) => process.exit(code),
        (error: unknown) => {
            console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
            process.exit(2);
        },
    );
}
