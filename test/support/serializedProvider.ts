// The `__provider` text of a resource kind, serialized by the SDK exactly as dynamic.Resource does it.

import { serializeFunction } from "@pulumi/pulumi/runtime/closure/serializeClosure";
import { type ProviderKind, providerShim } from "../../provider/shared/providerShim";

const cache = new Map<ProviderKind, Promise<string>>();

/** The serialized provider that the program side stores in `__provider` for `kind`. */
export function serializedProvider(kind: ProviderKind): Promise<string> {
    let text = cache.get(kind);
    if (!text) {
        const provider = providerShim(kind);
        text = serializeFunction(() => provider, { allowSecrets: true }).then((result) => result.text);
        cache.set(kind, text);
    }
    return text;
}
