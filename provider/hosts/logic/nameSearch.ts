// Where a name appears among a hosts file's original lines (the text as read; edited lines are the
// document's to search). The first searches of a document scan the text: a native search, then each hit
// checked for the blanks a resolver splits names on. A document searched many times (a refresh reads
// every entry of its file, each in its own search) indexes every line's names once instead, at about the
// cost of that many scans; a 150,000-line file with a handful of managed entries never gets there.

import { foldCase } from "./hostname";
import { fromUtf8, parseEntry } from "./hostsLine";
import { isNameBoundary } from "./hostsText";

/**
 * Scans of one document before its names are indexed: indexing parses every line, which costs about as
 * much as this many scans of the text, whatever its size.
 */
const SCANS_BEFORE_INDEX = 64;
const REGEXP_SPECIAL = /[.*+?^${}()|[\]\\]/g;

/** The names of a document's original lines, found by scan or by index. */
export class NameSearch {
    /** Whether the text has an uppercase ASCII letter: without one, a name is found by plain search. */
    private upperCase: boolean | undefined;
    /** The line starts each name scanned for appears on, by the name as searched (latin1). */
    private readonly mentions = new Map<string, readonly number[]>();
    private scans = 0;
    /** Every original line's start, by each name it carries (folded): built after `SCANS_BEFORE_INDEX` scans. */
    private index: Map<string, number[]> | undefined;

    /**
     * @param body the file's text, one character per byte (see hostsDocument.ts)
     * @param lineStartAt where the original line holding an offset starts
     */
    constructor(
        private readonly body: string,
        private readonly lineStartAt: (at: number) => number,
    ) {}

    /**
     * Where the original lines that may carry `wanted` (a folded name, UTF-8) start, in file order: every
     * line that carries it, and perhaps lines that only mention it (the caller keeps the lines whose entry
     * carries it). Remembered: the text never changes, and an entry's operations search for the same names.
     */
    linesMentioning(wanted: string): readonly number[] {
        if (this.index) return this.index.get(wanted) ?? [];
        const needle = fromUtf8(wanted);
        let starts = this.mentions.get(needle);
        if (!starts) {
            if (++this.scans > SCANS_BEFORE_INDEX) {
                this.index = this.indexNames();
                this.mentions.clear();
                return this.index.get(wanted) ?? [];
            }
            // At most SCANS_BEFORE_INDEX of them are remembered, then dropped for the index.
            starts = [...this.scanFor(needle)];
            this.mentions.set(needle, starts);
        }
        return starts;
    }

    /** Every original line's start by each name its entry carries (folded), as a resolver reads the line. */
    private indexNames(): Map<string, number[]> {
        const index = new Map<string, number[]>();
        const { body } = this;
        for (let start = 0; start < body.length; ) {
            const newline = body.indexOf("\n", start);
            const end = newline < 0 ? body.length : newline;
            // A CR before the newline is a blank to a resolver, as parseEntry reads it.
            const entry = parseEntry(body.slice(start, end));
            for (const name of entry?.names ?? []) {
                const key = foldCase(name);
                const lines = index.get(key);
                if (!lines) index.set(key, [start]);
                else if (lines[lines.length - 1] !== start) lines.push(start);
            }
            start = end + 1;
        }
        return index;
    }

    /** Where the original lines that `needle` (latin1) appears on as a name start, by a scan of the text. */
    private *scanFor(needle: string): Generator<number> {
        if (needle.length === 0) return;
        // Native search. A text with uppercase letters is searched case-insensitively (a superset of
        // what ASCII case folding matches; the caller keeps only the lines that carry the name);
        // otherwise the folded name is all there is to find.
        this.upperCase ??= /[A-Z]/.test(this.body);
        const search = this.upperCase ? new RegExp(needle.replace(REGEXP_SPECIAL, "\\$&"), "gi") : undefined;
        const next = (from: number) => {
            if (!search) return this.body.indexOf(needle, from);
            search.lastIndex = from;
            return search.exec(this.body)?.index ?? -1;
        };
        for (let at = next(0); at >= 0; ) {
            if (
                !isNameBoundary(this.body.charCodeAt(at - 1), false) ||
                !isNameBoundary(this.body.charCodeAt(at + needle.length), true)
            ) {
                at = next(at + 1);
                continue;
            }
            yield this.lineStartAt(at);
            // One answer per line, however often the name appears on it.
            const newline = this.body.indexOf("\n", at + needle.length);
            at = newline < 0 ? -1 : next(newline + 1);
        }
    }
}
