// The hosts file of a Pulumi program's resources and read helpers, read from the program's stack config.

import * as pulumi from "@pulumi/pulumi";
import { defaultHostsFile, HOSTS_FILE_CONFIG_KEY } from "../logic/defaultFile";

/** The hosts file a program uses when `file` is not given: stack config, then HOSTS_FILE, then the OS file. */
export function programDefaultFile(): string {
    const [project, key] = HOSTS_FILE_CONFIG_KEY.split(":") as [string, string];
    return defaultHostsFile(new pulumi.Config(project).get(key));
}
