import { LifecycleError } from "../../shared/errors/lifecycleError";
import { codeOf } from "../../shared/files/errno";
import { messageOf } from "../../shared/text";

/** What the store was doing when I/O failed. */
export type HostsFileOperation = "read" | "write" | "lock";

const SET_FILE = "set `file` (or stack config `pulumi-lifecycle:hostsFile`, or HOSTS_FILE)";

/** What went wrong and what to do, by error code; writes and reads need different advice. */
const ADVICE: Record<HostsFileOperation, Record<string, string>> = {
    write: {
        EACCES: `permission denied. Run Pulumi elevated (sudo, or an Administrator shell on Windows), or ${SET_FILE} to a hosts file you may write`,
        EROFS: `the file system is read-only. ${SET_FILE} to a hosts file on a writable file system`,
        ENOENT: `its directory does not exist. Create it, or ${SET_FILE} to an existing hosts file`,
        EISDIR: `it is a directory. ${SET_FILE} to the path of a hosts file`,
        ENOTDIR: "a part of the path is not a directory. Check `file`",
        ENOSPC: "the disk is full. Free some space and retry",
        ENOTREG: `it is not a regular file (a FIFO, device or socket), and writing would replace it. ${SET_FILE} to a regular hosts file`,
        ELOCKLOST:
            "this process was stopped or hung while it held the file's lock, long enough for a writer on another host " +
            "to take the lock over. Nothing was written. Retry",
        ECHANGED:
            "another program kept changing it between our read and our write, every time we tried, without taking the " +
            "pulumi-lifecycle lock. Nothing of theirs was overwritten. Retry; if it keeps happening, stop that program " +
            "while Pulumi runs",
    },
    read: {
        EACCES: `permission denied. Run Pulumi as a user who may read it, or ${SET_FILE} to a hosts file you may read`,
        ENOENT: `it does not exist. Check \`file\`, or ${SET_FILE}`,
        EISDIR: `it is a directory. ${SET_FILE} to the path of a hosts file`,
        ENOTDIR: "a part of the path is not a directory. Check `file`",
        ENOTREG: `it is not a regular file (a FIFO, device or socket); hosts entries live in a regular file. ${SET_FILE} to one`,
    },
    lock: {},
};
ADVICE.lock = ADVICE.write;
for (const advice of Object.values(ADVICE)) advice.EPERM ??= advice.EACCES as string;

/** Advice that differs for a file on another machine, reached over SSH. */
const REMOTE_ADVICE: Record<string, string> = {
    EACCES:
        'permission denied for the SSH user. Set `connection.privilege` to "sudo" (the user must be allowed to run ' +
        "the SFTP server with `sudo -n`), or log in as a user who may write the file and its directory",
    ENOENT: "it or its directory does not exist on that machine. Check `file` (an absolute path on that machine)",
    ECONNRESET: "the SSH connection dropped during the operation. Run it again",
    EISDIR: "it is a directory. Set `file` to the path of a hosts file on that machine",
    ENOTREG:
        "it is not a regular file (a FIFO, device or socket), and writing would replace it. Set `file` to a regular " +
        "hosts file on that machine",
};
REMOTE_ADVICE.EPERM = REMOTE_ADVICE.EACCES as string;

/**
 * An I/O failure on a hosts file, with the file, the operation and what to do. Whenever this is thrown
 * for a write, the file was left as it was.
 */
export class HostsFileError extends LifecycleError {
    override readonly name = "HostsFileError";
    readonly code: string;

    /** @param machine `user@host:port` of a file on another machine */
    constructor(
        readonly file: string,
        readonly operation: HostsFileOperation,
        cause: unknown,
        readonly machine?: string,
    ) {
        const code = codeOf(cause);
        const remote = machine === undefined ? undefined : REMOTE_ADVICE[code];
        const reason = remote ?? ADVICE[operation][code] ?? messageOf(cause);
        const unchanged = operation === "read" ? "" : " The file was not changed.";
        super(`cannot ${operation} hosts file ${file}: ${reason}.${unchanged}`, { cause });
        this.code = code;
    }
}
