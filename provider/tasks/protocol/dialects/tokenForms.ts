// How each API takes the keys of a create-token chain (see logic/createKeys.ts): the first create of a
// resource sends its token; each later one (a replacement, a re-creation) a key derived from it. The
// IETF Idempotency-Key takes any string ("token~1"); Google's requestId must be a UUID (AIP-155) and
// Cloud Control's ClientToken matches [-A-Za-z0-9+/=]+ (botocore cloudcontrol service-2.json), so
// there the key is a UUID derived from the token, the natural key and the generation: the same on every
// machine and every run, so a resumed create sends the very key the interrupted one did.

import { createHash } from "node:crypto";

/** The key of the `generation`-th create with this token, as the IETF header takes it: token, token~1, ... */
export function chainKey(token: string, generation: number): string {
    return generation === 0 ? token : `${token}~${generation}`;
}

/**
 * The key as a UUID (version 8, RFC 9562) made of the SHA-256 of the token, the natural key and the
 * generation. The natural key is part of it because these APIs refuse a request id reused for another
 * resource (Google: INVALID_ARGUMENT) instead of telling it apart as the IETF draft's 422 does: a
 * replacement under a new natural key is another request, with a key of its own.
 */
export function uuidKey(token: string, generation: number, naturalKey: string): string {
    const hex = createHash("sha256")
        .update(`${chainKey(token, generation)}\n${naturalKey}`)
        .digest("hex");
    const variant = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
