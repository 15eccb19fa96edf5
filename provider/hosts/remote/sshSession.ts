// One SSH connection to a machine and its SFTP session, through `ssh2`. The host key is checked against
// the pin before anything is sent; without a pin, or with another key, the connection is refused with
// the key the server presented. With `privilege: "sudo"`, the SFTP server runs as `sudo -n <sftpServer>`
// on an exec channel (as `sftp -s "sudo ..."` does), so the file is written as root by a user who may.

import type { Client, ConnectConfig, SFTPWrapper } from "ssh2";
import { messageOf } from "../../shared/text";
import { SshConnectionError, type SshFailure } from "../errors/sshConnectionError";
import { SshHostKeyError } from "../errors/sshHostKeyError";
import {
    DEFAULT_SFTP_SERVER,
    describeMachine,
    type HostConnection,
    type HostCredentials,
    hostKeyPinOf,
} from "../logic/connection";
import { fingerprintOf, publicKeyLineOf } from "../logic/hostKey";
import { Sftp } from "./sftp";

/** How long a connection may take to be ready (TCP, key exchange, login) before it counts as unreachable. */
const READY_TIMEOUT_MS = 20_000;
/** How often an idle connection is probed; after 3 probes unanswered it counts as dropped. */
export const DEFAULT_KEEPALIVE_MS = 15_000;
const KEEPALIVE_COUNT_MAX = 3;

/** A live connection and its SFTP session. */
export interface SshSession {
    readonly files: Sftp;
    /** Resolves when the connection is gone, for whatever reason. */
    readonly closed: Promise<void>;
    end(): void;
}

/** Connects to the machine of `connection` and opens its SFTP session. Throws SshHostKeyError or SshConnectionError. */
export async function openSession(
    connection: HostConnection,
    credentials: HostCredentials,
    keepaliveMs: number = DEFAULT_KEEPALIVE_MS,
): Promise<SshSession> {
    const machine = describeMachine(connection);
    // Loaded on first use: a program or provider that manages no remote entry never loads ssh2.
    const { Client: SshClient } = await import("ssh2");
    const client = new SshClient();
    let presented: Buffer | undefined;
    const pin = hostKeyPinOf(connection);
    const config: ConnectConfig = {
        host: connection.host,
        port: connection.port,
        username: connection.user,
        readyTimeout: READY_TIMEOUT_MS,
        // A machine that stops answering mid-operation (hung, or cut off without a reset) would hold the
        // operation, and its lock, forever: unanswered probes close the connection, failing what waits.
        keepaliveInterval: keepaliveMs,
        keepaliveCountMax: KEEPALIVE_COUNT_MAX,
        hostVerifier: (key: Buffer) => {
            presented = key;
            return pin !== undefined && fingerprintOf(key) === pin.fingerprint;
        },
    };
    if (credentials.privateKey !== undefined) config.privateKey = credentials.privateKey;
    if (credentials.privateKeyPassword !== undefined) config.passphrase = credentials.privateKeyPassword;
    if (credentials.password !== undefined) config.password = credentials.password;
    const agent =
        connection.agentSocketPath ??
        (credentials.privateKey === undefined && credentials.password === undefined
            ? process.env.SSH_AUTH_SOCK
            : undefined);
    if (agent !== undefined) config.agent = agent;

    const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
    await new Promise<void>((resolve, reject) => {
        client.once("ready", () => resolve());
        client.once("error", (error: Error & { level?: string; code?: string }) => {
            if (presented !== undefined && (pin === undefined || fingerprintOf(presented) !== pin.fingerprint)) {
                reject(
                    new SshHostKeyError(
                        machine,
                        publicKeyLineOf(presented),
                        fingerprintOf(presented),
                        pin?.fingerprint,
                    ),
                );
                return;
            }
            reject(new SshConnectionError(machine, failureOf(error), describeFailure(error), { cause: error }));
        });
        try {
            client.connect(config);
        } catch (error) {
            // A key that does not parse: its text is never shown.
            reject(
                new SshConnectionError(
                    machine,
                    "authentication",
                    `the private key cannot be used (${keyProblem(error)})`,
                ),
            );
        }
    });
    try {
        const sftp = await startSftp(client, connection);
        client.on("error", () => {
            // After login, a dropped connection fails the operations under way ("lost"); nothing to add here.
        });
        const files = new Sftp(sftp, machine);
        void closed.then(() => files.markClosed());
        return { files, closed, end: () => client.end() };
    } catch (error) {
        client.end();
        const failure: SshFailure = connection.privilege ? "privilege" : "protocol";
        throw new SshConnectionError(machine, failure, `the SFTP session did not start (${messageOf(error)})`, {
            cause: error,
        });
    }
}

function startSftp(client: Client, connection: HostConnection): Promise<SFTPWrapper> {
    return new Promise<SFTPWrapper>((resolve, reject) => {
        if (connection.privilege === "sudo")
            execInsteadOfSubsystem(client, `sudo -n ${connection.sftpServer ?? DEFAULT_SFTP_SERVER}`);
        client.sftp((error, sftp) => (error ? reject(error) : resolve(sftp)));
    });
}

/**
 * Makes the client's next SFTP session run `command` on an exec channel instead of requesting the
 * `sftp` subsystem. ssh2 (checked with 1.15-1.17) offers no option for it (mscdex/ssh2#287, PR #1296
 * unmerged): its `sftp()` asks its protocol object for the subsystem, and this swaps that one request
 * for an exec. `command` is built only from checked inputs (an absolute path of plain characters).
 */
function execInsteadOfSubsystem(client: Client, command: string): void {
    const protocol = (client as unknown as { _protocol?: Record<string, unknown> })._protocol;
    const subsystem = protocol?.subsystem;
    const exec = protocol?.exec;
    if (typeof subsystem !== "function" || typeof exec !== "function") {
        throw new Error("this version of ssh2 cannot run the SFTP server under sudo (its protocol object changed)");
    }
    (protocol as Record<string, unknown>).subsystem = function (
        this: unknown,
        channel: number,
        name: string,
        wantReply: boolean,
    ) {
        (protocol as Record<string, unknown>).subsystem = subsystem;
        if (name !== "sftp") return subsystem.call(this, channel, name, wantReply);
        return exec.call(this, channel, command, wantReply);
    };
}

function failureOf(error: Error & { level?: string; code?: string }): SshFailure {
    if (error.level === "client-authentication") return "authentication";
    if (error.code === "ECONNREFUSED") return "refused";
    if (error.level === "client-socket" || error.level === "client-timeout") return "unreachable";
    return "protocol";
}

function describeFailure(error: Error & { level?: string; code?: string }): string {
    if (error.level === "client-authentication") return "the server refused every authentication method offered";
    if (error.level === "client-timeout") return `no SSH handshake within ${READY_TIMEOUT_MS / 1000} s`;
    if (error.code) return `${error.code} (${error.message})`;
    return error.message;
}

/** What is wrong with a private key, without any of its text. */
function keyProblem(error: unknown): string {
    const message = messageOf(error);
    if (/passphrase|encrypted/i.test(message)) return "it is encrypted: set `connection.privateKeyPassword`";
    if (/unsupported|parse/i.test(message)) return "it is not a key ssh2 can parse";
    return "it was refused";
}
