import type * as dynamic from "@pulumi/pulumi/dynamic";

/**
 * Reads a namespaced stack config key (`pulumi-lifecycle:hostsFile`) in a provider's `configure`. The
 * engine sends dynamic providers the whole stack config with namespaces kept; the SDK's Config throws
 * instead of answering when the server got no config at all, which we treat as "not set".
 */
export function readConfig(request: dynamic.ConfigureRequest, key: string): string | undefined {
    try {
        return request.config.get(key) || undefined;
    } catch {
        return undefined;
    }
}
