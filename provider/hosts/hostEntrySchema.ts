// The resolved shapes of a HostEntry, shared by the program side (the resource class) and the
// provider side (check/diff/create/read/update/delete). No Pulumi types here: this file is pure data.

import type { ListsEvery } from "../shared/stateShape";
import type { HostConnection, HostCredentials } from "./logic/connection";

export type { HostConnection, HostCredentials } from "./logic/connection";

/** Resolved inputs of a `hosts.HostEntry`, as `check` returns them (validated and normalized). */
export interface HostEntryInputs {
    /** IPv4 or IPv6 literal, in canonical form (RFC 5952 for IPv6). */
    address: string;
    /** Canonical name first, then aliases; lowercase, no duplicates. */
    names: string[];
    /** Inline comment written after `#` on the entry's line; absent when there is none. */
    comment?: string;
    /** Path of the hosts file, as given (a relative path resolves against the program's directory: the project's, or that of Pulumi.yaml's `main`). */
    file: string;
    /** Whether `create` may take over an identical line that already exists. */
    adopt: boolean;
    /** The machine the file is on, over SSH; absent for the machine that runs the provider. */
    connection?: HostConnection;
    /** The connection's secrets (key, passphrase, password); the resource class marks them secret. */
    credentials?: HostCredentials;
    /**
     * The stack that declares the entry, `<organization>/<project>/<stack>`, set by the resource class
     * (never by users): the create journal tells this stack's own interrupted writes by it. Not an output.
     */
    __owner?: string;
}

/** State of a `hosts.HostEntry`: every input but `__owner`, plus what only the file can tell. */
export interface HostEntryOutputs extends Omit<HostEntryInputs, "__owner"> {
    /** 1-based number of the entry's line in the file when it was last written or read. */
    line: number;
    /** The shape of this state (shared/stateShape.ts); absent in state written before versions were recorded. */
    stateVersion?: number;
}

/** Every input a user sets (`__owner` is the resource class's); the type check keeps the list whole. */
export const HOST_ENTRY_INPUT_KEYS = [
    "address",
    "names",
    "comment",
    "file",
    "adopt",
    "connection",
    "credentials",
] as const satisfies readonly (keyof HostEntryInputs)[];

/** What the state adds to the inputs (which `pulumi import` passes back as inputs). */
export const HOST_ENTRY_STATE_KEYS = ["line", "stateVersion"] as const satisfies readonly (keyof HostEntryOutputs)[];
const everyHostEntryField: ListsEvery<
    HostEntryOutputs & HostEntryInputs,
    (typeof HOST_ENTRY_INPUT_KEYS)[number] | (typeof HOST_ENTRY_STATE_KEYS)[number] | "__owner"
> = true;
void everyHostEntryField;

/** The longest `__owner` accepted: organization, project and stack names are short. */
export const MAX_OWNER_LENGTH = 512;

/** Resource type token module and name: `pulumi-nodejs:dynamic/hosts:HostEntry`. */
export const HOST_ENTRY_MODULE = "hosts";
export const HOST_ENTRY_TYPE = "HostEntry";
/** The package subpath of the HostEntry shim (hostEntryShim.ts), which every stack's state names. */
export const HOST_ENTRY_SHIM = "pulumi-lifecycle/provider/hostEntry";
