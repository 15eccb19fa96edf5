// The package as the provider process sees it, and its composition root: `__provider` (see
// shared/providerShim.ts) loads this module by name and asks it for the provider of a resource
// kind. RESOURCE_KINDS is the one registry of the kinds there are.
// Here the providers get what they work through: the hosts-file store, and the task API client built
// from the configured settings. One provider per kind per process, so all the operations the engine
// runs at once share one store and its write coalescing, and one client.
//
// Environment:
//   PULUMI_LIFECYCLE_LOCK_TIMEOUT_MS  longest wait for another process's lock on a hosts file (30000)
//   PULUMI_LIFECYCLE_SSH_KEEPALIVE_MS how often an idle SSH connection is probed (15000; 3 misses drop it)
//   PULUMI_LIFECYCLE_TRACE            a file to which every hosts-file write, and every SSH connection
//                                     opened, appends one JSON line
//   TASK_API_URL, TASK_API_TOKEN      the task API, when stack config does not set them (see tasks/)

import { appendFileSync } from "node:fs";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { HostEntryProvider } from "./hosts/hostEntryProvider";
import { CreateJournal } from "./hosts/io/createJournal";
import { HostsFileStore, type WriteEvent } from "./hosts/io/hostsFileStore";
import { SshMachines } from "./hosts/remote/sshMachines";
import { exitWhenEngineGone } from "./shared/engineWatch";
import { UnknownResourceKindError } from "./shared/errors/unknownResourceKindError";
import { AsyncResourceProvider } from "./tasks/asyncResourceProvider";
import { taskApiSettingsIn } from "./tasks/client/stackConfigFiles";
import { TaskApiClient } from "./tasks/client/taskApiClient";
import { DatastoreProvider } from "./tasks/datastoreProvider";
import { TaskApiConfigError } from "./tasks/errors/taskApiConfigError";
import { processContext, type TaskProcessContext } from "./tasks/processContext";

const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
const STALE_LOCK_MS = 60_000;

/** Every resource kind of the package, by the name its shim forwards, and how its provider is built. */
const RESOURCE_KINDS = {
    "hosts:HostEntry": hostEntryProvider,
    "tasks:Datastore": () => datastoreProvider(taskContext(), process.env),
    "tasks:AsyncResource": () => new AsyncResourceProvider(taskContext(), process.env),
} satisfies Record<string, () => dynamic.ResourceProvider>;

/** A resource kind this version of the package serves. */
export type ResourceKind = keyof typeof RESOURCE_KINDS;

const providers = new Map<string, dynamic.ResourceProvider>();

/**
 * The provider serving `kind` in this process; a kind this version does not know (state written by a
 * newer package) fails with UnknownResourceKindError.
 */
export function providerFor(kind: string): dynamic.ResourceProvider {
    let provider = providers.get(kind);
    if (!provider) {
        if (!Object.hasOwn(RESOURCE_KINDS, kind)) throw new UnknownResourceKindError(kind);
        // The engine starts the provider process with its own address as the first argument.
        exitWhenEngineGone(process.argv[2]);
        provider = RESOURCE_KINDS[kind as ResourceKind]();
        providers.set(kind, provider);
    }
    return provider;
}

/** The HostEntry provider: one store of local files, one SSH session per machine. */
function hostEntryProvider(): dynamic.ResourceProvider {
    const journal = new CreateJournal();
    const trace = process.env.PULUMI_LIFECYCLE_TRACE;
    const keepalive = Number(process.env.PULUMI_LIFECYCLE_SSH_KEEPALIVE_MS);
    const machines = new SshMachines(
        trace ? (machine) => appendFileSync(trace, `${JSON.stringify({ sshConnect: machine })}\n`) : undefined,
        Number.isFinite(keepalive) && keepalive > 0 ? keepalive : undefined,
    );
    return new HostEntryProvider(hostsFileStore(process.env, journal), journal, (connection, credentials) =>
        machines.filesOn(connection, credentials),
    );
}

let sharedTaskContext: TaskProcessContext | undefined;

/** One context for every task kind of this process: one Cancel hook, one SIGINT handler. */
function taskContext(): TaskProcessContext {
    sharedTaskContext ??= processContext(process.argv[2]);
    return sharedTaskContext;
}

/** The Datastore provider, which connects to the task API its configuration names. */
function datastoreProvider(context: TaskProcessContext, env: NodeJS.ProcessEnv): DatastoreProvider {
    return new DatastoreProvider(context, env, (settings) => {
        const { url, token, schedule, requestTimeoutMs } = settings;
        if (!url) throw new TaskApiConfigError("url");
        if (!token) throw new TaskApiConfigError("token");
        return new TaskApiClient({
            baseUrl: url,
            token,
            clock: context.clock,
            sleep: context.sleep,
            random: context.random,
            schedule,
            ...(requestTimeoutMs ? { requestTimeoutMs } : {}),
            // The engine starts the provider process in the project's directory.
            settings: taskApiSettingsIn(process.cwd()),
        });
    });
}

/** The store with the settings the environment gives, recording creates in `journal`. */
export function hostsFileStore(env: NodeJS.ProcessEnv, journal?: CreateJournal): HostsFileStore {
    const timeout = Number(env.PULUMI_LIFECYCLE_LOCK_TIMEOUT_MS);
    const trace = env.PULUMI_LIFECYCLE_TRACE;
    return new HostsFileStore({
        lock: {
            timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_LOCK_TIMEOUT_MS,
            staleMs: STALE_LOCK_MS,
        },
        newFileEnding: process.platform === "win32" ? "\r\n" : "\n",
        ...(journal ? { journal } : {}),
        ...(trace ? { onWrite: (event: WriteEvent) => appendFileSync(trace, `${JSON.stringify(event)}\n`) } : {}),
    });
}
