// `hosts.HostEntry`: one line of a hosts file, managed by Pulumi.
//
// Type token: pulumi-nodejs:dynamic/hosts:HostEntry. Id: "<family>/<canonical name>" (e.g.
// "ipv4/web.internal"), with "@<host>:<port>" after it for an entry on another machine (`connection`);
// stable across in-place updates. Operations: see hostEntryProvider.ts.

import * as pulumi from "@pulumi/pulumi";

import { ShimmedResource } from "../shared/shimmedResource";

import { HOST_ENTRY_MODULE, HOST_ENTRY_SHIM, HOST_ENTRY_TYPE } from "./hostEntrySchema";
import { programDefaultFile } from "./io/programDefaultFile";
import { REMOTE_DEFAULT_FILE } from "./logic/connection";

/** The arguments of a `hosts.HostEntry`. */
export interface HostEntryArgs {
    /** The IPv4 or IPv6 address the names resolve to. Changing its family (IPv4 to IPv6) replaces the entry. */
    address: pulumi.Input<string>;
    /**
     * Hostnames: the canonical name first, then aliases. At least one; letters, digits and hyphens in
     * dot-separated labels of 1-63 characters, 253 in all; stored lowercase. Changing the canonical name
     * replaces the entry; aliases update in place.
     */
    names: pulumi.Input<pulumi.Input<string>[]>;
    /** Optional inline comment, written after `#` on the entry's line. One line of printable text. */
    comment?: pulumi.Input<string>;
    /**
     * The hosts file. Default: stack config `pulumi-lifecycle:hostsFile`, then the HOSTS_FILE environment
     * variable, then the operating system's hosts file (`/etc/hosts`, or
     * `%SystemRoot%\System32\drivers\etc\hosts` on Windows). Changing it to another file replaces
     * the entry.
     *
     * A relative path is stored as written and resolved by the provider process against its working
     * directory, which the Pulumi engine sets to the program's directory: the project directory (where
     * Pulumi.yaml is), or, when Pulumi.yaml sets `main`, that folder or the folder holding that file
     * (`main: src/index.ts` makes `hosts` mean `src/hosts`). Use an absolute path to avoid depending on it.
     */
    file?: pulumi.Input<string>;
    /**
     * When the names are already in the file on one line identical to this entry (address, names and
     * comment), take that line over instead of failing. A line that differs still fails, naming each
     * difference. Default false.
     */
    adopt?: pulumi.Input<boolean>;
    /**
     * The machine whose hosts file holds the entry, reached over SSH (SFTP); leave it out for the machine
     * that runs Pulumi. `file` then defaults to `/etc/hosts` and must be absolute. `host` and `port` are
     * the machine: changing either replaces the entry (created on the new machine, then removed from the
     * old); the user, host key and credentials update in place. `privateKey`, `privateKeyPassword` and
     * `password` are stored in state as secrets (encrypted) and never shown in errors or logs.
     */
    connection?: pulumi.Input<HostEntryConnection>;
}

/** How to reach the machine of a remote entry: the shape of `@pulumi/command`'s `remote.Command` connection. */
export interface HostEntryConnection {
    /** Hostname or IP address of the SSH server. */
    host: pulumi.Input<string>;
    /** SSH port. Default 22. */
    port?: pulumi.Input<number>;
    /** Login user. Default "root". */
    user?: pulumi.Input<string>;
    /**
     * The server's public host key (`ssh-ed25519 AAAA...`, as `ssh-keyscan -t ed25519 <host>` or the
     * machine's `/etc/ssh/ssh_host_ed25519_key.pub` shows it) or its fingerprint (`SHA256:...`). Every
     * connection checks it before sending anything. Without it the operation fails, naming the key the
     * server presented so you can check it and pin it: there is no silent trust on first use.
     */
    hostKey?: pulumi.Input<string>;
    /** An OpenSSH or PEM private key (the file's text). Stored as a secret. */
    privateKey?: pulumi.Input<string>;
    /** The passphrase of `privateKey`. Stored as a secret. */
    privateKeyPassword?: pulumi.Input<string>;
    /** The user's password. Stored as a secret. */
    password?: pulumi.Input<string>;
    /** The SSH agent's socket. Default: SSH_AUTH_SOCK, when neither a key nor a password is given. */
    agentSocketPath?: pulumi.Input<string>;
    /**
     * "sudo" to read and write the file as root through `sudo -n <sftpServer>`, for a user allowed to run
     * that one command without a password (`<user> ALL=(root) NOPASSWD: /usr/lib/openssh/sftp-server`).
     * That grants the user root's access to every file over SFTP: prefer giving the user write access to
     * the hosts file and its directory where you can.
     */
    privilege?: pulumi.Input<"sudo">;
    /** The SFTP server `privilege` runs. Default /usr/lib/openssh/sftp-server (Debian, Ubuntu, Alpine); /usr/libexec/openssh/sftp-server on Red Hat and Fedora. */
    sftpServer?: pulumi.Input<string>;
}

/** What `HostEntry.get` needs besides the id: the file, when it is not the default one, and the connection of a remote entry. */
export interface HostEntryState {
    file?: pulumi.Input<string>;
    connection?: pulumi.Input<HostEntryConnection>;
}

const SECRET_FIELDS = ["privateKey", "privateKeyPassword", "password"] as const;

/**
 * Splits a connection into what state may show (`connection`) and its secrets (`credentials`, marked
 * secret), so a diff still shows a changed host in clear while keys and passwords stay encrypted.
 */
function splitConnection(connection: pulumi.Input<HostEntryConnection> | undefined): {
    connection?: pulumi.Output<unknown>;
    credentials?: pulumi.Output<unknown>;
} {
    if (connection === undefined) return {};
    const resolved: pulumi.Output<unknown> = pulumi.output(connection);
    const part = (secret: boolean) =>
        resolved.apply((value) =>
            Object.fromEntries(
                Object.entries((value ?? {}) as Record<string, unknown>).filter(
                    ([field]) => (SECRET_FIELDS as readonly string[]).includes(field) === secret,
                ),
            ),
        );
    const visible = part(false);
    const secrets = part(true);
    return { connection: pulumi.unsecret(visible), credentials: pulumi.secret(secrets) };
}

/** Where a remote entry's file is when `file` is left out. */
function defaultFileFor(connection: unknown): string {
    return connection === undefined ? programDefaultFile() : REMOTE_DEFAULT_FILE;
}

/**
 * The stack running the program, `<organization>/<project>/<stack>`: the provider records it with each
 * line a create writes, so that a create whose answer never reached the stack (a second Ctrl-C) is
 * recognised as this stack's own by the next `up`, and never as another stack's.
 */
function ownerStack(): string {
    let organization = "";
    try {
        organization = pulumi.getOrganization();
    } catch {
        // An engine too old to tell the organization: project and stack still name the stack.
    }
    return `${organization}/${pulumi.getProject()}/${pulumi.getStack()}`;
}

/** A line of a hosts file, with its whole lifecycle managed by Pulumi. */
export class HostEntry extends ShimmedResource {
    /** The address, in canonical form (RFC 5952 for IPv6). */
    declare readonly address: pulumi.Output<string>;
    /** Canonical name first, then aliases; lowercase. */
    declare readonly names: pulumi.Output<string[]>;
    /** The inline comment, if any. */
    declare readonly comment: pulumi.Output<string | undefined>;
    /** The hosts file, as given or defaulted. */
    declare readonly file: pulumi.Output<string>;
    /** Whether an identical existing line may be taken over on create. */
    declare readonly adopt: pulumi.Output<boolean>;
    /** The entry's 1-based line number when it was last written or refreshed. */
    declare readonly line: pulumi.Output<number>;

    /** The machine of a remote entry, without its secrets; absent for this machine's file. */
    declare readonly connection: pulumi.Output<Omit<HostEntryConnection, (typeof SECRET_FIELDS)[number]> | undefined>;

    /** Declares a hosts-file entry. */
    constructor(name: string, args: HostEntryArgs, opts?: pulumi.CustomResourceOptions) {
        const props = {
            ...args,
            ...splitConnection(args.connection),
            file: args.file ?? defaultFileFor(args.connection),
            line: undefined,
            __owner: ownerStack(),
        };
        // Credentials are secret in state even where the program passed them in clear.
        const secrets = { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), "credentials"] };
        super({ module: HOST_ENTRY_MODULE, type: HOST_ENTRY_TYPE, shim: HOST_ENTRY_SHIM }, name, props, secrets);
    }

    /**
     * Looks up an existing entry by id ("ipv4/web.internal") without managing it: the engine reads the
     * line from the file. Fails when the line is not there.
     */
    static get(
        name: string,
        id: pulumi.Input<pulumi.ID>,
        state?: HostEntryState,
        opts?: pulumi.CustomResourceOptions,
    ): HostEntry {
        const props = {
            file: state?.file ?? defaultFileFor(state?.connection),
            connection: state?.connection,
            address: undefined,
            names: undefined,
            comment: undefined,
            adopt: undefined,
        } as unknown as HostEntryArgs;
        return new HostEntry(name, props, { ...opts, id });
    }
}
