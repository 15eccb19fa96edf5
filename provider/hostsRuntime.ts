// The composition of the hosts-file kind (see runtime.ts): the HostEntry provider over one store of this
// machine's files, and the files of other machines over SSH, one session per machine and login.
//
// Environment:
//   PULUMI_LIFECYCLE_LOCK_TIMEOUT_MS  longest wait for another process's lock on a hosts file (30000)
//   PULUMI_LIFECYCLE_SSH_KEEPALIVE_MS how often an idle SSH connection is probed (15000; 3 misses drop it)
//   PULUMI_LIFECYCLE_TRACE            a file to which every hosts-file write, and every SSH connection
//                                     opened, appends one JSON line

import { appendFileSync } from "node:fs";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { HostEntryProvider } from "./hosts/hostEntryProvider";
import { CreateJournal } from "./hosts/io/createJournal";
import { HostsFileStore, type WriteEvent } from "./hosts/io/hostsFileStore";
import { SshMachines } from "./hosts/remote/sshMachines";

const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
const STALE_LOCK_MS = 60_000;

/** The HostEntry provider: one store of local files, one SSH session per machine. */
export function hostEntryProvider(): dynamic.ResourceProvider {
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
