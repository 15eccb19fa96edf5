// The resolved shapes of a HostEntry, shared by the program side (the resource class) and the
// provider side (check/diff/create/read/update/delete). No Pulumi types here: this file is pure data.

/** Resolved inputs of a `hosts.HostEntry`, as `check` returns them (validated and normalized). */
export interface HostEntryInputs {
    /** IPv4 or IPv6 literal, in canonical form (RFC 5952 for IPv6). */
    address: string;
    /** Canonical name first, then aliases; lowercase, no duplicates. */
    names: string[];
    /** Inline comment written after `#` on the entry's line; absent when there is none. */
    comment?: string;
    /** Path of the hosts file, as given (relative paths are relative to the Pulumi project). */
    file: string;
    /** Whether `create` may take over an identical line that already exists. */
    adopt: boolean;
}

/** State of a `hosts.HostEntry`: every input, plus what only the file can tell. */
export interface HostEntryOutputs extends HostEntryInputs {
    /** 1-based number of the entry's line in the file when it was last written or read. */
    line: number;
}

/** Resource type token module and name: `pulumi-nodejs:dynamic/hosts:HostEntry`. */
export const HOST_ENTRY_MODULE = "hosts";
export const HOST_ENTRY_TYPE = "HostEntry";
