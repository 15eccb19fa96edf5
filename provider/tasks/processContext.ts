// What the task operations of one provider process share, and how the process stops when interrupted.
//
// On the first Ctrl-C the engine sends Cancel (engineCancel.ts) and waits for running operations: every
// operation waiting on a task is aborted at once and answers (a create as partial state, so nothing it
// started is forgotten), and the engine records those answers. On a second Ctrl-C the engine sends
// SIGINT to the provider process and SIGKILL 5 s later: the same, and the process exits well before the
// SIGKILL.

import { setMaxListeners } from "node:events";
import { currentEngineCall, type EngineCall, hearEngineCalls } from "../shared/engineCalls";
import { onEngineCancel } from "../shared/engineCancel";
import { engineReporter, type Reporter } from "../shared/engineLog";
import { type GrpcServerPrototype, SDK_VERSIONS_CHECKED } from "../shared/sdkInternals";
import type { Clock, Sleep } from "../shared/time";
import { systemClock, timerSleep } from "../shared/time";

/** What the operations of one provider process share. */
export interface TaskProcessContext {
    readonly clock: Clock;
    readonly sleep: Sleep;
    readonly random: () => number;
    /** Aborted when the process receives SIGINT (a second Ctrl-C): every wait ends at once. */
    readonly signal: AbortSignal;
    /** Shows a progress line to the user, on the row of the resource whose operation sends it. */
    readonly report: (message: string) => void;
    /** The engine's call the current operation runs under, when it was heard (its URN, its customTimeouts). */
    readonly engineCall?: () => EngineCall | undefined;
    /** Registers an operation, so an interrupted process answers it before exiting. */
    readonly track: <T>(work: Promise<T>) => Promise<T>;
}

/** Time for the answers of interrupted operations to leave the process before it exits. */
const FLUSH_MS = 100;

/** Which hooks into the SDK's provider server attached. */
export interface HookAttachment {
    /** The engine's Cancel (engineCancel.ts). */
    readonly cancel: boolean;
    /** The engine's calls: their URN and customTimeouts (engineCalls.ts). */
    readonly calls: boolean;
}

const CHECKED = `the hooks were checked against @pulumi/pulumi ${SDK_VERSIONS_CHECKED.join(" and ")}`;

/**
 * The warnings for the hooks into the SDK's provider server that could not attach: each says what the
 * user then loses and can do, so a hook that no longer fits a new SDK is seen, not silently missing.
 */
export function unattachedHooks(attached: HookAttachment): string[] {
    const warnings: string[] = [];
    if (!attached.cancel) {
        warnings.push(
            "pulumi-lifecycle: this provider process cannot hear the engine's Cancel (no gRPC server found " +
                "among its handles): Ctrl-C will not stop an operation in flight; a first Ctrl-C waits for " +
                "running operations to end or reach their timeout, a second one interrupts them " +
                `(${CHECKED}; with one of those, a first Ctrl-C ends a waiting operation at once)`,
        );
    }
    if (!attached.calls) {
        warnings.push(
            "pulumi-lifecycle: this provider process cannot hear the engine's calls (the @grpc/grpc-js it " +
                "runs has no Server.prototype._retrieveHandler): customTimeouts apply only as the program " +
                "recorded them at the last create or update, and progress lines show on the Stack row " +
                `(${CHECKED}; the resource's \`timeouts\` input applies either way)`,
        );
    }
    return warnings;
}

/** The hook warnings this process has given: each is given once, however many contexts it makes. */
const warnedInProcess = new Set<string>();

/**
 * Attaches the hooks into the SDK's provider server: the engine's Cancel calls `onCancel`, and the
 * engine's calls are heard. Reports a warning, once per `warned` (the process by default), for each hook
 * that cannot attach. `handles` and `server` are where the hooks look (the process's by default).
 */
export function attachEngineHooks(
    onCancel: () => void,
    report: Reporter,
    where: { handles?: readonly unknown[]; server?: GrpcServerPrototype; warned?: Set<string> } = {},
): HookAttachment {
    const attached = { cancel: onEngineCancel(onCancel, where.handles), calls: hearEngineCalls(where.server) };
    const warned = where.warned ?? warnedInProcess;
    for (const message of unattachedHooks(attached)) {
        if (warned.has(message)) continue;
        warned.add(message);
        report({ severity: "warning", message });
    }
    return attached;
}

/** The context of this process: real time, the engine's log, SIGINT aborting every wait. */
export function processContext(engineAddress: string | undefined): TaskProcessContext {
    const controller = new AbortController();
    // One signal for the whole process, with a listener per request and per wait in flight (the engine
    // runs up to 16 operations at once): many listeners is the design, not a leak, so Node's warning at
    // 11 is turned off for this signal alone.
    setMaxListeners(0, controller.signal);
    const inFlight = new Set<Promise<unknown>>();
    const reporter = engineReporter(engineAddress);
    attachEngineHooks(() => {
        if (!controller.signal.aborted) controller.abort(new Error("cancelled (Ctrl-C)"));
    }, reporter);
    process.once("SIGINT", () => {
        if (!controller.signal.aborted) controller.abort(new Error("interrupted by SIGINT"));
        void Promise.allSettled([...inFlight]).then(() => {
            setTimeout(() => process.exit(130), FLUSH_MS);
        });
    });
    return {
        clock: systemClock,
        sleep: timerSleep,
        random: Math.random,
        signal: controller.signal,
        report: (message) => reporter({ message, urn: currentEngineCall()?.urn }),
        engineCall: currentEngineCall,
        track: (work) => {
            inFlight.add(work);
            const forget = () => inFlight.delete(work);
            work.then(forget, forget);
            return work;
        },
    };
}
