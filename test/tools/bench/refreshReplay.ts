// A refresh's provider work alone: the RPCs `pulumi refresh` sends a dynamic provider (each resource's
// Read, then its Diff, as many resources at once as the engine runs), replayed from a stack's checkpoint
// into a fresh provider process started in the project, and that process's CPU for them. A refresh's
// wall time also holds the engine's CPU on the same cores and varies by 10% or more from one run to the
// next; this figure varies far less, and tells the provider's share of the gap apart from the engine's.

import { readFileSync } from "node:fs";
import { type Props, ProviderServer } from "../../support/providerServer";
import { inFlight } from "./hostsBench";
import { cpuSeconds } from "./machine";

/** A resource as the checkpoint records it. */
interface CheckpointResource {
    readonly urn: string;
    readonly type: string;
    readonly custom?: boolean;
    readonly id?: string;
    readonly inputs?: Props;
    readonly outputs?: Props;
}

/** A replay's CPU seconds in one provider process: its first pass, and each pass after it. */
export interface ReplayCpu {
    /** The refresh's RPCs once, as a refresh sends them to a fresh process: what a refresh costs. */
    readonly first: number;
    /**
     * The same RPCs again, `WARM_PASSES` times, in that process: the cost once V8 has compiled the code
     * and the process has read the file, which tells the provider's work apart from its warming up.
     */
    readonly warm: readonly number[];
}

/** Passes after the first in each replay's process. */
export const WARM_PASSES = 3;

/**
 * Replays a refresh of the stack whose checkpoint is `checkpoint` into a fresh provider process in
 * `projectDir`, then `WARM_PASSES` times more in that process; resolves with that process's CPU seconds
 * for each pass of Reads and Diffs (its start and the SDK's loading excluded, the package's runtime
 * included in the first, as a refresh's first Read loads it), or undefined on a system without /proc.
 */
export async function replayRefresh(projectDir: string, checkpoint: string): Promise<ReplayCpu | undefined> {
    const state = JSON.parse(readFileSync(checkpoint, "utf8")) as {
        checkpoint: { latest: { resources: CheckpointResource[] } };
    };
    const resources = state.checkpoint.latest.resources.filter(
        (resource) => resource.custom && resource.id !== undefined && !resource.type.startsWith("pulumi:providers:"),
    );
    const server = await ProviderServer.start({ projectDir, asInstalled: true });
    try {
        await server.configure({});
        const passes: number[] = [];
        for (let pass = 0; pass <= WARM_PASSES; pass++) {
            const before = cpuSeconds(server.pid);
            await inFlight(resources.length, async (at) => {
                const { urn, id = "", inputs = {}, outputs = {} } = resources[at] as CheckpointResource;
                const read = await server.read(urn, id, outputs, inputs);
                await server.diff(urn, id, read.properties, read.inputs ?? inputs);
            });
            const after = cpuSeconds(server.pid);
            if (before === undefined || after === undefined) return undefined;
            passes.push(after - before);
        }
        const [first = 0, ...warm] = passes;
        return { first, warm };
    } finally {
        await server.stop();
    }
}
