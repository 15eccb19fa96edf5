// A refresh's provider work without the SDK: the provider a stack's `__provider` names, built and called
// directly in a fresh Node.js process in the project (providerCodeChild.js), with the same Reads and
// Diffs refreshReplay.ts sends it over gRPC. The replay's CPU holds the provider's own code and the
// SDK's and gRPC's handling of each message; this holds the code alone, so the two side by side say
// which of them a gap over the no-op provider is.

import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type ReplayCpu, WARM_PASSES } from "./refreshReplay";

const run = promisify(execFile);

/**
 * The CPU seconds of the providers' own code for a refresh of the stack whose checkpoint is `checkpoint`:
 * the first pass (building the provider included, as a refresh's first Read builds it) and
 * `WARM_PASSES` more in the same process.
 */
export async function providerCodeCpu(projectDir: string, checkpoint: string): Promise<ReplayCpu> {
    const child = join(__dirname, "providerCodeChild.js");
    const { stdout } = await run(process.execPath, [child, checkpoint, String(WARM_PASSES)], {
        cwd: projectDir,
        maxBuffer: 1 << 20,
    });
    const [first = 0, ...warm] = JSON.parse(stdout) as number[];
    return { first, warm };
}
