// The SSH connections of one process: one per machine and login, opened on first use, shared by every
// entry on that machine, reopened by the next operation once it dropped. A machine that cannot be
// reached fails the operations on its files only; a failed connection is not cached, so the next
// operation tries again.

import { createHash } from "node:crypto";
import { describeMachine, type HostConnection, type HostCredentials, sessionKey } from "../logic/connection";
import { RemoteFiles } from "./remoteFiles";
import type { Sftp } from "./sftp";
import { DEFAULT_KEEPALIVE_MS, openSession, type SshSession } from "./sshSession";

/** Counts, for the benchmark and tests: connections opened per machine. */
export interface SshMachinesStats {
    readonly connectionsOpened: number;
}

/** The machines this process reaches over SSH. */
export class SshMachines {
    private readonly sessions = new Map<string, Promise<SshSession>>();
    private readonly access = new Map<string, RemoteFiles>();
    private opened = 0;

    /**
     * @param onOpen told of each connection opened, `user@host:port` (PULUMI_LIFECYCLE_TRACE records it)
     * @param keepaliveMs how often an idle connection is probed (3 unanswered probes drop it)
     * @param sleep how the files wait (for a rewrite by another tool to land); tests pass their own
     */
    constructor(
        private readonly onOpen?: (machine: string) => void,
        private readonly keepaliveMs: number = DEFAULT_KEEPALIVE_MS,
        private readonly sleep?: (ms: number) => Promise<void>,
    ) {}

    /** The hosts files of the machine `connection` reaches (the same object for the same machine and login). */
    filesOn(connection: HostConnection, credentials: HostCredentials): RemoteFiles {
        const key = sessionKey(connection, credentials);
        let files = this.access.get(key);
        if (!files) {
            const session = createHash("sha256").update(key).digest("hex").slice(0, 12);
            files = new RemoteFiles(
                describeMachine(connection),
                session,
                () => this.sftp(key, connection, credentials),
                this.sleep,
            );
            this.access.set(key, files);
        }
        return files;
    }

    get stats(): SshMachinesStats {
        return { connectionsOpened: this.opened };
    }

    /** Closes every connection. */
    async close(): Promise<void> {
        const sessions = [...this.sessions.values()];
        this.sessions.clear();
        await Promise.all(
            sessions.map((session) =>
                session.then(
                    (s) => s.end(),
                    () => undefined,
                ),
            ),
        );
    }

    private async sftp(key: string, connection: HostConnection, credentials: HostCredentials): Promise<Sftp> {
        let session = this.sessions.get(key);
        if (session) {
            const live = await session.catch(() => undefined);
            // A failed attempt answers its error to everyone who waited for it; a dropped one is reopened.
            if (live === undefined) return (await session).files;
            if (live.files.connected) return live.files;
            this.forget(key, session);
            session = this.sessions.get(key);
        }
        if (!session) {
            this.opened++;
            this.onOpen?.(describeMachine(connection));
            session = openSession(connection, credentials, this.keepaliveMs);
            this.sessions.set(key, session);
            session.then(
                (live) => void live.closed.then(() => this.forget(key, session)),
                () => this.forget(key, session),
            );
        }
        return (await session).files;
    }

    private forget(key: string, session: Promise<SshSession> | undefined): void {
        if (this.sessions.get(key) === session) this.sessions.delete(key);
    }
}
