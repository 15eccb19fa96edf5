// The invariants of the dialect chaos suite, counted on the server (its counts() and its live records)
// against what the emulated engine recorded:
//
//   duplicates  counts().duplicates is 0, and no two live resources share a natural key
//   zombies     every live resource is known: in the state (pending deletions included), recorded as a
//               pending create, or someone else's; after the final destroy, nothing of ours is live
//   state       a resource in state with a resourceId exists at the server, unless another tool deleted
//               it, a delete of it did not end well, or the state records its create as not seen to its
//               end (that operation may still fail); after healing, the state is
//               the program, untainted, with nothing pending, and the server has each as the program says
//   origin      no request outside the API, no request without valid credentials
//   secrets     the token (and the AWS secret key) in no state, error message or progress line
//   foreign     someone else's widgets that no program adopted are still there, unchanged
//   errors      every error the provider throws is a LifecycleError naming its resource; every answer
//               can be sent to the engine
//   deadline    no operation outlives its timeout by more than a request; Ctrl-C ends one within seconds
//   runaway     no loop of hundreds of requests, no wait beyond Node's largest timer
//   hang        every command ends
//   heal        with the chaos off, the final program converges, and refresh and destroy succeed

import { LifecycleError } from "../../../provider/shared/errors/lifecycleError";
import { TEST_CREDENTIALS } from "../../dialects/servers/sigv4";
import { WIDGETS_TOKEN } from "../../tasks/asyncResource/dialectFixtures";
import type { DialectEngine, Entry } from "./dialectEngine";
import type { ResourceSpec } from "./dialectPlan";
import type { ChaosServer } from "./dialectServers";

export const INVARIANTS = [
    "duplicates",
    "zombies",
    "state",
    "origin",
    "secrets",
    "foreign",
    "errors",
    "deadline",
    "runaway",
    "hang",
    "heal",
] as const;

export type InvariantName = (typeof INVARIANTS)[number];

/** The secrets that must appear in no state, message or progress line, by name. */
export const SECRETS: Readonly<Record<string, string>> = {
    "API token": WIDGETS_TOKEN,
    "AWS secret access key": TEST_CREDENTIALS.secretAccessKey,
};

export interface Violation {
    readonly invariant: InvariantName;
    /** The step and operation, e.g. "step 3 up, create alpha (alpha)". */
    readonly where: string;
    readonly detail: string;
}

/** The secrets found in `text`, by name. */
export function secretsIn(text: string, secrets: Readonly<Record<string, string>>): string[] {
    return Object.entries(secrets)
        .filter(([, secret]) => secret.length > 0 && text.includes(secret))
        .map(([name]) => name);
}

/** What is wrong with an error the provider threw for an operation on the resource `name` (empty: nothing). */
export function errorProblems(error: unknown, name: string, secrets: Readonly<Record<string, string>>): string[] {
    const problems: string[] = [];
    const message = error instanceof Error ? error.message : String(error);
    if (!(error instanceof LifecycleError)) {
        const kind = error instanceof Error ? error.constructor.name : typeof error;
        problems.push(`threw ${kind}, not a LifecycleError: ${message.slice(0, 300)}`);
    }
    if (!message.includes(JSON.stringify(name)))
        problems.push(`the message does not name the resource ${JSON.stringify(name)}: ${message.slice(0, 300)}`);
    let fields = "";
    try {
        fields = JSON.stringify(error) ?? "";
    } catch {
        fields = "";
    }
    for (const secret of secretsIn(`${message}\n${fields}`, secrets)) problems.push(`the error carries the ${secret}`);
    return problems;
}

type Props = Record<string, unknown>;

/** The invariants over one run's server and engine. */
export class Checker {
    private server: ChaosServer | undefined;
    private engine: DialectEngine | undefined;
    private foreign = new Map<string, number>();
    /** Someone else's widgets a program declared with `adopt: true`: ours to change from then on. */
    private readonly taken = new Set<string>();
    /** Ids another tool deleted since the last refresh. */
    private readonly goneOutside = new Set<string>();
    /**
     * Resources a delete did not end well for, by natural key, with the resourceId they had: the API may
     * still be deleting them, and a refresh may read a replica that lags behind that delete, so the state
     * is not held to the server's word on them until it records them anew (another resourceId) or drops them.
     */
    private readonly doubtful = new Map<string, string | undefined>();
    /** Violations reported once each (a broken invariant stays broken for the rest of a run). */
    private readonly reported = new Set<string>();

    constructor(
        private readonly violate: (invariant: InvariantName, detail: string, where?: string) => void,
        private readonly counts: { checks: number },
    ) {}

    attach(server: ChaosServer, engine: DialectEngine, foreign: readonly { name: string; size: number }[]): void {
        this.server = server;
        this.engine = engine;
        this.foreign = new Map(foreign.map((theirs) => [theirs.name, theirs.size]));
    }

    /** Someone else's: a widget made before the run, whatever has become of it since. */
    isForeign(name: string): boolean {
        return this.foreign.has(name);
    }

    /** Someone else's widget that a program declared with `adopt: true`. */
    isTaken(name: string): boolean {
        return this.taken.has(name);
    }

    released(name: string): void {
        if (this.foreign.has(name)) this.taken.add(name);
    }

    deletedOutside(id: string): void {
        this.goneOutside.add(id);
    }

    deleteUnsure(name: string): void {
        const entry = this.parts()
            .engine.entries()
            .find((candidate) => candidate.id === name);
        this.doubtful.set(name, entry && idIn(entry));
    }

    /** A refresh that succeeded: the state has seen what another tool did. */
    refreshed(): void {
        this.goneOutside.clear();
    }

    check(invariant: InvariantName, holds: boolean, detail: () => string, where?: string): void {
        this.counts.checks++;
        if (holds) return;
        const text = detail();
        const key = `${invariant}\u0000${text}`;
        if (this.reported.has(key)) return;
        this.reported.add(key);
        this.violate(invariant, text, where);
    }

    /** After every command (and every time the server was left to finish what runs). */
    afterCommand(where: string): void {
        const { server, engine } = this.parts();
        const { fixture } = server;
        const counts = server.server.counts();
        const records = server.server.resources();
        const nameOf = (record: Props) => String(fixture.nameOf(record));
        this.check(
            "duplicates",
            counts.duplicates === 0,
            () => `the server counted ${counts.duplicates} duplicate(s)`,
            where,
        );
        const byName = new Map<string, Props[]>();
        for (const record of records) byName.set(nameOf(record), [...(byName.get(nameOf(record)) ?? []), record]);
        for (const [name, same] of byName) {
            this.check(
                "duplicates",
                same.length === 1,
                () => `${same.length} live resources named ${name}: ${same.map((r) => server.idOf(r)).join(", ")}`,
                where,
            );
        }
        const known = new Set([
            ...engine.entries().map((entry) => entry.id),
            ...engine.pendingCreates.map((create) => create.name),
            ...this.foreign.keys(),
        ]);
        for (const record of records) {
            this.check(
                "zombies",
                known.has(nameOf(record)),
                () =>
                    `${server.idOf(record)} (${nameOf(record)}) is live at the server, but neither in the state nor a pending create`,
                where,
            );
        }
        this.check(
            "origin",
            counts.requestsOutsideApi === 0,
            () => `${counts.requestsOutsideApi} request(s) outside the API`,
            where,
        );
        this.check(
            "origin",
            counts.unauthorized === 0,
            () => `${counts.unauthorized} request(s) without valid credentials`,
            where,
        );
        const live = new Set(records.map((record) => server.idOf(record)));
        for (const entry of engine.entries()) {
            const resourceId = idIn(entry);
            // A create whose operation the state itself records as not seen to its end may yet fail.
            const unfinished = (entry.outputs.operation as { write?: unknown } | undefined)?.write === "create";
            const excused =
                resourceId === undefined ||
                unfinished ||
                this.goneOutside.has(resourceId) ||
                (this.doubtful.has(entry.id) && this.doubtful.get(entry.id) === resourceId);
            this.check(
                "state",
                excused || live.has(resourceId),
                () => `${entry.id} is in the state with resourceId ${resourceId}, which the server does not have`,
                where,
            );
            const leaked = secretsIn(JSON.stringify([entry.inputs, entry.outputs]), SECRETS);
            this.check(
                "secrets",
                leaked.length === 0,
                () => `the state of ${entry.id} carries the ${leaked.join(", ")}`,
                where,
            );
        }
        for (const [name, size] of this.foreign) {
            if (this.taken.has(name)) continue;
            const theirs = byName.get(name)?.[0];
            this.check("foreign", theirs !== undefined, () => `someone else's ${name} is gone`, where);
            this.check(
                "foreign",
                theirs === undefined || fixture.sizeOf(theirs) === size,
                () =>
                    `someone else's ${name} was changed: size ${String(theirs && fixture.sizeOf(theirs))}, was ${size}`,
                where,
            );
        }
    }

    /** After healing: the state is the program, and the server has each resource as the program says. */
    finalState(program: readonly ResourceSpec[], where: string): void {
        const { server, engine } = this.parts();
        const { fixture } = server;
        const records = server.server.resources();
        for (const resource of program) {
            const entry = engine.state.get(resource.urn);
            const label = `${resource.name} (${resource.urn.split("::").at(-1)})`;
            this.check("state", entry !== undefined, () => `${label} is not in the state`, where);
            if (!entry) continue;
            const outputs = entry.outputs as { tainted?: boolean; operation?: unknown };
            this.check("state", entry.id === resource.name, () => `${label} is recorded as ${entry.id}`, where);
            this.check("state", outputs.tainted !== true, () => `${label} is still tainted`, where);
            this.check("state", outputs.operation === undefined, () => `${label} still records an operation`, where);
            this.check("state", entry.initErrors.length === 0, () => `${label} still has init errors`, where);
            const resourceId = idIn(entry);
            const record = records.find((candidate) => server.idOf(candidate) === resourceId);
            this.check(
                "state",
                record !== undefined,
                () => `${label}'s resourceId ${resourceId} is not at the server`,
                where,
            );
            if (!record) continue;
            this.check(
                "state",
                fixture.nameOf(record) === resource.name,
                () => `${label} is ${String(fixture.nameOf(record))} at the server`,
                where,
            );
            this.check(
                "state",
                fixture.sizeOf(record) === resource.size,
                () =>
                    `${label} has size ${String(fixture.sizeOf(record))} at the server, the program says ${resource.size}`,
                where,
            );
        }
        const wanted = new Set(program.map((resource) => resource.urn));
        for (const entry of engine.entries()) {
            this.check(
                "state",
                wanted.has(entry.urn) && !engine.condemned.includes(entry),
                () => `the state still has ${entry.id} (${entry.urn.split("::").at(-1)}) beside the program`,
                where,
            );
        }
        this.check(
            "zombies",
            engine.pendingCreates.length === 0,
            () => `pending creates left: ${engine.pendingCreates.map((create) => create.name).join(", ")}`,
            where,
        );
        const ids = new Set(engine.entries().map((entry) => idIn(entry)));
        for (const record of records) {
            const name = String(fixture.nameOf(record));
            this.check(
                "zombies",
                ids.has(server.idOf(record)) ||
                    (this.foreign.has(name) && !this.taken.has(name)) ||
                    this.stillTheirs(name, program),
                () =>
                    `${server.idOf(record)} (${name}) is live at the server, but the state has no resource with its id`,
                where,
            );
        }
        this.afterCommand(where);
    }

    /** After the final destroy: nothing of ours is live. */
    afterDestroy(where: string): void {
        const { server, engine } = this.parts();
        const records = server.server.resources();
        const theirs = records.filter((record) => this.foreign.has(String(server.fixture.nameOf(record))));
        this.check(
            "state",
            engine.entries().length === 0,
            () =>
                `the state still has ${engine
                    .entries()
                    .map((e) => e.id)
                    .join(", ")}`,
            where,
        );
        this.check(
            "zombies",
            server.server.counts().live === theirs.length,
            () =>
                `${server.server.counts().live} live at the server after destroy, of which ${theirs.length} someone else's: ${records.map((r) => String(server.fixture.nameOf(r))).join(", ")}`,
            where,
        );
        this.afterCommand(where);
    }

    /** Someone else's widget a program declared with adopt but never took over (it is still theirs). */
    private stillTheirs(name: string, program: readonly ResourceSpec[]): boolean {
        return this.foreign.has(name) && !program.some((resource) => resource.name === name);
    }

    private parts(): { server: ChaosServer; engine: DialectEngine } {
        if (!this.server || !this.engine) throw new Error("the checker is not attached to a run");
        return { server: this.server, engine: this.engine };
    }
}

function idIn(entry: Entry): string | undefined {
    const id = (entry.outputs as { resourceId?: unknown }).resourceId;
    return typeof id === "string" ? id : undefined;
}
