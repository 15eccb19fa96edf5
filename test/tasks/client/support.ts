// Shared helpers of the tests of provider/tasks/core and the datastore check and diff: a fake clock and
// sleep that never wait for real time, a task API server on port 0 that tests close, and datastore
// inputs. Nothing here waits for a real timer.

import { strict as assert } from "node:assert";
import type { Clock, Sleep, Timeout } from "../../../provider/shared/time";
import {
    startTaskApiServer,
    type TaskApiServer,
    type TaskApiServerOptions,
} from "../../../provider/taskApiServer/taskApiServer";
import type { DatastoreInputs } from "../../../provider/tasks/datastoreSchema";

/** When every fake clock starts: 2030-01-01T00:00:00Z. */
export const START = Date.parse("2030-01-01T00:00:00.000Z");

/** A token distinctive enough that finding it in a message cannot be a coincidence; valid in a datastore name. */
export const TOKEN = "Sekrit-Token.7f3a9c1e-do-not-print";

/** The request timeout the tests give clients. */
export const REQUEST_TIMEOUT_MS = 45_678;

export const GIB = 1024 ** 3;
export const HCI = "a1b2c3d4-0000-4000-8000-000000000001";
export const CLUSTER = "c0ffee00-0000-4000-8000-000000000002";
export const OTHER_UUID = "c0ffee00-0000-4000-8000-000000000003";

/** The engine's sentinel for a value not known during preview, spelled out so tests do not borrow the code's. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/**
 * A fake clock, sleep and request timer. A wait resolves at once, records the ms asked and moves the
 * clock forward by them; it rejects with the signal's reason when the signal is (or, in `onWait`,
 * becomes) aborted. A request timer (`timeout`, which TaskApiClient starts for each request) stays
 * pending until `fireTimers()` fires it or the client cancels it, so a request times out only when a
 * test says so.
 */
export class FakeTime {
    now: number;
    /** Every wait asked of `sleep`, in order. */
    readonly waits: number[] = [];
    /** How many request timers were started. */
    timersStarted = 0;
    /** The ms of the last request timer started. */
    lastTimerMs: number | undefined;
    /** Called before a wait of `sleep` resolves, with its ms and its 1-based number; may abort its signal. */
    onWait: ((ms: number, count: number) => void) | undefined;
    private readonly pendingTimers = new Set<() => void>();

    constructor(start: number = START) {
        this.now = start;
    }

    readonly clock: Clock = () => this.now;

    /** The sleep of the client under test: records into `waits`. */
    readonly sleep: Sleep = this.recordingSleep(this.waits);

    /** The request timer of the client under test. */
    readonly timeout: Timeout = (ms, onTimeout) => {
        this.timersStarted++;
        this.lastTimerMs = ms;
        const fire = () => onTimeout();
        this.pendingTimers.add(fire);
        return () => {
            this.pendingTimers.delete(fire);
        };
    };

    /** A sleep on the same clock that records its waits into `into` (e.g. a poller's, apart from the client's). */
    recordingSleep(into: number[]): Sleep {
        return (ms, signal) =>
            new Promise<void>((resolve, reject) => {
                if (signal?.aborted) {
                    reject(signal.reason);
                    return;
                }
                into.push(ms);
                this.onWait?.(ms, into.length);
                if (signal?.aborted) {
                    reject(signal.reason);
                    return;
                }
                this.now += ms;
                resolve();
            });
    }

    /** Fires every pending request timer (their requests time out); returns how many there were. */
    fireTimers(): number {
        const timers = [...this.pendingTimers];
        this.pendingTimers.clear();
        for (const fire of timers) fire();
        return timers.length;
    }

    /** Request timers not yet fired or cancelled. */
    get pendingTimerCount(): number {
        return this.pendingTimers.size;
    }
}

/** A server-side sleep that never ends by itself: it runs `onStart` (e.g. fire the client's timers) and waits for the server to close. */
export function heldSleep(onStart: () => void): Sleep {
    return (_ms, signal) =>
        new Promise<void>((_resolve, reject) => {
            if (signal?.aborted) {
                reject(signal.reason);
                return;
            }
            signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
            onStart();
        });
}

/** Starts task API servers (port 0, token TOKEN, frozen clock at START, sleeps that end at once) and closes them. */
export class Servers {
    private readonly started: TaskApiServer[] = [];

    async start(options: TaskApiServerOptions = {}): Promise<TaskApiServer> {
        const server = await startTaskApiServer({
            token: TOKEN,
            clock: () => START,
            sleep: async () => undefined,
            ...options,
        });
        this.started.push(server);
        return server;
    }

    async closeAll(): Promise<void> {
        const servers = this.started.splice(0);
        await Promise.all(servers.map((server) => server.close()));
    }
}

/** Datastore inputs as check returns them for a valid datastore "ds19"; `overrides` may hold unknowns. */
export function datastoreInputs(overrides: Partial<Record<keyof DatastoreInputs, unknown>> = {}): DatastoreInputs {
    return {
        hciClusterUuid: HCI,
        clusterId: CLUSTER,
        name: "ds19",
        sizeInBytes: 16 * GIB,
        datastoreType: "VMFS",
        adopt: false,
        untaint: false,
        ...overrides,
    } as DatastoreInputs;
}

/** A valid body for `POST /virtualization/v1beta1/datastores`, with the fields HPE's provider sends. */
export function createBody(name = "ds19", overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
        name,
        sizeInBytes: 16 * GIB,
        storageSystemId: HCI,
        targetHypervisorClusterId: CLUSTER,
        datastoreType: "VMFS",
        ...overrides,
    };
}

/** The error `promise` rejects with; fails the test when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
    try {
        await promise;
    } catch (error) {
        return error;
    }
    assert.fail("the request resolved; it should have failed");
}
