import { LifecycleError } from "../../shared/errors/lifecycleError";

/**
 * The SSH server presented a host key that is not the one pinned in `connection.hostKey` (or none was
 * pinned). Nothing was sent to it: no credentials, no file operation.
 */
export class SshHostKeyError extends LifecycleError {
    override readonly name = "SshHostKeyError";

    /**
     * @param machine `user@host:port`
     * @param presented the key the server presented, as `<type> <base64>`
     * @param fingerprint its SHA256 fingerprint
     * @param pinned the fingerprint pinned, when one was
     */
    constructor(
        readonly machine: string,
        readonly presented: string,
        readonly fingerprint: string,
        readonly pinned: string | undefined,
    ) {
        const [type] = presented.split(" ");
        const check = `Check it out of band (\`ssh-keygen -lf /etc/ssh/ssh_host_${(type ?? "").replace(/^ssh-|-.*$/g, "")}_key.pub\` on the machine)`;
        super(
            pinned === undefined
                ? `${machine} presented the host key ${fingerprint} and \`connection.hostKey\` pins none, so nothing ` +
                      `was sent to it. ${check}, then pin it: hostKey: "${presented}".`
                : `${machine} presented the host key ${fingerprint}, not the pinned ${pinned}: the key changed, or ` +
                      `this is another machine. Nothing was sent to it. If the machine was re-keyed on purpose, ${check.charAt(0).toLowerCase()}${check.slice(1)} ` +
                      `and pin the new key: hostKey: "${presented}".`,
        );
    }
}
