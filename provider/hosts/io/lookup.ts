// Read helpers for Pulumi programs: the address lines of a hosts file as resolvers see them, for
// example to reuse an address the file already maps. They read the file when called, on the machine
// that runs the program, without the provider's lock (see readHostsFile.ts), and never write.

import { quote } from "../../shared/text";
import { type AddressFamily, addressFamily, canonicalAddress } from "../logic/address";
import { foldCase } from "../logic/hostname";
import type { HostsDocument, HostsLine, ParsedEntry } from "../logic/hostsDocument";
import { lineMatches } from "../logic/lineFilter";
import { programDefaultFile } from "./programDefaultFile";
import { readHostsDocument } from "./readHostsFile";
import { readRemoteHostsDocument } from "./readRemoteHostsFile";

/** An address line of a hosts file. */
export interface HostsFileEntry {
    /** Canonical address (RFC 5952 for IPv6). */
    readonly address: string;
    readonly family: AddressFamily;
    /** Names in file order, lowercase (ASCII letters only, as resolvers compare them). */
    readonly names: string[];
    /** Text after the first "#", trimmed; absent when there is none. */
    readonly comment?: string;
    /** 1-based line number. */
    readonly line: number;
}

/**
 * The machine whose hosts file a read helper reads, over SSH: the fields of a HostEntry's `connection`,
 * as plain values (resolve Outputs first, e.g. inside `apply`). The host key must be pinned.
 */
export interface HostsFileConnection {
    host: string;
    port?: number;
    user?: string;
    hostKey: string;
    privateKey?: string;
    privateKeyPassword?: string;
    password?: string;
    agentSocketPath?: string;
    privilege?: "sudo";
    sftpServer?: string;
}

/** Which file `listHostEntries` reads and which of its lines it returns. */
export interface ListHostEntriesOptions {
    /**
     * The hosts file. Default: the one a `hosts.HostEntry` without `file` uses (stack config
     * `pulumi-lifecycle:hostsFile`, then HOSTS_FILE, then the operating system's hosts file); with
     * `connection`, /etc/hosts of that machine (an absolute path there).
     */
    file?: string;
    /** Read the file of another machine, over one SSH connection opened for the call and closed after it. */
    connection?: HostsFileConnection;
    /** Keep only lines whose address or one of whose names this pattern matches. */
    match?: RegExp;
}

/** What `findHostEntries` looks for: lines carrying `name`, lines mapping `address`, or both at once. */
export interface HostEntryQuery {
    /** A hostname; compared ignoring the case of ASCII letters, as resolvers do. */
    name?: string;
    /** An IPv4 or IPv6 address; compared in canonical form, so `0:0:0:0:0:0:0:1` finds `::1`. */
    address?: string;
    /** The hosts file; the same default as `ListHostEntriesOptions.file`. */
    file?: string;
    /** Another machine's file, as `ListHostEntriesOptions.connection`. */
    connection?: HostsFileConnection;
}

/**
 * Lists the address lines of a hosts file in file order (blank lines, comments and lines resolvers
 * ignore are left out). Rejects with HostsFileNotFoundError when the file does not exist and with
 * HostsFileError when it cannot be read; with `connection`, also SshHostKeyError or SshConnectionError
 * when the machine cannot be reached, and ConnectionSettingsError for a connection that fails its checks.
 */
export async function listHostEntries(options: ListHostEntriesOptions = {}): Promise<HostsFileEntry[]> {
    const doc = options.connection
        ? await readRemoteHostsDocument(options.connection, options.file)
        : await readHostsDocument(options.file ?? programDefaultFile());
    const pattern = options.match && new RegExp(options.match);
    return doc.allLines().flatMap((line) => {
        if (!line.entry || (pattern && !lineMatches(pattern, line))) return [];
        return [toHostsFileEntry(doc, line, line.entry)];
    });
}

/**
 * Finds the address lines that carry `query.name` and map `query.address` (each only when given). A
 * name may be on one line per family, or on several when the file was edited by hand, so this answers
 * a list. Throws when the query names neither, or when `address` is not an IP address, rather than
 * answering with every line or none.
 */
export async function findHostEntries(query: HostEntryQuery): Promise<HostsFileEntry[]> {
    const { name, address, file, connection } = query;
    if (name === undefined && address === undefined) {
        throw new TypeError("findHostEntries needs a name, an address, or both");
    }
    if (address !== undefined && !addressFamily(address)) {
        throw new TypeError(`findHostEntries: ${quote(address)} is not an IPv4 or IPv6 address`);
    }
    const wantedName = name === undefined ? undefined : foldCase(name);
    const wantedAddress = address === undefined ? undefined : canonicalAddress(address);
    const entries = await listHostEntries({
        ...(file === undefined ? {} : { file }),
        ...(connection === undefined ? {} : { connection }),
    });
    return entries.filter(
        (entry) =>
            (wantedName === undefined || entry.names.includes(wantedName)) &&
            (wantedAddress === undefined || entry.address === wantedAddress),
    );
}

function toHostsFileEntry(doc: HostsDocument, line: HostsLine, entry: ParsedEntry): HostsFileEntry {
    const names = entry.names.map(foldCase);
    const found = { address: entry.address, family: entry.family, names, line: doc.lineNumber(line) };
    return entry.comment === undefined ? found : { ...found, comment: entry.comment };
}
