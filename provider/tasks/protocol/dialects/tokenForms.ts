// How each API takes the keys of a create-token chain (see logic/createKeys.ts): the first create of a
// resource sends its token; each later one (a replacement, a re-creation) a key derived from it. The
// IETF Idempotency-Key takes any string ("token~1"); Google's requestId must be a UUID (AIP-155) and
// Cloud Control's ClientToken matches [-A-Za-z0-9+/=]+ (botocore cloudcontrol service-2.json), so
// there the key is a UUID derived from the token and the generation: the same on every machine and
// every run, so a resumed create sends the very key the interrupted one did.

import { createHash } from "node:crypto";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The key of the `generation`-th create with this token, as the IETF header takes it: token, token~1, ... */
export function chainKey(token: string, generation: number): string {
    return generation === 0 ? token : `${token}~${generation}`;
}

/**
 * The key as a UUID: the token itself for the first create when it is one, else a UUID (version 8,
 * RFC 9562) made of the SHA-256 of the chain key.
 */
export function uuidKey(token: string, generation: number): string {
    if (generation === 0 && UUID.test(token)) return token.toLowerCase();
    const hex = createHash("sha256").update(chainKey(token, generation)).digest("hex");
    const variant = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
