// The journal of one in-place write, as its sidecar holds it, and what a file whose write a crash cut
// short should become. Pure: no I/O.

import { createHash } from "node:crypto";

const MAGIC = Buffer.from("pulumi-lifecycle in-place write v2\n", "latin1");
const END = Buffer.from("\npulumi-lifecycle in-place write end\n", "latin1");
/** Opens the block a grown write appends to its sidecar before it moves foreign lines past its own. */
const MOVED = Buffer.from("pulumi-lifecycle moved v1\n", "latin1");
/** Where the moved bytes sit, their length, their digest. */
const MOVED_HEADER_BYTES = 8 + 8 + 32;
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
    /**
     * Set once a grown write found foreign lines between the part of its content written in place and
     * the part it appended, and journaled them before moving them past its own: their bytes, and where
     * they sat (`at`: the length of our content in place before them).
     */
    readonly moved?: { readonly at: number; readonly bytes: Buffer };
}

/** The block journaling the foreign bytes `bytes`, found at `at`, that a grown write moves past its own. */
export function movedBytes(at: number, bytes: Buffer): Buffer {
    const header = Buffer.alloc(MOVED_HEADER_BYTES);
    header.writeBigUInt64BE(BigInt(at), 0);
    header.writeBigUInt64BE(BigInt(bytes.length), 8);
    digest(bytes).copy(header, 16);
    return Buffer.concat([MOVED, header, bytes, END]);
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
    const end = start + n + m + END.length;
    if (bytes.length < end || !bytes.subarray(start + n + m, end).equals(END)) return undefined;
    const previous = bytes.subarray(start, start + n);
    const data = bytes.subarray(start + n, start + n + m);
    if (!digest(previous).equals(bytes.subarray(at + 16, at + 48))) return undefined;
    if (!digest(data).equals(bytes.subarray(at + 48, at + 80))) return undefined;
    const previousSignature = bytes.subarray(signatureAt, start).toString("latin1");
    // A moved block cut short (a crash while journaling it) means the move had not begun.
    const moved = parseMoved(bytes.subarray(end));
    return moved ? { previous, data, previousSignature, moved } : { previous, data, previousSignature };
}

function parseMoved(bytes: Buffer): SidecarRecord["moved"] {
    const at = MOVED.length;
    if (bytes.length < at + MOVED_HEADER_BYTES || !bytes.subarray(0, at).equals(MOVED)) return undefined;
    const length = Number(bytes.readBigUInt64BE(at + 8));
    const start = at + MOVED_HEADER_BYTES;
    if (bytes.length !== start + length + END.length || !bytes.subarray(start + length).equals(END)) return undefined;
    const moved = bytes.subarray(start, start + length);
    if (!digest(moved).equals(bytes.subarray(at + 16, at + 48))) return undefined;
    return { at: Number(bytes.readBigUInt64BE(at)), bytes: moved };
}

/** Whether the write grows the file other than by new lines at its end: written in place, then appended. */
export function isGrownInPlace({ previous, data }: SidecarRecord): boolean {
    return data.length > previous.length && !data.subarray(0, previous.length).equals(previous);
}

/**
 * Where, in `current`, the grown write `record` appended the rest of its content after the first `at`
 * bytes of it (in place at the file's start): the number of foreign bytes that landed between, or
 * undefined when the rest is not there. Foreign lines are whole lines, so ours start at a line's start
 * (the first such place: a foreign copy of our lines found there instead of ours leaves the same lines).
 */
export function appendedAfter(current: Buffer, record: SidecarRecord, at: number): number | undefined {
    const rest = record.data.subarray(at);
    if (current.length < at + rest.length || !current.subarray(0, at).equals(record.data.subarray(0, at))) {
        return undefined;
    }
    const ours = (p: number) => current.subarray(p, p + rest.length).equals(rest);
    for (let p = at; p + rest.length <= current.length; p++) {
        if ((p === at || current[p - 1] === 0x0a) && ours(p)) return p - at;
    }
    // A tool that appended part of a line (no newline at its end): ours goes on right after it.
    for (let p = at; p + rest.length <= current.length; p++) if (ours(p)) return p - at;
    return undefined;
}

/**
 * How much of a grown write's content is in place at the start of `current`: the old length, or further
 * where its append was cut short between pages; undefined when not even the old length is.
 */
export function grownInPlace(current: Buffer, record: SidecarRecord): number | undefined {
    const { previous, data } = record;
    let k = 0;
    while (k < current.length && k < data.length && current[k] === data[k]) k++;
    if (k < previous.length) return undefined;
    if (k === current.length) return k;
    const page = Math.floor(k / PAGE) * PAGE;
    return page > previous.length ? page : previous.length;
}

/**
 * What a file whose interrupted write `record` describes should become, given its content and signature
 * now: the new content, plus what another tool appended after the write's bytes, when the file is in a
 * state the write passes through; undefined when the file has moved on (nothing is to be done). The old
 * content counts only while the file is still the very file the write read (its signature): the same
 * bytes written again later (a line created, then deleted) are a later write's, not this one's. A write
 * that grows the file (inPlaceGrow.ts) passes through more states: its content in place up to the old
 * end, then the rest appended, foreign lines possibly between (and, once journaled in `moved`, on their
 * way past ours); all finish to its content followed by the foreign lines.
 */
export function finishedContent(current: Buffer, signature: string, record: SidecarRecord): Buffer | undefined {
    const { previous, data, moved } = record;
    if (moved) {
        // Moving the foreign bytes past ours: between two states only this write passes through.
        const rest = data.subarray(moved.at);
        const before = Buffer.concat([data.subarray(0, moved.at), moved.bytes, rest]);
        const after = Buffer.concat([data, moved.bytes]);
        return finishedContent(current, signature, { previous: before, data: after, previousSignature: signature });
    }
    if (isGrownInPlace(record)) {
        // Its content in place up to the old length (or further), the rest appended after foreign lines.
        const at = grownInPlace(current, record);
        const between = at === undefined ? undefined : appendedAfter(current, record, at);
        if (at !== undefined && between !== undefined) {
            const after = at + between + data.length - at;
            return Buffer.concat([data, current.subarray(at, at + between), current.subarray(after)]);
        }
        if (at !== undefined) return Buffer.concat([data, current.subarray(at)]);
    }
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
