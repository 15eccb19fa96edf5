// Randomized programs for the chaos suite: per seed, someone else's datastores made before the run, and a
// sequence of steps (ups of an evolving set of datastores, refreshes, destroys, time passing), plus the
// settings of the run (fault rate, request timeout, task durations). A plan is plain data, so a failing
// one can be written out, shrunk and replayed.

import { seededRandom } from "../../provider/shared/random";
import type { NaturalKey } from "../../provider/tasks/datastoreSchema";
import { type OperationTimeouts, TIMEOUT_KEYS } from "../../provider/tasks/timeoutsSchema";
import { type FaultKind, pick, type RouteKind } from "./faults";

export const GIB = 1024 ** 3;

/** The two clusters programs use: one HCI cluster, two hypervisor clusters. */
export const HCI = "0c4a05e1-0000-4000-8000-00000000c4a0";
export const CLUSTERS = ["5eed0001-0000-4000-8000-000000000001", "5eed0002-0000-4000-8000-000000000002"] as const;
/** Names no message could contain by accident. */
export const NAMES = ["alpha", "bravo", "charlie", "delta", "echo"] as const;

/** A datastore made directly at the backend before the run: someone else's. */
export interface ForeignSpec {
    readonly key: NaturalKey;
    readonly sizeInBytes: number;
    /** OK, or ERROR (its create task failed). */
    readonly fate: "OK" | "ERROR";
}

/** One resource of a program. */
export interface ResourceSpec {
    /** Stable across steps: the engine's URN. */
    readonly urn: string;
    readonly key: NaturalKey;
    readonly sizeInBytes: number;
    readonly adopt: boolean;
    readonly untaint: boolean;
    readonly createToken?: string;
    readonly timeouts?: OperationTimeouts;
}

export type Step =
    | { readonly id: number; readonly kind: "up"; readonly program: readonly ResourceSpec[] }
    | { readonly id: number; readonly kind: "refresh" }
    | { readonly id: number; readonly kind: "destroy" }
    | { readonly id: number; readonly kind: "wait"; readonly ms: number };

/** How hostile and how patient a run is. */
export interface RunSettings {
    /** The chance that a request gets a fault. */
    readonly faultProbability: number;
    /** The chance that an operation is interrupted (engine Cancel or SIGINT). */
    readonly interruptProbability: number;
    /** The chance that a task the backend runs fails. */
    readonly taskFailureProbability: number;
    readonly requestTimeoutMs: number;
    readonly pollInitialMs: number;
    readonly pollMaxMs: number;
    readonly taskDurationMs: number;
    /**
     * Whether each command runs its operations at once, as the engine does (up to 16 in one provider
     * process), rather than one after another. Requests of concurrent operations reach the server in an
     * order real time decides, so such a seed replays its faults exactly but not always its interleaving.
     */
    readonly parallel?: boolean;
}

/** Everything a run does, from its seed. */
export interface Plan {
    readonly seed: number;
    readonly settings: RunSettings;
    readonly foreign: readonly ForeignSpec[];
    readonly steps: readonly Step[];
    /** When present, exactly these hazards happen and no random ones (a shrunk finding, replayed). */
    readonly script?: Script;
}

/**
 * Hazards pinned to requests: the `nth` request of a route within one operation (`op` is
 * "<step id>/<urn>/<kind>"). Pinned by route rather than by position, so a replay still hits the same
 * request when the provider learns to send one more or one fewer of another kind.
 */
export interface Pinned {
    readonly op: string;
    readonly route: RouteKind;
    readonly nth: number;
}

/** What a run did to its requests, or what a replay is to do. */
export interface Script {
    readonly faults: readonly (Pinned & { readonly fault: FaultKind })[];
    /** Mutating requests whose task the backend fails. */
    readonly taskFailures: readonly Pinned[];
    readonly interrupts: readonly (Pinned & { readonly when: "arrival" | "answered"; readonly reason: string })[];
}

/** Whether the provider under test takes `timeouts.read` (the code before issue 18's fixes did not). */
const READ_TIMEOUTS = (TIMEOUT_KEYS as readonly string[]).includes("read");

const TIMEOUTS: readonly (OperationTimeouts | undefined)[] = [
    undefined,
    undefined,
    undefined,
    { create: "2m" },
    { create: "10m", update: "5m", delete: "5m" },
    { create: "1h", update: "1h", delete: "1h" },
    { update: "30s", delete: "1m" },
    { create: "1000h", update: "1000h", delete: "1000h" },
    ...(READ_TIMEOUTS ? [{ read: "30s" } as OperationTimeouts, { read: "1000h" } as OperationTimeouts] : []),
];

export function urnOf(key: NaturalKey): string {
    const cluster = CLUSTERS.indexOf(key.clusterId as (typeof CLUSTERS)[number]);
    return `urn:pulumi:chaos::chaos::pulumi-nodejs:dynamic/tasks:Datastore::${key.name}-${cluster}`;
}

export function sameKey(a: NaturalKey, b: NaturalKey): boolean {
    return a.hciClusterUuid === b.hciClusterUuid && a.clusterId === b.clusterId && a.name === b.name;
}

/** The plan of `seed`. */
export function generatePlan(seed: number): Plan {
    const random = seededRandom(seed ^ 0x5eed);
    const int = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
    const chance = (p: number) => random() < p;
    const keys: NaturalKey[] = NAMES.flatMap((name) =>
        CLUSTERS.map((clusterId) => ({ hciClusterUuid: HCI, clusterId, name })),
    );

    const settings: RunSettings = {
        faultProbability: pick([0.1, 0.2, 0.3, 0.45], random),
        interruptProbability: pick([0, 0.08, 0.15], random),
        taskFailureProbability: pick([0, 0.1, 0.2], random),
        requestTimeoutMs: pick([5_000, 30_000, 45_678], random),
        pollInitialMs: pick([100, 100, 1000], random),
        pollMaxMs: pick([2_000, 10_000, 10_000], random),
        taskDurationMs: pick([0, 1_000, 2_000, 30_000, 120_000], random),
        parallel: random() < 0.35,
    };

    // Someone else's datastores: some on keys the program will use, some beside them.
    const foreign: ForeignSpec[] = [];
    const foreignCount = int(2, 4);
    const shuffled = [...keys].sort(() => random() - 0.5);
    for (const key of shuffled.slice(0, foreignCount)) {
        foreign.push({ key, sizeInBytes: int(1, 8) * GIB, fate: chance(0.2) ? "ERROR" : "OK" });
    }
    foreign.push({
        key: { hciClusterUuid: HCI, clusterId: pick(CLUSTERS, random), name: "zulu" },
        sizeInBytes: 4 * GIB,
        fate: "OK",
    });

    const newResource = (key: NaturalKey): ResourceSpec => {
        const theirs = foreign.find((f) => sameKey(f.key, key));
        const adopt = theirs !== undefined && chance(0.5);
        const timeouts = pick(TIMEOUTS, random);
        return {
            urn: urnOf(key),
            key,
            // Never smaller than the resource once was: it may still be in state, and check refuses a shrink.
            sizeInBytes: Math.max(
                adopt && theirs && chance(0.85) ? theirs.sizeInBytes : int(1, 16) * GIB,
                largest.get(urnOf(key)) ?? 0,
            ),
            adopt,
            untaint: false,
            ...(chance(0.6) ? { createToken: `tok-${seed}-${key.name}-${int(0, 999)}` } : {}),
            ...(timeouts ? { timeouts } : {}),
        };
    };

    const steps: Step[] = [];
    let program: ResourceSpec[] = [];
    /** The largest size each resource has had in a program so far. */
    const largest = new Map<string, number>();
    const stepCount = int(3, 7);
    for (let id = 1; id <= stepCount; id++) {
        const roll = random();
        if (id > 1 && roll < 0.15) {
            steps.push({ id, kind: "refresh" });
            continue;
        }
        if (id > 1 && roll < 0.2) {
            steps.push({ id, kind: "destroy" });
            continue;
        }
        if (id > 1 && roll < 0.3) {
            steps.push({ id, kind: "wait", ms: int(1, 30) * 60_000 });
            continue;
        }
        program = evolve(program);
        for (const resource of program) {
            largest.set(resource.urn, Math.max(resource.sizeInBytes, largest.get(resource.urn) ?? 0));
        }
        steps.push({ id, kind: "up", program });
    }
    return { seed, settings, foreign, steps };

    function evolve(current: ResourceSpec[]): ResourceSpec[] {
        let next = [...current];
        // A key removed in this very change is not free: the engine would see the same resource shrink.
        const free = () => keys.filter((key) => ![...next, ...current].some((r) => sameKey(r.key, key)));
        if (next.length === 0) {
            for (let i = int(1, 3); i > 0 && free().length > 0; i--) next.push(newResource(pick(free(), random)));
            return next;
        }
        for (let change = int(1, 3); change > 0; change--) {
            const roll = random();
            const index = int(0, next.length - 1);
            const target = next[index] as ResourceSpec;
            const replace = (changed: ResourceSpec) => {
                next = next.map((r, i) => (i === index ? changed : r));
            };
            if (roll < 0.25 && free().length > 0) next.push(newResource(pick(free(), random)));
            else if (roll < 0.4 && next.length > 1) next = next.filter((_, i) => i !== index);
            else if (roll < 0.65) replace({ ...target, sizeInBytes: target.sizeInBytes + int(1, 8) * GIB });
            else if (roll < 0.75) replace({ ...target, untaint: !target.untaint });
            else if (roll < 0.85) {
                const theirs = foreign.find((f) => sameKey(f.key, target.key));
                replace({ ...target, adopt: !target.adopt || theirs !== undefined });
            } else if (roll < 0.95) {
                const { createToken: _, ...rest } = target;
                replace(
                    target.createToken
                        ? rest
                        : { ...target, createToken: `tok-${seed}-${target.key.name}-${int(0, 999)}` },
                );
            } else {
                const { timeouts: _, ...rest } = target;
                const timeouts = pick(TIMEOUTS, random);
                replace(timeouts ? { ...rest, timeouts } : rest);
            }
        }
        return next;
    }
}
