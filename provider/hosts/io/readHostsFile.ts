// Reads a hosts file for the read-only helpers (`hosts import`, the lookup functions). No lock: the
// provider replaces the file by an atomic rename, so a plain read sees a whole version of it. Where it
// must write in place instead (Docker's bind-mounted /etc/hosts), readWholeSync reads again when the file
// changed while it was read; only a read that falls entirely between the two steps of an in-place
// write (new bytes written, file not yet cut to length) could still see a mix.

import { resolve } from "node:path";
import { codeOf } from "../../shared/files/errno";
import { readWholeSync } from "../../shared/files/readWhole";
import { HostsFileError } from "../errors/hostsFileError";
import { HostsFileNotFoundError } from "../errors/hostsFileNotFoundError";
import { HostsDocument } from "../logic/hostsDocument";

/**
 * Reads and parses `file` (relative paths resolve against the working directory). Throws
 * HostsFileNotFoundError when it does not exist and HostsFileError when it cannot be read or is not a
 * text hosts file; both name the absolute path, which shows where a relative path led.
 */
export async function readHostsDocument(file: string): Promise<HostsDocument> {
    return (await readHostsFile(file)).doc;
}

/** Reads and parses `file` as readHostsDocument does, answering the bytes read too. */
export async function readHostsFile(file: string): Promise<{ doc: HostsDocument; bytes: Buffer }> {
    const absolute = resolve(file);
    let bytes: Buffer;
    try {
        ({ bytes } = readWholeSync(absolute));
    } catch (error) {
        if (codeOf(error) === "ENOENT") throw new HostsFileNotFoundError(absolute, error);
        throw new HostsFileError(absolute, "read", error);
    }
    try {
        return { doc: HostsDocument.parse(bytes), bytes };
    } catch (error) {
        throw new HostsFileError(absolute, "read", error);
    }
}
