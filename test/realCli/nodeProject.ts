// A Node.js Pulumi project laid out by a real-CLI suite itself (its own Pulumi.yaml, `main`, runtime
// options and program files), with this package and @pulumi/pulumi installed the way npm installs them:
// node_modules in the project directory, holding links to this repository's copies.

import { mkdir, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../support/projects";

/** Writes `files` (paths relative to `dir`, which is created) and links node_modules/pulumi-lifecycle and @pulumi/pulumi. */
export async function writeNodeProject(dir: string, files: Readonly<Record<string, string>>): Promise<void> {
    await mkdir(join(dir, "node_modules", "@pulumi"), { recursive: true });
    for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), text);
    }
    await symlink(REPO_ROOT, join(dir, "node_modules", "pulumi-lifecycle"), "junction");
    await symlink(join(REPO_ROOT, "node_modules", "@pulumi", "pulumi"), join(dir, "node_modules", "@pulumi", "pulumi"));
}
