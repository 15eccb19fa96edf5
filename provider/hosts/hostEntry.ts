// `hosts.HostEntry`: one line of a hosts file, managed by Pulumi.
//
// Type token: pulumi-nodejs:dynamic/hosts:HostEntry. Id: "<family>/<canonical name>" (e.g.
// "ipv4/web.internal"), stable across in-place updates. Operations: see hostEntryProvider.ts.

import * as pulumi from "@pulumi/pulumi";
import { providerShim } from "../shared/providerShim";
import { programDefaultFile } from "./io/programDefaultFile";
import { HOST_ENTRY_MODULE, HOST_ENTRY_TYPE } from "./schema";

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
}

/** What `HostEntry.get` needs besides the id: the file, when it is not the default one. */
export interface HostEntryState {
    file?: pulumi.Input<string>;
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
export class HostEntry extends pulumi.dynamic.Resource {
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

    /** Declares a hosts-file entry. */
    constructor(name: string, args: HostEntryArgs, opts?: pulumi.CustomResourceOptions) {
        const props = { ...args, file: args.file ?? programDefaultFile(), line: undefined, __owner: ownerStack() };
        super(providerShim("hosts:HostEntry"), name, props, opts, HOST_ENTRY_MODULE, HOST_ENTRY_TYPE);
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
            file: state?.file ?? programDefaultFile(),
            address: undefined,
            names: undefined,
            comment: undefined,
            adopt: undefined,
        } as unknown as HostEntryArgs;
        return new HostEntry(name, props, { ...opts, id });
    }
}
