// Where the tests' Node.js processes that run the SDK (the real CLI's programs and providers, and the
// provider processes the harness and the suites start) get deferredSdkModules.js: through NODE_OPTIONS,
// after the caller's own flags. Deferring those modules took a provider process's start from about 0.9
// CPU-s to 0.35 here. The suites that test the package as a user installs it run without it.

import { join } from "node:path";

/** NODE_OPTIONS that load deferredSdkModules.js into a process, after `current` (the caller's own). */
export function deferringSdkModules(current: string | undefined = process.env.NODE_OPTIONS): string {
    const hook = `--require ${JSON.stringify(join(__dirname, "deferredSdkModules.js"))}`;
    return [current, hook].filter(Boolean).join(" ");
}
