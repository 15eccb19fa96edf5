// The dialect servers of issue 19 (test/dialects/servers) as the chaos suite runs them: each started as
// its fixture starts it (dialectFixtures.ts), on the run's virtual clock where the server reads one for
// a wire fact (HTTP-date Retry-After, the repeatability window), in a variant the seed draws among the
// behaviours each contract allows (duplicates allowed or refused, synchronous or long-running PUTs,
// identifiers early or late, ...), with a fault plan that can be paused and an operation plan drawn from
// the seed. `settle` lets time pass at the server: every operation still running is polled to its end,
// as the real API would finish it whether or not anyone looks (an operation abandoned by a killed
// provider ends too, so a zombie it leaves is counted).

import { ARM_API_VERSION, type AzureArmServer, startAzureArmServer } from "../../dialects/servers/azureArm";
import {
    type AzureGuidelinesServer,
    GUIDELINES_API_VERSIONS,
    startAzureGuidelinesServer,
} from "../../dialects/servers/azureGuidelines";
import { type CloudControlServer, startCloudControlServer } from "../../dialects/servers/cloudControl";
import { type GenericServer, startGenericServer } from "../../dialects/servers/generic";
import { type GoogleAipServer, startGoogleAipServer } from "../../dialects/servers/googleAip";
import {
    type DialectServer,
    type Fault,
    type FaultPlan,
    type OperationPlan,
    type OperationScript,
    randomFaults,
} from "../../dialects/servers/kit";
import { signAwsJson } from "../../dialects/servers/sigv4";
import { type DialectFixture, FIXTURES, WIDGETS_TOKEN } from "../../tasks/asyncResource/dialectFixtures";

/** The dialects, in the order the suite runs them. */
export const DIALECTS = FIXTURES.map((fixture) => fixture.dialect);

/** The ARM fixture's subscription and the region of its widgets' `location` (westus). */
const ARM_SUBSCRIPTION = "0000-sub";
const ARM_REGION = "westus";

/** How a seed's server behaves, among what its contract allows. */
export type ServerVariant = Readonly<Record<string, string | number | boolean>>;

/** The variant of `dialect`'s server for a seed. */
export function drawVariant(dialect: string, random: () => number): ServerVariant {
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    switch (dialect) {
        case "generic":
            return {
                allowDuplicateNames: random() < 0.5,
                retryAfter: pick(["seconds", "http-date", "none"] as const),
                instantAnswers: pick(["monitor", "final"] as const),
                absoluteLocations: random() < 0.3,
            };
        case "azure-arm":
            return {
                synchronousPut: random() < 0.2,
                putAsyncOperationHeader: random() < 0.75,
                retryAfter: pick(["always", "always", "alternate", "never"] as const),
                deleteFinalStatus: pick([200, 204] as const),
            };
        case "azure":
            return { failedCreate: pick(["kept", "removed"] as const) };
        case "google":
            return { emitDefaults: random() < 0.3 };
        case "aws-cloudcontrol":
            return {
                identifierEarly: random() < 0.3,
                handlerErrors: pick(["exception", "event"] as const),
                errorTypes: pick(["namespaced", "plain"] as const),
            };
        default:
            throw new Error(`no chaos server for the dialect ${dialect}`);
    }
}

/** The kinds of fault the kit injects, by name, in the order it draws them. */
export type FaultKind = Fault["kind"];

/**
 * The kit's seeded random faults over every kind, with a switch (healing turns the chaos off, and so does
 * time passing at the server) and a tally. While off, the plan draws nothing, so the faults a seed gets
 * do not depend on how many polls a `settle` made.
 */
export class SwitchableFaults implements FaultPlan {
    enabled = true;
    readonly injected: Partial<Record<FaultKind, number>> = {};
    private readonly inner: FaultPlan;

    constructor(
        seed: number,
        rate: number,
        private readonly onFault: (fault: Fault, request: { method: string; path: string; operation: string }) => void,
    ) {
        this.inner = randomFaults({ seed, rate });
    }

    next(request: { method: string; path: string; operation: string }): Fault | undefined {
        if (!this.enabled) return undefined;
        const fault = this.inner.next(request);
        if (fault) {
            this.injected[fault.kind] = (this.injected[fault.kind] ?? 0) + 1;
            this.onFault(fault, request);
        }
        return fault;
    }
}

/** How the seed's operations end: failed, canceled, late, slow, from its own stream of numbers. */
export interface OperationOdds {
    readonly failed: number;
    readonly canceled: number;
    readonly late: number;
    /** Operations that take 20-40 polls (so a short `timeouts` runs out). */
    readonly long: number;
}

/** An operation plan drawn from `random`, with a switch to "every operation succeeds at its first poll". */
export class SeededOperations implements OperationPlan {
    healing = false;
    readonly drawn = { failed: 0, canceled: 0, late: 0, long: 0, operations: 0 };

    constructor(
        private readonly random: () => number,
        private readonly odds: OperationOdds,
        private readonly onScript: (kind: string, script: OperationScript) => void,
    ) {}

    next(kind: "create" | "update" | "delete" | "action"): OperationScript {
        if (this.healing) return { pollsToFinish: 1, outcome: "succeeded" };
        const roll = this.random();
        const outcome =
            roll < this.odds.failed
                ? "failed"
                : roll < this.odds.failed + this.odds.canceled
                  ? "canceled"
                  : "succeeded";
        const long = this.random() < this.odds.long;
        const pollsToFinish = long ? 20 + Math.floor(this.random() * 21) : Math.floor(this.random() * 5);
        const resultLate = this.random() < this.odds.late;
        const script: OperationScript = { pollsToFinish, outcome, ...(resultLate ? { resultLate } : {}) };
        this.drawn.operations++;
        if (outcome === "failed") this.drawn.failed++;
        if (outcome === "canceled") this.drawn.canceled++;
        if (resultLate) this.drawn.late++;
        if (long) this.drawn.long++;
        this.onScript(kind, script);
        return script;
    }
}

/** A dialect's server in a chaos run. */
export interface ChaosServer {
    readonly fixture: DialectFixture;
    readonly server: DialectServer;
    /** The id `mutate` and `remove` take, and the provider records as `resourceId`, of a live record. */
    idOf(record: Record<string, unknown>): string;
    /** Polls every operation still running until none is (at most `rounds` rounds); the polls it made. */
    settle(rounds?: number): Promise<number>;
    /** Operations still running at the server. */
    running(): Promise<number>;
}

/** Starts `dialect`'s server for a run. */
export async function startChaosServer(
    dialect: string,
    options: { faults: FaultPlan; operations: OperationPlan; clock: () => number; variant: ServerVariant },
): Promise<ChaosServer> {
    const fixture = FIXTURES.find((candidate) => candidate.dialect === dialect);
    if (!fixture) throw new Error(`no fixture for the dialect ${dialect}`);
    const { faults, operations, clock, variant } = options;
    const token = WIDGETS_TOKEN;
    const bearer = { authorization: `Bearer ${token}` };
    const get = async (url: string): Promise<void> => {
        const answer = await fetch(url, { headers: bearer });
        await answer.arrayBuffer();
    };
    const nameOf = (record: Record<string, unknown>) => String(fixture.nameOf(record));
    // Each server as its fixture starts it (the same token, hints and defaults), plus the seed's variant.
    switch (dialect) {
        case "generic": {
            const server: GenericServer = await startGenericServer({
                token,
                retryAfterSeconds: 1,
                now: clock,
                faults,
                operations,
                ...(variant as object),
            });
            const pending = () => server.operations().filter((operation) => operation.status === "pending");
            return {
                fixture,
                server,
                idOf: (record) => String(record.id),
                settle: (rounds) =>
                    settle(rounds, async () => pending().map((op) => () => get(`${server.url}/monitors/${op.id}`))),
                running: async () => pending().length,
            };
        }
        case "azure-arm": {
            const server: AzureArmServer = await startAzureArmServer({
                token,
                retryAfter: "always",
                retryAfterSeconds: 1,
                clock,
                faults,
                operations,
                ...(variant as object),
            });
            const pending = () => server.operations().filter((op) => !TERMINAL.has(op.status.toLowerCase()));
            const monitor = (id: string) =>
                `${server.url}/subscriptions/${ARM_SUBSCRIPTION}/providers/Test.Widgets/locations/${ARM_REGION}/operationStatuses/${id}?api-version=${ARM_API_VERSION}`;
            return {
                fixture,
                server,
                idOf: nameOf,
                settle: (rounds) => settle(rounds, async () => pending().map((op) => () => get(monitor(op.id)))),
                running: async () => pending().length,
            };
        }
        case "azure": {
            const server: AzureGuidelinesServer = await startAzureGuidelinesServer({
                token,
                retryAfterSeconds: 1,
                clock,
                faults,
                operations,
                ...(variant as object),
            });
            const pending = () => server.operations().filter((op) => !TERMINAL.has(op.status.toLowerCase()));
            const monitor = (id: string) =>
                `${server.url}/operations/${encodeURIComponent(id)}?api-version=${GUIDELINES_API_VERSIONS[0]}`;
            return {
                fixture,
                server,
                idOf: nameOf,
                settle: (rounds) => settle(rounds, async () => pending().map((op) => () => get(monitor(op.id)))),
                running: async () => pending().length,
            };
        }
        case "google": {
            const server: GoogleAipServer = await startGoogleAipServer({
                token,
                now: clock,
                faults,
                operations,
                ...(variant as object),
            });
            const pending = () => server.operations().filter((op) => op.done !== true);
            return {
                fixture,
                server,
                idOf: nameOf,
                settle: (rounds) =>
                    settle(rounds, async () => pending().map((op) => () => get(`${server.url}/v1/${String(op.name)}`))),
                running: async () => pending().length,
            };
        }
        case "aws-cloudcontrol": {
            // The server's clock stays the wall clock: SigV4 signs with it (15 minutes of skew at most).
            const server: CloudControlServer = await startCloudControlServer({
                retryAfterSeconds: 1,
                faults,
                operations,
                ...(variant as object),
            });
            const pending = () =>
                server.requests().filter((event) => RUNNING_EVENTS.has(String(event.OperationStatus)));
            const poll = async (requestToken: unknown) => {
                const signed = await signAwsJson({
                    url: server.url,
                    target: "CloudApiService.GetResourceRequestStatus",
                    body: { RequestToken: requestToken },
                });
                const answer = await fetch(`${server.url}/`, {
                    method: "POST",
                    headers: signed.headers,
                    body: signed.body,
                });
                await answer.arrayBuffer();
            };
            return {
                fixture,
                server,
                idOf: nameOf,
                settle: (rounds) =>
                    settle(rounds, async () => pending().map((event) => () => poll(event.RequestToken))),
                running: async () => pending().length,
            };
        }
        default:
            throw new Error(`no chaos server for the dialect ${dialect}`);
    }
}

const TERMINAL = new Set(["succeeded", "failed", "canceled"]);
const RUNNING_EVENTS = new Set(["PENDING", "IN_PROGRESS", "CANCEL_IN_PROGRESS"]);

/** One poll of every running operation per round, until none runs; the number of polls. */
async function settle(rounds = 60, polls: () => Promise<Array<() => Promise<void>>>): Promise<number> {
    let made = 0;
    for (let round = 0; round < rounds; round++) {
        const left = await polls();
        if (left.length === 0) return made;
        for (const poll of left) {
            await poll();
            made++;
        }
    }
    return made;
}
