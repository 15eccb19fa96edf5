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

/**
 * Replays a refresh of the stack whose checkpoint is `checkpoint` into a fresh provider process in
 * `projectDir`; resolves with that process's CPU seconds for the Reads and Diffs (its start and the SDK's
 * loading excluded, the package's runtime included, as a refresh's first Read loads it), or undefined on
 * a system without /proc.
 */
export async function replayRefresh(projectDir: string, checkpoint: string): Promise<number | undefined> {
    const state = JSON.parse(readFileSync(checkpoint, "utf8")) as {
        checkpoint: { latest: { resources: CheckpointResource[] } };
    };
    const resources = state.checkpoint.latest.resources.filter(
        (resource) => resource.custom && resource.id !== undefined && !resource.type.startsWith("pulumi:providers:"),
    );
    const server = await ProviderServer.start({ projectDir });
    try {
        await server.configure({});
        const before = cpuSeconds(server.pid);
        await inFlight(resources.length, async (at) => {
            const { urn, id = "", inputs = {}, outputs = {} } = resources[at] as CheckpointResource;
            const read = await server.read(urn, id, outputs, inputs);
            await server.diff(urn, id, read.properties, read.inputs ?? inputs);
        });
        const after = cpuSeconds(server.pid);
        return before === undefined || after === undefined ? undefined : after - before;
    } finally {
        await server.stop();
    }
}
