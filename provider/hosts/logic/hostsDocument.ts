// Pure, lossless model of a hosts file.
//
// The file is held as a "binary string" (latin1: one character per byte), so every byte of every line we
// do not own survives a round trip exactly: invalid UTF-8, tabs, runs of spaces, inline comments, CRLF or
// LF endings, a missing final newline and a BOM. Only text we write ourselves is converted from UTF-8.
// Edits never shift other lines' bytes: a rewrite replaces one line's text, a removal drops one line with
// its ending, an append adds one line at the end.
//
// Work is proportional to what an operation touches, not to the file: parsing only finds where lines
// start; a line becomes an object, and is parsed, when a search finds its name on it or a listing asks
// for it; a name is searched for in the file's text (nameSearch.ts: a native scan, then each hit checked
// as a resolver reads the line; an index of every line's names once a document is searched often);
// serializing hands out the untouched stretches between edits as views of the bytes read, which a write
// passes to one writev. A 150,000-line ad-blocking file with a handful of managed entries pays for those
// entries only.
//
// Beside it: the lines as a resolver reads them (hostsLine.ts) and the scans of the text (hostsText.ts).

import { UnsupportedHostsFileError } from "../errors/unsupportedHostsFileError";
import type { AddressFamily } from "./address";
import { DocumentLine } from "./documentLine";
import { foldCase } from "./hostname";
import { fromUtf8, type HostsLine, type LineEnding, toUtf8 } from "./hostsLine";
import { countNewlines, countOccurrences, NewlineCounter, nulAmongText } from "./hostsText";
import { NameSearch } from "./nameSearch";

export {
    fromUtf8,
    type HostsLine,
    type LineEnding,
    type ParsedEntry,
    parseEntry,
    resolverFields,
    toUtf8,
} from "./hostsLine";

const UTF8_BOM = "\xEF\xBB\xBF";

/** A parsed hosts file that can be edited line by line and serialized back byte for byte. */
export class HostsDocument {
    /** Original lines made into objects so far, by the offset where they start. */
    private readonly materialized = new Map<number, DocumentLine>();
    /** Original lines whose text or ending changed, or that were removed: what serializing splices. */
    private readonly touched = new Set<DocumentLine>();
    /** Lines whose text is not the file's (rewritten originals and appended lines): a search skips them. */
    private readonly rewritten = new Set<DocumentLine>();
    /** The live ones among them, by each name they carry (folded), searched instead of the text. */
    private readonly rewrittenByName = new Map<string, Set<DocumentLine>>();
    /** Where names appear on the original lines. */
    private readonly names: NameSearch;
    private readonly appended: DocumentLine[] = [];
    private readonly removedOrders: number[] = [];
    /** Newlines before an offset of the text, remembered as they are counted. */
    private readonly newlines: NewlineCounter;
    private ending: "\n" | "\r\n" | undefined;
    private edits = 0;

    private constructor(
        private readonly bom: string,
        /** The file's bytes after the BOM, one character per byte. */
        private readonly body: string,
        /** The same bytes as read: serializing hands out their untouched stretches as they are. */
        private readonly source: Buffer,
        private readonly defaultEnding: "\n" | "\r\n",
        /** How many lines the file has, when the caller knew it; counted on first need otherwise. */
        private originalLines: number | undefined,
    ) {
        this.newlines = new NewlineCounter(body);
        this.names = new NameSearch(body, (at) => this.lineStartAt(at));
    }

    /**
     * Parses file bytes. `defaultEnding` is used for new lines when the file has none to copy from.
     * `knownLineCount` spares counting the lines when the caller knows it (the document that produced
     * these bytes: see `lineCount`). The document keeps `bytes` (its `content` is made of them), so
     * they must not change after. Throws UnsupportedHostsFileError for UTF-16 files, files with a NUL
     * byte among other bytes of a line, and files of nothing but NUL bytes, which are not hosts files we
     * can rewrite without damage. Lines of nothing but NUL bytes are kept (see `nulAmongText`).
     */
    static parse(bytes: Uint8Array, defaultEnding: "\n" | "\r\n" = "\n", knownLineCount?: number): HostsDocument {
        const whole = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        const raw = whole.toString("latin1");
        if (raw.startsWith("\xFF\xFE") || raw.startsWith("\xFE\xFF")) {
            throw new UnsupportedHostsFileError("the file is UTF-16 encoded; save it as UTF-8 (or ANSI) and try again");
        }
        const bom = raw.startsWith(UTF8_BOM) ? UTF8_BOM : "";
        const body = raw.slice(bom.length);
        if (body.includes("\0")) {
            const nul = nulAmongText(body);
            if (nul >= 0) {
                const lineNumber = countNewlines(body, 0, nul) + 1;
                throw new UnsupportedHostsFileError(
                    `the file contains a NUL byte on line ${lineNumber}, so it is not a text hosts file; check the path`,
                );
            }
            if (!/[^\0\r\n]/.test(body)) {
                throw new UnsupportedHostsFileError(
                    "the file holds nothing but NUL bytes (what a crash can leave); check the path, or restore the file",
                );
            }
        }
        return new HostsDocument(bom, body, whole.subarray(bom.length), defaultEnding, knownLineCount);
    }

    /** Ending used for lines we add: the file's own dominant ending. */
    get lineEnding(): "\n" | "\r\n" {
        if (this.ending === undefined) {
            // Only a file with CRLF in it needs counting.
            const crlf = countOccurrences(this.body, "\r\n");
            const lf =
                crlf === 0 ? (this.body.includes("\n") ? 1 : 0) : countNewlines(this.body, 0, this.body.length) - crlf;
            this.ending = crlf > lf ? "\r\n" : lf > 0 ? "\n" : this.defaultEnding;
        }
        return this.ending;
    }

    /** How many live lines the document has. */
    get lineCount(): number {
        return this.originalLineCount() - this.removedOrders.length + this.appended.length;
    }

    /** Lines edited since the parse (rewritten, removed, re-ended or appended): the work they add to each operation. */
    get editedLines(): number {
        return this.touched.size + this.appended.length;
    }

    /** Serializes the document: the bytes read, with only the edited lines changed. */
    toBuffer(): Buffer {
        return Buffer.concat(this.content());
    }

    /** The document's bytes as stretches, in order: views of the bytes read (never copied) around edited lines. */
    content(): Uint8Array[] {
        const stretches: Uint8Array[] = [Buffer.from(this.bom, "latin1")];
        const bytesOf = (line: DocumentLine) => Buffer.from(line.text + line.ending, "latin1");
        let copied = 0;
        for (const line of [...this.touched].sort((a, b) => a.order - b.order)) {
            stretches.push(this.source.subarray(copied, line.order));
            if (!line.removed) stretches.push(bytesOf(line));
            copied = line.order + line.originalBytes;
        }
        stretches.push(this.source.subarray(copied), ...this.appended.filter((line) => !line.removed).map(bytesOf));
        return stretches.filter((stretch) => stretch.length > 0);
    }

    /** How many lines have been appended so far: a mark for `appendedSince`. */
    get appendedCount(): number {
        return this.appended.length;
    }

    /** The UTF-8 text of the lines appended after the first `mark` appends that are still live. */
    appendedSince(mark: number): string[] {
        return this.appended.slice(mark).flatMap((line) => (line.removed ? [] : [toUtf8(line.text)]));
    }

    /** Counts the edits made so far: a batch that leaves it unchanged needs no write. */
    get revision(): number {
        return this.edits;
    }

    /** Live lines in file order. */
    allLines(): readonly HostsLine[] {
        const lines: HostsLine[] = [];
        for (let start = 0; start < this.body.length; ) {
            const line = this.original(start);
            if (!line.removed) lines.push(line);
            start += line.originalBytes;
        }
        for (const line of this.appended) if (!line.removed) lines.push(line);
        return lines;
    }

    /** Live address lines of `family` that carry `name` (case-insensitively), in file order. */
    linesNaming(family: AddressFamily, name: string): HostsLine[] {
        const wanted = foldCase(name);
        const carries = (line: DocumentLine) =>
            !line.removed &&
            line.entry?.family === family &&
            line.entry.names.some((carried) => foldCase(carried) === wanted);
        const found: DocumentLine[] = [];
        for (const start of this.names.linesMentioning(wanted)) {
            const line = this.original(start);
            if (!this.rewritten.has(line) && carries(line)) found.push(line);
        }
        for (const line of this.rewrittenByName.get(wanted) ?? []) if (carries(line)) found.push(line);
        return found.sort((a, b) => a.order - b.order);
    }

    /** 1-based line number of a live line. */
    lineNumber(line: HostsLine): number {
        const own = this.own(line);
        let removedBefore = 0;
        for (const order of this.removedOrders) if (order < own.order) removedBefore++;
        const before = this.isOriginal(own)
            ? this.newlines.before(own.order)
            : this.originalLineCount() + this.appendedIndex(own);
        return before - removedBefore + 1;
    }

    /**
     * Appends a line of UTF-8 text at the end. A file without a final newline keeps that property:
     * the previous last line gets the ending it lacked, and the new line gets none.
     */
    append(utf8Text: string): HostsLine {
        const last = this.lastLiveLine();
        let ending: LineEnding = this.lineEnding;
        if (last && last.ending === "") {
            this.setEnding(last, this.lineEnding);
            ending = "";
        }
        const order = this.firstAppendedOrder() + this.appended.length;
        const line = new DocumentLine(this, order, 0, fromUtf8(utf8Text), ending);
        this.edits++;
        this.appended.push(line);
        this.markRewritten(line);
        return line;
    }

    /** Replaces the text of a live line, keeping its ending and its place. */
    rewrite(line: HostsLine, utf8Text: string): void {
        const own = this.own(line);
        this.edits++;
        this.unmarkRewritten(own);
        own.setText(fromUtf8(utf8Text));
        this.markRewritten(own);
        if (this.isOriginal(own)) this.touched.add(own);
    }

    /**
     * Removes a live line with its ending. Removing the last line of a file that had no final newline
     * also removes the ending its predecessor was given by `append`, restoring the original bytes.
     */
    remove(line: HostsLine): void {
        const own = this.own(line);
        if (own === this.lastLiveLine() && own.ending === "") {
            // (A blank predecessor keeps its ending: without it, it would be no line at all.)
            const previous = this.liveLineBefore(own);
            if (previous && previous.text !== "") this.setEnding(previous, "");
        }
        this.edits++;
        this.unmarkRewritten(own);
        own.removed = true;
        this.removedOrders.push(own.order);
        if (this.isOriginal(own)) this.touched.add(own);
    }

    private markRewritten(line: DocumentLine): void {
        this.rewritten.add(line);
        for (const name of line.entry?.names ?? []) {
            const key = foldCase(name);
            const lines = this.rewrittenByName.get(key);
            if (lines) lines.add(line);
            else this.rewrittenByName.set(key, new Set([line]));
        }
    }

    private unmarkRewritten(line: DocumentLine): void {
        if (!this.rewritten.delete(line)) return;
        for (const name of line.entry?.names ?? []) {
            const key = foldCase(name);
            const lines = this.rewrittenByName.get(key);
            lines?.delete(line);
            if (lines?.size === 0) this.rewrittenByName.delete(key);
        }
    }

    /** The original line starting at offset `start`. */
    private original(start: number): DocumentLine {
        let line = this.materialized.get(start);
        if (!line) {
            const newline = this.body.indexOf("\n", start);
            const next = newline < 0 ? this.body.length : newline + 1;
            let end = next;
            let ending: LineEnding = "";
            if (newline >= 0) {
                end = newline;
                ending = "\n";
                if (end > start && this.body.charCodeAt(end - 1) === 13) {
                    end--;
                    ending = "\r\n";
                }
            }
            line = new DocumentLine(this, start, next - start, this.body.slice(start, end), ending);
            this.materialized.set(start, line);
        }
        return line;
    }

    /** Where the original line holding offset `at` starts. */
    private lineStartAt(at: number): number {
        return at === 0 ? 0 : this.body.lastIndexOf("\n", at - 1) + 1;
    }

    private isOriginal(line: DocumentLine): boolean {
        return line.order < this.body.length;
    }

    /** The order of the first appended line: past every original offset. */
    private firstAppendedOrder(): number {
        return this.body.length + 1;
    }

    /** The place of an appended line among the appended ones, from its order. */
    private appendedIndex(line: DocumentLine): number {
        return line.order - this.firstAppendedOrder();
    }

    private originalLineCount(): number {
        if (this.originalLines === undefined) {
            const unterminated = this.body.length > 0 && !this.body.endsWith("\n") ? 1 : 0;
            this.originalLines = this.newlines.before(this.body.length) + unterminated;
        }
        return this.originalLines;
    }

    private setEnding(line: DocumentLine, ending: LineEnding): void {
        line.ending = ending;
        if (this.isOriginal(line)) this.touched.add(line);
    }

    private own(line: HostsLine): DocumentLine {
        if (!(line instanceof DocumentLine) || line.document !== this || line.removed) {
            throw new Error("line is not a live line of this document");
        }
        return line;
    }

    private lastLiveLine(): DocumentLine | undefined {
        for (let i = this.appended.length - 1; i >= 0; i--) {
            const line = this.appended[i] as DocumentLine;
            if (!line.removed) return line;
        }
        if (this.body.length === 0) return undefined;
        const last = this.original(this.lineStartAt(this.body.length - 1));
        return last.removed ? this.liveLineBefore(last) : last;
    }

    /** The nearest live line before `line` (removed lines are few: this walks past them only). */
    private liveLineBefore(line: DocumentLine): DocumentLine | undefined {
        let current: DocumentLine | undefined = line;
        do current = this.lineBefore(current);
        while (current?.removed);
        return current;
    }

    private lineBefore(line: DocumentLine): DocumentLine | undefined {
        if (!this.isOriginal(line)) {
            const at = this.appendedIndex(line);
            if (at > 0) return this.appended[at - 1];
            return this.body.length === 0 ? undefined : this.original(this.lineStartAt(this.body.length - 1));
        }
        return line.order === 0 ? undefined : this.original(this.lineStartAt(line.order - 1));
    }
}
