// Pinned SSH host keys: what a user writes (`ssh-ed25519 AAAA...` or `SHA256:...`) and whether the key a
// server presents is that one. Pure.

import { createHash } from "node:crypto";

/** A pinned host key: the whole public key, or only its SHA256 fingerprint. */
export interface HostKeyPin {
    /** As state stores it: `<type> <base64>` (comment dropped) or `SHA256:<base64>`. */
    readonly text: string;
    readonly fingerprint: string;
}

const KEY_TYPE =
    /^(ssh-ed25519|ssh-ed448|ssh-rsa|ssh-dss|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com)$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** A SHA256 digest in unpadded base64, as OpenSSH prints fingerprints. */
const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;

/** Parses a pin; undefined when it is neither a public key line nor a SHA256 fingerprint. */
export function parseHostKeyPin(text: string): HostKeyPin | undefined {
    const trimmed = text.trim();
    if (FINGERPRINT.test(trimmed)) return { text: trimmed, fingerprint: trimmed };
    const [type, base64] = trimmed.split(/\s+/);
    if (type === undefined || base64 === undefined || !KEY_TYPE.test(type) || !BASE64.test(base64)) return undefined;
    const blob = Buffer.from(base64, "base64");
    // The key blob starts with its own type, length-prefixed: a line whose two halves disagree is a typo.
    const length = blob.length >= 4 ? blob.readUInt32BE(0) : -1;
    if (length < 0 || blob.subarray(4, 4 + length).toString("latin1") !== type) return undefined;
    return { text: `${type} ${base64}`, fingerprint: fingerprintOf(blob) };
}

/** The SHA256 fingerprint of a public key blob, as `ssh-keygen -l` prints it. */
export function fingerprintOf(blob: Buffer): string {
    return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

/** The public key line of a key blob, for a message that tells the user what to pin. */
export function publicKeyLineOf(blob: Buffer): string {
    const length = blob.length >= 4 ? blob.readUInt32BE(0) : 0;
    const type = blob.subarray(4, 4 + length).toString("latin1");
    return `${type} ${blob.toString("base64")}`;
}
