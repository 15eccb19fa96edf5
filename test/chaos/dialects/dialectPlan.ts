// Randomized programs of tasks.AsyncResource for the dialect chaos suite: per seed and dialect, the
// server's variant, the hazards' rates, someone else's widgets made before the run, and a sequence of
// steps: ups of an evolving program (creates, body updates, natural-key replacements, removals, untaint,
// adopt, create tokens and timeouts changing), refreshes, destroys, time passing at the server, and
// changes made outside Pulumi (drift, a deletion). A plan is plain data: printed, it says what a seed does.

import { seededRandom } from "../../../provider/shared/random";
import type { OperationTimeouts } from "../../../provider/tasks/timeoutsSchema";
import { hashSeed, pick } from "../faults";
import { drawVariant, type OperationOdds, type ServerVariant } from "./dialectServers";

/** One widget of a program. */
export interface ResourceSpec {
    /** Stable across steps (the engine's URN), while `name` may change (a replacement). */
    readonly urn: string;
    /** The natural key. */
    readonly name: string;
    readonly size: number;
    readonly adopt: boolean;
    readonly untaint: boolean;
    readonly createToken?: string;
    readonly timeouts?: OperationTimeouts;
}

export type Step =
    | { readonly id: number; readonly kind: "up"; readonly program: readonly ResourceSpec[] }
    | { readonly id: number; readonly kind: "refresh" }
    | { readonly id: number; readonly kind: "destroy" }
    /** Time passes: the server ends every operation still running (nobody else looks at them). */
    | { readonly id: number; readonly kind: "wait" }
    /** Another tool changes the size of one of the widgets (chosen by `pick` among those of ours). */
    | { readonly id: number; readonly kind: "drift"; readonly pick: number; readonly size: number }
    /** Another tool deletes one of the widgets. */
    | { readonly id: number; readonly kind: "outside-delete"; readonly pick: number };

/** How hostile a run is. */
export interface Settings {
    /** The share of requests the kit's randomFaults hits (every kind of fault). */
    readonly faultRate: number;
    /** The chance that an operation gets a Ctrl-C (the process's abort signal) mid-way. */
    readonly interruptProbability: number;
    /** The chance that an operation's provider process is killed mid-way (its answers never reach the engine). */
    readonly killProbability: number;
    /** How the server's operations end. */
    readonly odds: OperationOdds;
    /** The engine runs a command's steps at once (independent resources), not one after another. */
    readonly parallel: boolean;
    readonly pollInitialMs: number;
}

export interface Plan {
    readonly seed: number;
    readonly dialect: string;
    readonly settings: Settings;
    readonly variant: ServerVariant;
    /** Someone else's widgets, made before the run. */
    readonly foreign: readonly { readonly name: string; readonly size: number }[];
    readonly steps: readonly Step[];
}

/** The words URNs are made of; a URN's names are its word, then `<word>-2`, `<word>-3`, ... */
const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"] as const;
/** Someone else's widgets are named from these, so nothing of ours ever takes their names by chance. */
const FOREIGN_WORDS = ["xray", "yankee", "zulu"] as const;

const TIMEOUTS: readonly (OperationTimeouts | undefined)[] = [
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    { create: "20s" },
    { create: "1m", update: "1m", delete: "1m" },
    { update: "15s", delete: "15s" },
    { read: "10s" },
    { create: "2h", update: "2h", delete: "2h", read: "2h" },
];

export function urnOf(word: string): string {
    return `urn:pulumi:chaos::chaos::pulumi-nodejs:dynamic/tasks:AsyncResource::${word}`;
}

/** The short name of a URN, for traces. */
export function shortUrn(urn: string): string {
    return urn.split("::").at(-1) ?? urn;
}

/** The plan of `seed` against `dialect`'s server. */
export function generatePlan(dialect: string, seed: number): Plan {
    const random = seededRandom(hashSeed("chaos-dialects", dialect, seed));
    const int = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
    const chance = (p: number) => random() < p;

    const settings: Settings = {
        faultRate: pick([0.05, 0.1, 0.2, 0.3], random),
        interruptProbability: pick([0, 0.06, 0.12], random),
        killProbability: pick([0, 0.04, 0.08], random),
        odds: {
            failed: pick([0, 0.1, 0.2], random),
            canceled: pick([0, 0.05, 0.1], random),
            late: pick([0, 0.1, 0.25], random),
            long: pick([0, 0.05, 0.15], random),
        },
        parallel: chance(0.3),
        pollInitialMs: pick([100, 100, 1000], random),
    };
    const variant = drawVariant(dialect, random);
    // Where the API accepts two resources with one natural key and does not list a create in progress,
    // only a create token tells a killed create's resource from a new one (the README's precondition):
    // there, every resource has one.
    const tokens = variant.allowDuplicateNames === true ? 1 : 0.6;

    const foreign = FOREIGN_WORDS.slice(0, int(1, FOREIGN_WORDS.length)).map((name) => ({ name, size: int(1, 9) }));

    /** The generation each URN's name is at. */
    const generations = new Map<string, number>();
    let nextWord = 0;
    const token = (word: string) => `tok-${seed}-${word}-${int(0, 999)}`;
    const newResource = (current: readonly ResourceSpec[]): ResourceSpec | undefined => {
        // Sometimes someone else's widget, declared to be taken over (or, by mistake, without adopt).
        const unclaimed = foreign.filter(
            (theirs) => ![...current, ...everDeclared].some((resource) => resource.name === theirs.name),
        );
        if (unclaimed.length > 0 && chance(0.2)) {
            const theirs = pick(unclaimed, random);
            return {
                urn: urnOf(`${theirs.name}-taken`),
                name: theirs.name,
                size: chance(0.5) ? theirs.size : int(1, 99),
                adopt: chance(0.75),
                untaint: false,
                ...(chance(tokens === 1 ? 1 : 0.5) ? { createToken: token(theirs.name) } : {}),
            };
        }
        if (nextWord >= WORDS.length) return undefined;
        const word = WORDS[nextWord++] as string;
        generations.set(word, 1);
        const timeouts = pick(TIMEOUTS, random);
        return {
            urn: urnOf(word),
            name: word,
            size: int(1, 99),
            adopt: false,
            untaint: false,
            ...(chance(tokens) ? { createToken: token(word) } : {}),
            ...(timeouts ? { timeouts } : {}),
        };
    };

    const steps: Step[] = [];
    let program: ResourceSpec[] = [];
    const everDeclared: ResourceSpec[] = [];
    const stepCount = int(3, 7);
    for (let id = 1; id <= stepCount; id++) {
        const roll = random();
        if (id > 1 && roll < 0.12) steps.push({ id, kind: "refresh" });
        else if (id > 1 && roll < 0.18) steps.push({ id, kind: "destroy" });
        else if (id > 1 && roll < 0.25) steps.push({ id, kind: "wait" });
        else if (id > 1 && roll < 0.3) steps.push({ id, kind: "drift", pick: random(), size: int(1, 99) });
        else if (id > 1 && roll < 0.34) steps.push({ id, kind: "outside-delete", pick: random() });
        else {
            program = evolve(program);
            everDeclared.push(...program);
            steps.push({ id, kind: "up", program });
        }
    }
    return { seed, dialect, settings, variant, foreign, steps };

    function evolve(current: ResourceSpec[]): ResourceSpec[] {
        let next = [...current];
        if (next.length === 0) {
            for (let i = int(1, 3); i > 0; i--) {
                const resource = newResource(next);
                if (resource) next.push(resource);
            }
            return next;
        }
        for (let change = int(1, 3); change > 0; change--) {
            const roll = random();
            const index = int(0, next.length - 1);
            const target = next[index] as ResourceSpec;
            const replace = (changed: ResourceSpec) => {
                next = next.map((resource, i) => (i === index ? changed : resource));
            };
            const word = shortUrn(target.urn);
            const ours = !target.urn.endsWith("-taken");
            if (roll < 0.2) {
                const resource = newResource(next);
                if (resource) next.push(resource);
            } else if (roll < 0.32 && next.length > 1) next = next.filter((_, i) => i !== index);
            else if (roll < 0.6) replace({ ...target, size: int(1, 99) });
            else if (roll < 0.72 && ours) {
                // A natural-key replacement: a name never used before, so no other resource holds it.
                const generation = (generations.get(word) ?? 1) + 1;
                generations.set(word, generation);
                replace({ ...target, name: `${word}-${generation}` });
            } else if (roll < 0.8) replace({ ...target, untaint: !target.untaint });
            else if (roll < 0.86) replace({ ...target, adopt: !target.adopt });
            else if (roll < 0.94) {
                // A new token, or none (where the API allows, see `tokens`).
                const { createToken: _, ...rest } = target;
                replace(target.createToken && tokens < 1 ? rest : { ...target, createToken: token(word) });
            } else {
                const { timeouts: _, ...rest } = target;
                const timeouts = pick(TIMEOUTS, random);
                replace(timeouts ? { ...rest, timeouts } : rest);
            }
        }
        return next;
    }
}

/** One line per step, for the trace of a failing seed. */
export function describePlan(plan: Plan): string[] {
    const lines = [
        `plan ${plan.dialect} seed ${plan.seed}: ${JSON.stringify(plan.settings)}`,
        `server variant ${JSON.stringify(plan.variant)}; someone else's widgets: ${plan.foreign.map((f) => `${f.name} (${f.size})`).join(", ")}`,
    ];
    for (const step of plan.steps) {
        if (step.kind === "up") lines.push(`  ${step.id} up [${step.program.map(describeResource).join(", ")}]`);
        else if (step.kind === "drift")
            lines.push(`  ${step.id} drift (pick ${step.pick.toFixed(3)}) size ${step.size}`);
        else if (step.kind === "outside-delete")
            lines.push(`  ${step.id} outside-delete (pick ${step.pick.toFixed(3)})`);
        else lines.push(`  ${step.id} ${step.kind}`);
    }
    return lines;
}

export function describeResource(resource: ResourceSpec): string {
    const flags = [
        `size ${resource.size}`,
        resource.adopt ? "adopt" : "",
        resource.untaint ? "untaint" : "",
        // The token itself, so that a trace shows where the program changed it.
        resource.createToken ? `token ${resource.createToken}` : "",
        resource.timeouts ? JSON.stringify(resource.timeouts) : "",
    ].filter(Boolean);
    return `${shortUrn(resource.urn)}=${resource.name} (${flags.join(" ")})`;
}
