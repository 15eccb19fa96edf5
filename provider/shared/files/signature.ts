// The identity of a file's content, for telling whether another writer changed it.

import { type BigIntStats, fstatSync } from "node:fs";

/** `dev:ino:size:mtime`: changes whenever a file's content is rewritten or it is replaced by another. */
export function signatureOf(info: BigIntStats): string {
    return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}`;
}

/** The signature of an open file descriptor. */
export function fileSignatureSync(fd: number): string {
    return signatureOf(fstatSync(fd, { bigint: true }));
}
