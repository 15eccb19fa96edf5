// What one run of the multi-writer suite does, drawn from its seed alone: where the file is, who writes
// it, and which faults hit whom when. The same seed gives the same scenario and schedule (the operating
// system's timing does the rest), so a failing seed is replayed by running it again.

import { seededRandom } from "../../../provider/shared/random";
import { blocklist, fixture } from "../../support/hostsFixtures";

/** root, `nobody`, and a third unprivileged uid. */
export const UIDS = [0, 65534, 65533] as const;

export interface LockWriterPlan {
    readonly slot: number;
    readonly uid: number;
    /** Operations in flight at once in that process. */
    readonly lanes: number;
}

export interface ForeignWriterPlan {
    readonly slot: number;
    readonly uid: number;
    readonly kind: "append" | "rewrite";
}

/** A fault for the lock-using writer of `slot`, at `atMs` after the writers started. */
export interface Fault {
    readonly atMs: number;
    readonly slot: number;
    readonly signal: "SIGKILL" | "SIGSTOP";
    /** For SIGSTOP: how long before SIGCONT. */
    readonly pauseMs: number;
}

export interface Scenario {
    readonly seed: number;
    /** A plain file, or a file bind-mounted over another (rename gives EBUSY: the in-place path). */
    readonly mount: "plain" | "bind";
    /** Mode 0777 (every writer may create files beside the hosts file) or 0755 owned by root. */
    readonly directory: "writable" | "root-only";
    readonly baseName: string;
    /** The file's content before the run, one character per byte. */
    readonly base: string;
    readonly lock: { readonly timeoutMs: number; readonly staleMs: number };
    readonly durationMs: number;
    readonly writers: readonly LockWriterPlan[];
    readonly foreign: readonly ForeignWriterPlan[];
    readonly faults: readonly Fault[];
    /** The uid of the one more lock-using writer run after the faults (with a TMPDIR of its own). */
    readonly recoveryUid: number;
}

/** Draws the scenario of `seed`; `durationMs` is how long the writers run under faults. */
export function scenarioFor(seed: number, durationMs: number): Scenario {
    const random = seededRandom(seed);
    const below = (n: number) => Math.floor(random() * n);
    const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));

    const mount = random() < 0.5 ? "bind" : "plain";
    const directory = random() < 0.5 ? "root-only" : "writable";
    const allRoot = random() < 0.2;
    const writers: LockWriterPlan[] = Array.from({ length: between(2, 4) }, (_, slot) => ({
        slot,
        uid: allRoot ? 0 : (UIDS[below(UIDS.length)] as number),
        lanes: between(1, 3),
    }));
    const foreign: ForeignWriterPlan[] = [];
    const appenders = random() < 0.4 ? 0 : random() < 0.65 ? 1 : 2;
    for (let i = 0; i < appenders; i++)
        foreign.push({ slot: i, uid: UIDS[below(UIDS.length)] as number, kind: "append" });
    if (random() < 0.35) foreign.push({ slot: 0, uid: UIDS[below(UIDS.length)] as number, kind: "rewrite" });

    // `echo >>` on a file without a final newline glues its line to the last one, whoever wrote it: the
    // base without one only where no foreign writer runs.
    const messy = fixture("messy").toString("latin1");
    const bases: [string, string][] = [
        ["messy.hosts with a final newline", `${messy}\n`],
        ["a 300-line blocklist", blocklist(300).toString("latin1")],
    ];
    if (foreign.length === 0) bases.push(["messy.hosts (no final newline)", messy]);
    const [baseName, base] = bases[below(bases.length)] as [string, string];

    const staleMs = between(300, 500);
    const lock = { timeoutMs: 4000, staleMs };
    const faults: Fault[] = [];
    for (let atMs = between(150, 300); atMs < durationMs; atMs += between(80, 320)) {
        const roll = random();
        if (roll < 0.1) continue;
        const slot = below(writers.length);
        if (roll < 0.55) {
            faults.push({ atMs, slot, signal: "SIGKILL", pauseMs: 0 });
        } else {
            // A third of the stops outlast the lock's stale time: the holder's lock looks abandoned.
            const pauseMs = random() < 0.35 ? between(staleMs + 100, 2 * staleMs + 300) : between(10, staleMs - 50);
            faults.push({ atMs, slot, signal: "SIGSTOP", pauseMs });
        }
    }
    const recoveryUid = (writers[below(writers.length)] as LockWriterPlan).uid;
    return { seed, mount, directory, baseName, base, lock, durationMs, writers, foreign, faults, recoveryUid };
}

/** Whether some lock-using writer writes in place here (not atomic for readers without the lock, as documented). */
export function inPlaceWriters(scenario: Scenario): boolean {
    // A rename is impossible over a bind mount; a writer that is not root cannot create a file beside one
    // in a root-only directory, nor give a new file root's ownership (the file belongs to root).
    return scenario.mount === "bind" || scenario.writers.some((writer) => writer.uid !== 0);
}

/** Whether some foreign rewrite truncates the file and writes it in place (an empty or short file meanwhile). */
export function inPlaceRewriters(scenario: Scenario): boolean {
    return scenario.foreign.some(
        (writer) =>
            writer.kind === "rewrite" &&
            (scenario.mount === "bind" || (scenario.directory === "root-only" && writer.uid !== 0)),
    );
}

/** One line describing where and on what the run writes. */
export function describeScenario(scenario: Scenario): string {
    const where = scenario.mount === "bind" ? "a bind-mounted file" : "a plain file";
    const directory =
        scenario.directory === "writable" ? "a directory all may write (0777)" : "a root-only directory (0755)";
    return (
        `${where} (mode 0666, root's) in ${directory}, base ${scenario.baseName} (${scenario.base.length} bytes), ` +
        `lock timeout ${scenario.lock.timeoutMs} ms / stale ${scenario.lock.staleMs} ms, ${scenario.durationMs} ms under faults`
    );
}
