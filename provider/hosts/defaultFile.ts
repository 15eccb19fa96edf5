// Where a HostEntry writes when `file` is not given: stack config `pulumi-lifecycle:hostsFile`, then the
// HOSTS_FILE environment variable, then the operating system's hosts file.

import { win32 } from "node:path";

/** The stack config key that sets the default hosts file. */
export const HOSTS_FILE_CONFIG_KEY = "pulumi-lifecycle:hostsFile";

/**
 * The operating system's hosts file. hostile knows the usual paths; on Windows the system directory is
 * taken from %SystemRoot% when set, since Windows is not always installed on C:.
 */
export function osHostsFile(
    env: NodeJS.ProcessEnv = process.env,
    platform: NodeJS.Platform = process.platform,
): string {
    if (platform === "win32" && env.SystemRoot) {
        return win32.join(env.SystemRoot, "System32", "drivers", "etc", "hosts");
    }
    return (require("hostile") as { HOSTS: string }).HOSTS;
}

/** The default hosts file given the stack config value (if any) and the environment. */
export function defaultHostsFile(configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
    return configured || env.HOSTS_FILE || osHostsFile(env);
}
