// HostEntry operations sent straight to a provider server, the way the engine sends them for one
// resource (Check, then Create/Update/Delete), for tests that need many operations at once.

import type { Props, ProviderServer } from "./providerServer";
import { providerTextOf } from "./providerTextOf";

/** The engine's URN for a HostEntry named `name`. */
export function hostEntryUrn(name: string): string {
    return `urn:pulumi:dev::test-project::pulumi-nodejs:dynamic/hosts:HostEntry::${name}`;
}

/** Checks and creates an entry; resolves with its id and outputs. */
export async function createHostEntry(
    server: ProviderServer,
    name: string,
    args: Props,
): Promise<{ id: string; properties: Props }> {
    const __provider = providerTextOf("hosts:HostEntry");
    const urn = hostEntryUrn(name);
    const checked = await server.check(urn, {}, { __provider, ...args });
    if (checked.failures.length > 0) throw new Error(`check failed: ${JSON.stringify(checked.failures)}`);
    return await server.create(urn, checked.inputs);
}

/** The nth of many distinct, valid entries (n < 62,500), in `file`. */
export function numberedEntry(n: number, file: string, prefix = "host"): Props {
    return {
        address: `10.${Math.floor(n / 62500) % 250}.${Math.floor(n / 250) % 250}.${n % 250}`,
        names: [`${prefix}-${n}.test`],
        file,
    };
}
