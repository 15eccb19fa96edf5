import { LifecycleError } from "../../shared/errors/lifecycleError";

/** Why a machine could not be reached or logged in to. */
export type SshFailure = "unreachable" | "refused" | "authentication" | "privilege" | "lost" | "protocol";

const ADVICE: Record<SshFailure, string> = {
    unreachable: "Check `connection.host` and `connection.port`, and that the machine is up and reachable from here",
    refused: "Nothing accepts SSH connections on that port: check that sshd runs there and `connection.port`",
    authentication:
        "Check `connection.user` and its credentials (`privateKey` and `privateKeyPassword`, `password`, or the agent at " +
        "`agentSocketPath`/SSH_AUTH_SOCK), and that the key is in that user's authorized_keys",
    privilege:
        '`connection.privilege: "sudo"` runs `sudo -n <sftpServer>`: the user must be allowed to run it without a password ' +
        "(a sudoers line such as `<user> ALL=(root) NOPASSWD: /usr/lib/openssh/sftp-server`), and `connection.sftpServer` must " +
        "be that machine's SFTP server",
    lost: "The connection dropped. Nothing half-written was left in the file (writes replace it whole); run the operation again",
    protocol:
        "The server did not start an SFTP session that works: the account's login shell must run the SFTP server (not " +
        "nologin, and print nothing), and the server must offer OpenSSH's fsync, posix-rename and hardlink extensions",
};

/**
 * A machine of a remote HostEntry could not be reached, logged in to, or kept: only its own entries
 * fail. Never carries a credential.
 */
export class SshConnectionError extends LifecycleError {
    override readonly name = "SshConnectionError";

    /**
     * @param machine `user@host:port`
     * @param failure what failed
     * @param detail what the SSH layer said (no secrets: messages of the socket or the protocol)
     */
    constructor(
        readonly machine: string,
        readonly failure: SshFailure,
        detail: string,
        options?: { cause?: unknown },
    ) {
        super(`cannot reach hosts files on ${machine}: ${detail}. ${ADVICE[failure]}.`, options);
    }
}
