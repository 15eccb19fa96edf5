// Where a HostEntry writes when `file` is not given: stack config `pulumi-lifecycle:hostsFile`, then the
// HOSTS_FILE environment variable, then the operating system's hosts file.

import { win32 } from "node:path";

/** Where Windows keeps the hosts file, below its system root. */
const WINDOWS_HOSTS = ["System32", "drivers", "etc", "hosts"];

/** The stack config key that sets the default hosts file. */
export const HOSTS_FILE_CONFIG_KEY = "pulumi-lifecycle:hostsFile";

/**
 * The operating system's hosts file: `/etc/hosts`, or on Windows the one under %SystemRoot% (hostile,
 * which many tools use for this, hard-codes C:\Windows, but Windows is not always installed there).
 */
export function osHostsFile(
    env: NodeJS.ProcessEnv = process.env,
    platform: NodeJS.Platform = process.platform,
): string {
    if (platform === "win32") return win32.join(env.SystemRoot || "C:\\Windows", ...WINDOWS_HOSTS);
    return "/etc/hosts";
}

/** The default hosts file given the stack config value (if any) and the environment. */
export function defaultHostsFile(configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
    return configured || env.HOSTS_FILE || osHostsFile(env);
}
