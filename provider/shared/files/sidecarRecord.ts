// The journal of one in-place write, as its sidecar holds it, and what a file whose write a crash cut
// short should become. Pure: no I/O.

import { createHash } from "node:crypto";

const MAGIC = Buffer.from("pulumi-lifecycle in-place write v2\n", "latin1");
const END = Buffer.from("\npulumi-lifecycle in-place write end\n", "latin1");
/** Both lengths, both digests, the length of the old content's signature. */
const HEADER_BYTES = 8 + 8 + 32 + 32 + 2;

/** Where a write(2) that a crash cut short can have stopped: between pages, or at its end. */
const PAGE = 4096;

/** What a sidecar holds. */
export interface SidecarRecord {
    /** The content the write replaces. */
    readonly previous: Buffer;
    /** The content it writes. */
    readonly data: Buffer;
    /** `dev:ino:size:mtime` of the file holding `previous`, just before the write. */
    readonly previousSignature: string;
}

/** A sidecar's bytes: MAGIC, the header, the signature, the old content, the new one, END. */
export function sidecarBytes(record: SidecarRecord): Buffer {
    const signature = Buffer.from(record.previousSignature, "latin1");
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeBigUInt64BE(BigInt(record.previous.length), 0);
    header.writeBigUInt64BE(BigInt(record.data.length), 8);
    digest(record.previous).copy(header, 16);
    digest(record.data).copy(header, 48);
    header.writeUInt16BE(signature.length, 80);
    return Buffer.concat([MAGIC, header, signature, record.previous, record.data, END]);
}

/** The record a sidecar holds, or undefined when it is incomplete (a crash while writing it) or damaged. */
export function parseSidecar(bytes: Buffer): SidecarRecord | undefined {
    const at = MAGIC.length;
    if (bytes.length < at + HEADER_BYTES || !bytes.subarray(0, at).equals(MAGIC)) return undefined;
    const n = Number(bytes.readBigUInt64BE(at));
    const m = Number(bytes.readBigUInt64BE(at + 8));
    const signatureAt = at + HEADER_BYTES;
    const start = signatureAt + bytes.readUInt16BE(at + 80);
    if (bytes.length !== start + n + m + END.length || !bytes.subarray(start + n + m).equals(END)) return undefined;
    const previous = bytes.subarray(start, start + n);
    const data = bytes.subarray(start + n, start + n + m);
    if (!digest(previous).equals(bytes.subarray(at + 16, at + 48))) return undefined;
    if (!digest(data).equals(bytes.subarray(at + 48, at + 80))) return undefined;
    return { previous, data, previousSignature: bytes.subarray(signatureAt, start).toString("latin1") };
}

/**
 * What a file whose interrupted write `record` describes should become, given its content and signature
 * now: the new content, plus what another tool appended after the write's bytes, when the file is in a
 * state the write passes through; undefined when the file has moved on (nothing is to be done). The old
 * content counts only while the file is still the very file the write read (its signature): the same
 * bytes written again later (a line created, then deleted) are a later write's, not this one's.
 */
export function finishedContent(current: Buffer, signature: string, record: SidecarRecord): Buffer | undefined {
    const { previous, data } = record;
    /** The file when the new content has been written over the old up to byte `cut`. */
    const passing = (cut: number) =>
        Buffer.concat([data.subarray(0, cut), cut < previous.length ? previous.subarray(cut) : Buffer.alloc(0)]);
    const untouched = signature === record.previousSignature;
    let k = 0;
    while (k < current.length && k < data.length && current[k] === data[k]) k++;
    if (current.equals(data)) return data;
    if (current.equals(passing(k))) return current.equals(previous) && !untouched ? undefined : data;
    // Longer than any such state: a writer that ignores locks appended after the crash. Where the write
    // stopped is then told by where a write can stop: whole (before its cut, or after), or between pages
    // (the appended bytes may begin as ours did).
    const stops = [passing(data.length), data];
    for (let cut = Math.floor((data.length - 1) / PAGE) * PAGE; cut >= 0; cut -= PAGE) stops.push(passing(cut));
    for (const state of stops) {
        if (state.equals(previous) && !untouched) continue;
        if (current.length > state.length && current.subarray(0, state.length).equals(state)) {
            return Buffer.concat([data, current.subarray(state.length)]);
        }
    }
    return undefined;
}

function digest(content: Buffer): Buffer {
    return createHash("sha256").update(content).digest();
}
