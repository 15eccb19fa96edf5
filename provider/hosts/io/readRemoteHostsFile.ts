// Reads a hosts file of another machine for the read-only helpers (the lookup functions): one SSH
// connection, opened for the call and closed after it, so a program never stays alive on a socket. The
// connection is checked as a HostEntry's is, and the host key must be pinned.

import { LifecycleError } from "../../shared/errors/lifecycleError";
import { codeOf } from "../../shared/files/errno";
import { ConnectionSettingsError } from "../errors/connectionSettingsError";
import { HostsFileError } from "../errors/hostsFileError";
import { HostsFileNotFoundError } from "../errors/hostsFileNotFoundError";
import { REMOTE_DEFAULT_FILE, usableConnection } from "../logic/connection";
import { HostsDocument } from "../logic/hostsDocument";
import { SshMachines } from "../remote/sshMachines";

/**
 * Reads and parses `file` (default /etc/hosts, absolute) on the machine `connection` reaches. Throws
 * ConnectionSettingsError for a connection that fails its checks, SshHostKeyError or SshConnectionError
 * when the machine cannot be reached, HostsFileNotFoundError and HostsFileError as a local read does.
 */
export async function readRemoteHostsDocument(
    connection: object,
    file: string = REMOTE_DEFAULT_FILE,
): Promise<HostsDocument> {
    return (await readRemoteHostsFile(connection, file)).doc;
}

/** Reads as readRemoteHostsDocument does, with the machine's name (its /etc/hostname) where it can be read. */
export async function readRemoteHostsFile(
    connection: object,
    file: string = REMOTE_DEFAULT_FILE,
): Promise<{ doc: HostsDocument; machineName?: string }> {
    const checked = usableConnection(connection, undefined, (fail) => {
        if (!file.startsWith("/")) fail("file", `${JSON.stringify(file)} must be an absolute path on that machine`);
    });
    if (!checked) throw new ConnectionSettingsError([]);
    const machines = new SshMachines();
    const access = machines.filesOn(checked.connection, checked.credentials);
    try {
        let bytes: Buffer;
        try {
            ({ bytes } = await access.read(await access.realPath(file)));
        } catch (error) {
            if (codeOf(error) === "ENOENT") throw new HostsFileNotFoundError(access.describe(file), error);
            if (error instanceof LifecycleError) throw error;
            throw new HostsFileError(access.describe(file), "read", error, access.machine);
        }
        let doc: HostsDocument;
        try {
            doc = HostsDocument.parse(bytes);
        } catch (error) {
            throw new HostsFileError(access.describe(file), "read", error, access.machine);
        }
        const name = await access
            .read("/etc/hostname")
            .then(({ bytes: text }) => text.toString("utf8").trim().split(/\s/)[0])
            .catch(() => undefined);
        return name ? { doc, machineName: name } : { doc };
    } finally {
        await machines.close();
    }
}
