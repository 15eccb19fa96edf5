// A refresh's provider work without the SDK: the provider a stack's `__provider` names, built and called
// directly in a fresh Node.js process in the project (providerCodeChild.js), with the same Reads and
// Diffs refreshReplay.ts sends it over gRPC. The replay's CPU holds the provider's own code and the
// SDK's and gRPC's handling of each message; this holds the code alone, so the two side by side say
// which of them a gap over the no-op provider is.

import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { ENGINE_PARALLEL } from "./hostsBench";

const run = promisify(execFile);

/**
 * The CPU seconds of the providers' own code for one refresh of the stack whose checkpoint is
 * `checkpoint`, building the provider included (as a refresh's first Read builds it). The child takes a
 * count of warm passes to run after it (`node providerCodeChild.js <checkpoint> 3 8`); the bench needs none.
 */
export async function providerCodeCpu(projectDir: string, checkpoint: string): Promise<number> {
    const child = join(__dirname, "providerCodeChild.js");
    const { stdout } = await run(process.execPath, [child, checkpoint, "0", String(ENGINE_PARALLEL)], {
        cwd: projectDir,
        maxBuffer: 1 << 20,
    });
    const [first] = JSON.parse(stdout) as number[];
    if (first === undefined) throw new Error(`${child} printed no pass: ${stdout}`);
    return first;
}
