// How `hosts import --stack` changes a stack's state without ever overwriting a state it did not read.
//
// The CLI offers no compare-and-swap: `pulumi stack export` takes no lock, and `pulumi stack import`
// replaces the whole state. So the helper
// - holds a lock of its own, keyed by backend URL, project and stack, in the user's private directory:
//   two helpers on one machine take turns (the second waits, saying so);
// - on the local file backend, holds the CLI's own stack lock (diyStackLock.ts) while it re-reads the
//   state: no `pulumi up`, refresh, destroy or import can start meanwhile, and one that is running
//   makes the helper refuse;
// - re-exports the state right before the import and compares it with the state its entries were
//   computed from; a difference (an update that finished meanwhile) means computing again from the new
//   state, and, where no CLI lock is held, reading once more until two reads agree (a few times, then
//   it refuses, having written nothing);
// - starts `pulumi stack import` before that last read, so it is waiting on its standard input: the
//   state goes to it the moment the check passes. The CLI's lock must be released first (the import
//   takes it itself and fails on any other), so there is a window: the time the import takes to decode
//   and check the deployment before it locks. An operation that takes the lock in it and still holds it
//   makes the import fail, writing nothing; only one that takes and releases the lock entirely within it
//   goes unseen. No update can (it starts a language host and runs the program while it holds the
//   lock); a quick state edit (`pulumi state delete`, another `pulumi stack import`) in theory could.
//   Where no lock can be taken, the window is from the last read to the import's own check instead.

import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Deployment, StateImport } from "../hosts/logic/importState";
import { sameState } from "../hosts/logic/importState";
import { LockTimeoutError } from "../shared/errors/lockTimeoutError";
import { acquireFileLock, type HeldLock } from "../shared/files/fileLock";
import { privateDirectory } from "../shared/files/privateDirectory";
import type { Sleep } from "../shared/time";
import { timerSleep } from "../shared/time";
import { CliError } from "./cliError";
import { acquireStackLock, fileBackendRoot, type HeldStackLock, stackLockDirectory } from "./diyStackLock";
import {
    backendUrl,
    type ExportedStack,
    exportStack,
    type PulumiPlace,
    startImport,
    sweepLeftoverCopies,
} from "./pulumiStack";

/** How many times the state may change under the helper before it refuses. */
const ATTEMPTS = 3;
/** How long a helper waits for another helper of the same stack. */
const HELPER_WAIT_MS = 5 * 60_000;
const HELPER_STALE_MS = 60_000;

/** What to record, and where. */
export interface StackRecording {
    /** The stack as the user named it (`dev`, `org/dev`, `org/project/dev`). */
    readonly reference: string;
    /** The project of the current directory, and the stack's name as in its URNs. */
    readonly project: string;
    readonly stackName: string;
    readonly place: PulumiPlace;
    /** The state with the entries added, computed from a state; throws when they cannot be added. */
    readonly compute: (deployment: Deployment) => StateImport;
    /** Runs right before the import (checks that nothing else the import depends on changed). */
    readonly beforeImport: () => Promise<void>;
    /** Progress for the user (stderr). */
    readonly report: (line: string) => void;
    readonly sleep?: Sleep;
}

/**
 * The stack's name as in its URNs, for a reference given in `project`. Refuses a reference to another
 * project's stack (`organization/otherproj/dev`): the entries would get this project's URNs beside the
 * other project's Stack root.
 */
export function stackNameIn(reference: string, project: string, cwd: string): string {
    const parts = reference.split("/");
    const named = parts.length === 3 ? parts[1] : undefined;
    if (named !== undefined && named !== project) {
        throw new CliError(
            `--stack ${reference} is a stack of project ${JSON.stringify(named)}, and the command runs in project ` +
                `${JSON.stringify(project)} (Pulumi.yaml in ${cwd}); nothing was imported. Run the command in the ` +
                `directory of project ${JSON.stringify(named)}, or name a stack of ${JSON.stringify(project)}.`,
            1,
        );
    }
    return parts[parts.length - 1] ?? reference;
}

/** Reads the stack's state, computes the entries from it, and imports the result. */
export async function recordInStack(recording: StackRecording): Promise<StateImport> {
    const { reference, place } = recording;
    for (const path of await sweepLeftoverCopies()) {
        recording.report(`removed ${path}, a copy of a stack's state an earlier version of this command left behind`);
    }
    const url = await backendUrl(place);
    const root = fileBackendRoot(url, place.cwd);
    const lockDirectory =
        root === undefined ? undefined : stackLockDirectory(root, recording.project, recording.stackName);
    let base = await exportStack(reference, place);
    let result = recording.compute(base.deployment);
    const helperLock = await takeHelperLock(url, recording);
    try {
        for (let attempt = 1; ; attempt++) {
            const pending = startImport(reference, place);
            let cliLock: HeldStackLock | undefined;
            try {
                if (lockDirectory !== undefined) cliLock = holdStackLock(lockDirectory, reference);
                const latest = await exportStack(reference, place);
                const same = sameState(base.deployment, latest.deployment);
                if (!same) {
                    result = recording.compute(latest.deployment);
                    recording.report(
                        `stack ${reference} changed after it was read (another update or import finished); ` +
                            "the entries were computed again from its new state",
                    );
                }
                if (same || cliLock) {
                    await recording.beforeImport();
                    const exported: ExportedStack = { ...latest, deployment: result.deployment };
                    cliLock?.release();
                    await pending.commit(exported).catch((error: unknown) => {
                        throw explainImportFailure(error, reference);
                    });
                    return result;
                }
                base = latest;
            } finally {
                cliLock?.release();
                await pending.abandon();
            }
            if (attempt >= ATTEMPTS) {
                throw new CliError(
                    `stack ${reference} changed ${attempt} times while the entries were being recorded (an update ` +
                        "is running on it?); nothing was written. Run the command again when it has finished.",
                    1,
                );
            }
        }
    } finally {
        await helperLock.release();
    }
}

/** Waits for any other helper recording entries in the same stack on this machine. */
async function takeHelperLock(url: string, recording: StackRecording): Promise<HeldLock> {
    // The URL may carry credentials: only its digest is used.
    const key = createHash("sha256")
        .update(`${url}\n${recording.project}\n${recording.stackName}`)
        .digest("hex")
        .slice(0, 24);
    const sleep = recording.sleep ?? timerSleep;
    let told = false;
    try {
        return await acquireFileLock(join(privateDirectory(), `stack-import-${key}`), {
            timeoutMs: HELPER_WAIT_MS,
            staleMs: HELPER_STALE_MS,
            sleep: (ms, signal) => {
                if (!told) {
                    told = true;
                    recording.report(
                        `waiting for another \`pulumi-lifecycle hosts import --stack ${recording.reference}\` to finish`,
                    );
                }
                return sleep(ms, signal);
            },
        });
    } catch (error) {
        if (!(error instanceof LockTimeoutError)) throw error;
        throw new CliError(
            `another \`pulumi-lifecycle hosts import\` of stack ${recording.reference} did not finish within ` +
                `${HELPER_WAIT_MS / 60_000} minutes (${error.message}); nothing was written. Run the command again.`,
            1,
        );
    }
}

/**
 * Takes the CLI's lock and releases it if the process is interrupted meanwhile, so that an interrupted
 * helper never leaves the stack locked against the user's next `pulumi up`.
 */
function holdStackLock(directory: string, stack: string): HeldStackLock {
    const lock = acquireStackLock(directory, stack);
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
    const onSignal = (signal: NodeJS.Signals) => {
        release();
        process.kill(process.pid, signal);
    };
    const release = () => {
        for (const signal of signals) process.removeListener(signal, onSignal);
        lock.release();
    };
    for (const signal of signals) process.once(signal, onSignal);
    return { path: lock.path, release };
}

function explainImportFailure(error: unknown, stack: string): unknown {
    if (!(error instanceof CliError) || !/currently locked/.test(error.message)) return error;
    return new CliError(
        `${error.message.replace(/\.?\s*$/, "")}. Another Pulumi operation took stack ${stack} just before the ` +
            "import, which refused it: nothing was written. Run the command again when it has finished.",
        1,
    );
}
