// Pure, lossless model of a hosts file.
//
// The file is held as a "binary string" (latin1: one character per byte), so every byte of every line we
// do not own survives a round trip exactly: invalid UTF-8, tabs, runs of spaces, inline comments, CRLF or
// LF endings, a missing final newline and a BOM. Only text we write ourselves is converted from UTF-8.
// Edits never shift other lines' bytes: a rewrite replaces one line's text, a removal drops one line with
// its ending, an append adds one line at the end.

import { type AddressFamily, addressFamily, canonicalAddress } from "./address";
import { foldCase } from "./hostname";

/** How a line ends: LF, CRLF, or nothing (the last line of a file without a final newline). */
export type LineEnding = "" | "\n" | "\r\n";

/** An address line as a resolver reads it. */
export interface ParsedEntry {
    /** Canonical address (RFC 5952 for IPv6). */
    readonly address: string;
    readonly family: AddressFamily;
    /** Names in file order, as written (decoded from UTF-8). */
    readonly names: readonly string[];
    /** Text after the first "#", trimmed; undefined when there is none or it is empty. */
    readonly comment: string | undefined;
}

/** One physical line of the file. */
export interface HostsLine {
    /** The line's bytes without its ending, one character per byte. */
    readonly text: string;
    readonly ending: LineEnding;
    /** Set when the line is an address line with at least one name; comments and blanks have none. */
    readonly entry: ParsedEntry | undefined;
}

interface MutableLine extends HostsLine {
    text: string;
    ending: LineEnding;
    entry: ParsedEntry | undefined;
    removed: boolean;
    /** Index in `lines`; equals the 0-based line number once the document is compacted. */
    order: number;
}

const UTF8_BOM = "\xEF\xBB\xBF";
const RESOLVER_WHITESPACE = /[ \t\r\f\v]+/;
const NON_ASCII = /[\x80-\xff]/;

/** Thrown when the bytes cannot be a hosts file we may safely rewrite. */
export class UnsupportedHostsFileError extends Error {
    override readonly name = "UnsupportedHostsFileError";
}

/** A parsed hosts file that can be edited line by line and serialized back byte for byte. */
export class HostsDocument {
    private lines: MutableLine[];
    private compacted = true;
    private edits = 0;
    private nameIndex: Map<string, Set<MutableLine>> | undefined;

    private constructor(
        private readonly bom: string,
        lines: MutableLine[],
        /** Ending used for lines we add: the file's own dominant ending. */
        readonly lineEnding: "\n" | "\r\n",
    ) {
        this.lines = lines;
    }

    /**
     * Parses file bytes. `defaultEnding` is used for new lines when the file has none to copy from.
     * Throws UnsupportedHostsFileError for UTF-16 files and files containing NUL bytes, which are not
     * hosts files we can rewrite without damage.
     */
    static parse(bytes: Uint8Array, defaultEnding: "\n" | "\r\n" = "\n"): HostsDocument {
        const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
        if (raw.startsWith("\xFF\xFE") || raw.startsWith("\xFE\xFF")) {
            throw new UnsupportedHostsFileError("the file is UTF-16 encoded; save it as UTF-8 (or ANSI) and try again");
        }
        const bom = raw.startsWith(UTF8_BOM) ? UTF8_BOM : "";
        const body = raw.slice(bom.length);
        const nul = body.indexOf("\0");
        if (nul >= 0) {
            const lineNumber = countNewlines(body, nul) + 1;
            throw new UnsupportedHostsFileError(
                `the file contains a NUL byte on line ${lineNumber}, so it is not a text hosts file; check the path`,
            );
        }
        const lines: MutableLine[] = [];
        let crlf = 0;
        let lf = 0;
        let start = 0;
        while (start < body.length) {
            const newline = body.indexOf("\n", start);
            if (newline < 0) {
                lines.push(makeLine(body.slice(start), "", lines.length));
                break;
            }
            const hasCr = newline > start && body.charCodeAt(newline - 1) === 13;
            if (hasCr) crlf++;
            else lf++;
            lines.push(makeLine(body.slice(start, hasCr ? newline - 1 : newline), hasCr ? "\r\n" : "\n", lines.length));
            start = newline + 1;
        }
        const ending = crlf > lf ? "\r\n" : lf > 0 ? "\n" : defaultEnding;
        return new HostsDocument(bom, lines, ending);
    }

    /** Serializes the document: the bytes read, with only the edited lines changed. */
    toBuffer(): Buffer {
        // One buffer written line by line: no whole-file string is built for every write of a batch.
        let length = this.bom.length;
        for (const line of this.lines) if (!line.removed) length += line.text.length + line.ending.length;
        const buffer = Buffer.allocUnsafe(length);
        let offset = buffer.write(this.bom, 0, "latin1");
        for (const line of this.lines) {
            if (line.removed) continue;
            offset += buffer.write(line.text, offset, "latin1");
            offset += buffer.write(line.ending, offset, "latin1");
        }
        return buffer;
    }

    /** Counts the edits made so far: a batch that leaves it unchanged needs no write. */
    get revision(): number {
        return this.edits;
    }

    /** Live lines in file order. */
    allLines(): readonly HostsLine[] {
        this.compact();
        return this.lines;
    }

    /** Live address lines of `family` that carry `name` (case-insensitively), in file order. */
    linesNaming(family: AddressFamily, name: string): HostsLine[] {
        const found = this.index().get(indexKey(family, name)) ?? [];
        return [...found].filter((line) => !line.removed).sort((a, b) => a.order - b.order);
    }

    /** 1-based line number of a live line. */
    lineNumber(line: HostsLine): number {
        const own = this.own(line);
        this.compact();
        return own.order + 1;
    }

    /**
     * Appends a line of UTF-8 text at the end. A file without a final newline keeps that property:
     * the previous last line gets the ending it lacked, and the new line gets none.
     */
    append(utf8Text: string): HostsLine {
        const last = this.lastLiveLine();
        let ending: LineEnding = this.lineEnding;
        if (last && last.ending === "") {
            last.ending = this.lineEnding;
            ending = "";
        }
        const line = makeLine(fromUtf8(utf8Text), ending, this.lines.length);
        this.edits++;
        this.lines.push(line);
        this.indexAdd(line);
        return line;
    }

    /** Replaces the text of a live line, keeping its ending and its place. */
    rewrite(line: HostsLine, utf8Text: string): void {
        const own = this.own(line);
        this.indexRemove(own);
        this.edits++;
        own.text = fromUtf8(utf8Text);
        own.entry = parseEntry(own.text);
        this.indexAdd(own);
    }

    /**
     * Removes a live line with its ending. Removing the last line of a file that had no final newline
     * also removes the ending its predecessor was given by `append`, restoring the original bytes.
     */
    remove(line: HostsLine): void {
        const own = this.own(line);
        if (own === this.lastLiveLine() && own.ending === "") {
            const previous = this.previousLiveLine(own);
            if (previous) previous.ending = "";
        }
        this.edits++;
        own.removed = true;
        this.compacted = false;
        this.indexRemove(own);
    }

    private own(line: HostsLine): MutableLine {
        const own = line as MutableLine;
        if (this.lines[own.order] !== own || own.removed) throw new Error("line is not a live line of this document");
        return own;
    }

    private lastLiveLine(): MutableLine | undefined {
        for (let i = this.lines.length - 1; i >= 0; i--) {
            const line = this.lines[i];
            if (line && !line.removed) return line;
        }
        return undefined;
    }

    private previousLiveLine(line: MutableLine): MutableLine | undefined {
        for (let i = line.order - 1; i >= 0; i--) {
            const candidate = this.lines[i];
            if (candidate && !candidate.removed) return candidate;
        }
        return undefined;
    }

    private compact(): void {
        if (this.compacted) return;
        this.lines = this.lines.filter((line) => !line.removed);
        this.lines.forEach((line, index) => {
            line.order = index;
        });
        this.compacted = true;
    }

    private index(): Map<string, Set<MutableLine>> {
        if (!this.nameIndex) {
            this.nameIndex = new Map();
            for (const line of this.lines) if (!line.removed) this.indexAdd(line);
        }
        return this.nameIndex;
    }

    private indexAdd(line: MutableLine): void {
        if (!this.nameIndex || !line.entry) return;
        for (const name of line.entry.names) {
            const key = indexKey(line.entry.family, name);
            // A set, not a list: a name on every line of a big file would make each add and remove
            // a scan of all those lines (quadratic, and under the lock).
            const bucket = this.nameIndex.get(key);
            if (bucket) bucket.add(line);
            else this.nameIndex.set(key, new Set([line]));
        }
    }

    private indexRemove(line: MutableLine): void {
        if (!this.nameIndex || !line.entry) return;
        for (const name of line.entry.names) {
            const key = indexKey(line.entry.family, name);
            const bucket = this.nameIndex.get(key);
            bucket?.delete(line);
            if (bucket?.size === 0) this.nameIndex.delete(key);
        }
    }
}

/**
 * Parses one line's text (latin1) the way resolvers do: everything from the first "#" is a comment;
 * the rest is an address followed by names, separated by blanks. Anything else is not an entry.
 */
export function parseEntry(text: string): ParsedEntry | undefined {
    const hash = text.indexOf("#");
    const body = hash >= 0 ? text.slice(0, hash) : text;
    const fields = body.split(RESOLVER_WHITESPACE).filter((field) => field.length > 0);
    const [address, ...names] = fields;
    if (address === undefined || names.length === 0) return undefined;
    const family = addressFamily(address);
    if (!family) return undefined;
    const comment = hash >= 0 ? toUtf8(text.slice(hash + 1)).trim() : "";
    return {
        address: canonicalAddress(address),
        family,
        names: names.map(toUtf8),
        comment: comment.length > 0 ? comment : undefined,
    };
}

/** Converts UTF-8 text to the document's one-character-per-byte form. */
export function fromUtf8(text: string): string {
    return Buffer.from(text, "utf8").toString("latin1");
}

/** Converts the document's one-character-per-byte form back to UTF-8 text. */
export function toUtf8(bytes: string): string {
    return NON_ASCII.test(bytes) ? Buffer.from(bytes, "latin1").toString("utf8") : bytes;
}

function makeLine(text: string, ending: LineEnding, order: number): MutableLine {
    return { text, ending, entry: parseEntry(text), removed: false, order };
}

function indexKey(family: AddressFamily, name: string): string {
    return `${family} ${foldCase(name)}`;
}

function countNewlines(text: string, end: number): number {
    let count = 0;
    for (let i = text.indexOf("\n"); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) count++;
    return count;
}
