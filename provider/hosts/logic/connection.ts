// The machine a remote HostEntry lives on, and how to reach it: the shape users know from
// `@pulumi/command`'s `remote.Command` connection. Pure: validation, normalization, identity and naming.
// Nothing here opens a socket; everything the SSH layer (hosts/remote/) sends or runs comes through
// `checkConnection` first, so no unvalidated text reaches a remote command line or path.

import { createHash } from "node:crypto";
import { describeCharacter, describeInput, quote } from "../../shared/text";
import { isUnknown } from "../../shared/unknown";
import { ConnectionSettingsError } from "../errors/connectionSettingsError";
import { addressFamily, canonicalAddress } from "./address";
import { type HostKeyPin, parseHostKeyPin } from "./hostKey";
import { foldCase, hostnameProblem } from "./hostname";

/** How to reach a machine, as state holds it in clear: no secrets. */
export interface HostConnection {
    /** Hostname or IP address of the SSH server. With `port`, it is the machine: changing either replaces. */
    host: string;
    /** SSH port (default 22). */
    port: number;
    /** Login user (default "root"). */
    user: string;
    /**
     * The server's public host key as `ssh-keyscan` or `known_hosts` shows it (`ssh-ed25519 AAAA...`), or
     * its SHA256 fingerprint (`SHA256:...`). Required to connect: without it, the first operation fails
     * with the key the server presented and how to pin it, never trusting it silently.
     */
    hostKey?: string;
    /** The SSH agent's socket (default: SSH_AUTH_SOCK of the provider process, when no key or password is given). */
    agentSocketPath?: string;
    /** "sudo": the file is read and written by `sudo -n <sftpServer>`, as root, for a user who may run it without a password. */
    privilege?: "sudo";
    /** The SFTP server run under `privilege` (default /usr/lib/openssh/sftp-server; /usr/libexec/openssh/sftp-server on Red Hat). */
    sftpServer?: string;
}

/** The secrets of a connection, kept apart so state can hold them encrypted. */
export interface HostCredentials {
    /** An OpenSSH or PEM private key. */
    privateKey?: string;
    /** The passphrase of `privateKey`. */
    privateKeyPassword?: string;
    password?: string;
}

export const DEFAULT_SSH_PORT = 22;
export const DEFAULT_SSH_USER = "root";
export const DEFAULT_SFTP_SERVER = "/usr/lib/openssh/sftp-server";
/** The hosts file a remote entry without `file` edits: every Unix machine's. */
export const REMOTE_DEFAULT_FILE = "/etc/hosts";

const CONNECTION_FIELDS = new Set(["host", "port", "user", "hostKey", "agentSocketPath", "privilege", "sftpServer"]);
const CREDENTIAL_FIELDS = new Set(["privateKey", "privateKeyPassword", "password"]);
/** POSIX portable user names (what useradd accepts by default). */
const USER_NAME = /^[a-z_][a-z0-9_.-]{0,31}\$?$/i;
/** An absolute path made only of characters that need no quoting in a command line. */
const PLAIN_ABSOLUTE_PATH = /^\/[A-Za-z0-9._+/-]*$/;
const CONTROL = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

type Fail = (property: string, reason: string) => void;

/** A checked connection and its credentials; undefined parts where the input had none or was unknown. */
export interface CheckedConnection {
    connection: HostConnection;
    credentials: HostCredentials;
}

/**
 * checkConnection for a caller without a check phase (a get, the read helpers): `alsoCheck` adds the
 * caller's own checks, and any failure is one ConnectionSettingsError naming every failing field.
 */
export function usableConnection(
    value: unknown,
    credentials: unknown,
    alsoCheck?: (fail: Fail) => void,
): CheckedConnection | undefined {
    const failures: { property: string; reason: string }[] = [];
    const fail: Fail = (property, reason) => failures.push({ property, reason });
    const checked = checkConnection(value, credentials, fail);
    alsoCheck?.(fail);
    if (failures.length > 0) throw new ConnectionSettingsError(failures);
    return checked;
}

/**
 * Validates and normalizes a `connection` input and its `credentials` (the resource class splits the
 * secrets out of `connection`). Failures name `connection.<field>`; a secret's value is never quoted.
 */
export function checkConnection(value: unknown, credentials: unknown, fail: Fail): CheckedConnection | undefined {
    if (value === undefined || value === null) return undefined;
    if (isUnknown(value)) return { connection: value as HostConnection, credentials: {} };
    if (typeof value !== "object" || Array.isArray(value)) {
        fail("connection", "must be an object with at least `host` (and `hostKey`)");
        return undefined;
    }
    const given = value as Record<string, unknown>;
    for (const field of Object.keys(given)) {
        if (!CONNECTION_FIELDS.has(field) && !CREDENTIAL_FIELDS.has(field) && given[field] !== undefined) {
            fail(
                `connection.${field}`,
                `is not a connection setting; use ${[...CONNECTION_FIELDS, ...CREDENTIAL_FIELDS].join(", ")}`,
            );
        }
    }
    const connection: HostConnection = {
        host: checkHost(given.host, fail),
        port: checkPort(given.port, fail),
        user: checkUser(given.user, fail),
    };
    const hostKey = checkHostKey(given.hostKey, fail);
    if (hostKey !== undefined) connection.hostKey = hostKey;
    const agent = checkPath("agentSocketPath", given.agentSocketPath, fail);
    if (agent !== undefined) connection.agentSocketPath = agent;
    if (given.privilege !== undefined && given.privilege !== null && !isUnknown(given.privilege)) {
        if (given.privilege === "sudo") connection.privilege = "sudo";
        else fail("connection.privilege", `must be "sudo" (or left out), not ${describeInput(given.privilege)}`);
    }
    const sftpServer = checkPath("sftpServer", given.sftpServer, fail);
    if (sftpServer !== undefined) connection.sftpServer = sftpServer;
    return {
        connection,
        credentials: checkCredentials({ ...pick(given, CREDENTIAL_FIELDS), ...asObject(credentials) }, fail),
    };
}

/** The machine of a connection, `host:port` (`[v6]:port`): part of the entry's id. */
export function machineOf(connection: Pick<HostConnection, "host" | "port">): string {
    const host = addressFamily(connection.host) === "ipv6" ? `[${connection.host}]` : connection.host;
    return `${host}:${connection.port}`;
}

/** Parses `host:port` as machineOf writes it. */
export function parseMachine(machine: string): { host: string; port: number } | undefined {
    const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]@\s/]+)):([0-9]{1,5})$/i.exec(machine);
    const host = match?.[1] ?? match?.[2];
    const port = Number(match?.[3]);
    if (host === undefined || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
    return { host, port };
}

/** How messages name the machine: `root@web1.internal:22`. */
export function describeMachine(connection: Pick<HostConnection, "host" | "port" | "user">): string {
    return `${connection.user}@${machineOf(connection)}`;
}

/**
 * What tells two SSH sessions apart: the machine, who logs in, how they are authenticated (a digest of
 * the credentials, never the credentials) and the privilege step. One session serves each.
 */
export function sessionKey(connection: HostConnection, credentials: HostCredentials): string {
    const secrets = createHash("sha256")
        .update(JSON.stringify([credentials.privateKey, credentials.privateKeyPassword, credentials.password]))
        .digest("hex")
        .slice(0, 16);
    const privilege =
        connection.privilege === undefined
            ? ""
            : `${connection.privilege}:${connection.sftpServer ?? DEFAULT_SFTP_SERVER}`;
    return [
        describeMachine(connection),
        connection.hostKey ?? "",
        connection.agentSocketPath ?? "",
        privilege,
        secrets,
    ].join("|");
}

/** The pinned host key of a checked connection, parsed. */
export function hostKeyPinOf(connection: HostConnection): HostKeyPin | undefined {
    return connection.hostKey === undefined ? undefined : parseHostKeyPin(connection.hostKey);
}

function checkHost(value: unknown, fail: Fail): string {
    if (isUnknown(value)) return value as string;
    if (typeof value !== "string" || value.length === 0) {
        fail("connection.host", `must be the SSH server's hostname or IP address, not ${describeInput(value)}`);
        return "";
    }
    const unbracketed = /^\[.*\]$/.test(value) ? value.slice(1, -1) : value;
    if (addressFamily(unbracketed)) return canonicalAddress(unbracketed);
    const problem = hostnameProblem(value);
    if (problem) {
        fail("connection.host", `${quote(value)} is neither an IP address nor a hostname: it ${problem}`);
        return value;
    }
    return foldCase(value);
}

function checkPort(value: unknown, fail: Fail): number {
    if (value === undefined || value === null) return DEFAULT_SSH_PORT;
    if (isUnknown(value)) return value as number;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 65535) {
        fail("connection.port", `must be a TCP port from 1 to 65535, not ${describeInput(value)}`);
        return DEFAULT_SSH_PORT;
    }
    return value;
}

function checkUser(value: unknown, fail: Fail): string {
    if (value === undefined || value === null) return DEFAULT_SSH_USER;
    if (isUnknown(value)) return value as string;
    if (typeof value !== "string" || !USER_NAME.test(value)) {
        fail(
            "connection.user",
            `must be a user name (letters, digits, "_", ".", "-"; at most 32), not ${describeInput(value)}`,
        );
        return DEFAULT_SSH_USER;
    }
    return value;
}

function checkHostKey(value: unknown, fail: Fail): string | undefined {
    if (value === undefined || value === null || isUnknown(value)) return value as string | undefined;
    if (typeof value !== "string") {
        fail(
            "connection.hostKey",
            `must be the server's public host key or its SHA256 fingerprint, not ${describeInput(value)}`,
        );
        return undefined;
    }
    const pin = parseHostKeyPin(value);
    if (!pin) {
        fail(
            "connection.hostKey",
            `${quote(value.length > 80 ? `${value.slice(0, 77)}...` : value)} is neither a public key ("ssh-ed25519 AAAA...", ` +
                'as `ssh-keyscan <host>` prints it) nor a fingerprint ("SHA256:...", as `ssh-keygen -lf <key>` prints it)',
        );
        return undefined;
    }
    return pin.text;
}

function checkPath(field: string, value: unknown, fail: Fail): string | undefined {
    if (value === undefined || value === null || isUnknown(value)) return value as string | undefined;
    if (typeof value !== "string" || !PLAIN_ABSOLUTE_PATH.test(value) || value.split("/").includes("..")) {
        const bad = typeof value === "string" ? [...value].find((c) => CONTROL.test(c) || /\s/.test(c)) : undefined;
        const why = bad === undefined ? "" : ` (it contains ${describeCharacter(bad)})`;
        fail(
            `connection.${field}`,
            `must be an absolute path of letters, digits and "._+-/" without "..", not ${describeInput(value)}${why}`,
        );
        return undefined;
    }
    return value;
}

function checkCredentials(given: Record<string, unknown>, fail: Fail): HostCredentials {
    const credentials: HostCredentials = {};
    for (const field of CREDENTIAL_FIELDS) {
        const value = given[field];
        if (value === undefined || value === null) continue;
        if (isUnknown(value)) continue;
        if (typeof value !== "string" || value.length === 0) {
            // Never the value: it is a secret.
            fail(
                `connection.${field}`,
                `must be a non-empty string (got ${typeof value === "string" ? "an empty string" : typeof value})`,
            );
            continue;
        }
        credentials[field as keyof HostCredentials] = value;
    }
    if (credentials.privateKey !== undefined && !/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(credentials.privateKey)) {
        fail(
            "connection.privateKey",
            "is not a private key: expected the text of an OpenSSH or PEM key file (-----BEGIN ... PRIVATE KEY-----)",
        );
    }
    return credentials;
}

function pick(given: Record<string, unknown>, fields: Set<string>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(given).filter(([field]) => fields.has(field)));
}

function asObject(value: unknown): Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : {};
}
