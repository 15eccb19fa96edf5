// Scanning the text of a hosts file (one character per byte) without splitting it into lines: counting
// newlines and line endings, and telling whether a match stands where a resolver reads a whole name. What
// lets a large file cost only the lines an operation touches (see hostsDocument.ts).

/**
 * Whether the character next to a match lets it be a whole name: blanks as resolvers split on, and
 * after it also a comment, a line end or the end of the file (NaN, past either end of the text).
 */
export function isNameBoundary(code: number, after: boolean): boolean {
    if (code === 32 || code === 9 || code === 13 || code === 12 || code === 11) return true;
    return after && (code === 10 || code === 35 || Number.isNaN(code));
}

/** Newlines in `text` from `from` up to (not including) `to`. */
export function countNewlines(text: string, from: number, to: number): number {
    let count = 0;
    for (let i = text.indexOf("\n", from); i >= 0 && i < to; i = text.indexOf("\n", i + 1)) count++;
    return count;
}

/** Occurrences of `needle` in `text`. */
export function countOccurrences(text: string, needle: string): number {
    let count = 0;
    for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) count++;
    return count;
}

/**
 * Newlines before an offset of one text, each count remembered so that the next one only scans from the
 * nearest offset already counted below it: line numbers near each other cost the distance between them.
 */
export class NewlineCounter {
    /** Offsets whose count of newlines before them is known, ascending, with those counts. */
    private readonly countedOffsets: number[] = [0];
    private readonly countedNewlines: number[] = [0];

    constructor(private readonly text: string) {}

    /** Newlines in the text before `offset`. */
    before(offset: number): number {
        let low = 0;
        let high = this.countedOffsets.length - 1;
        while (low < high) {
            const middle = (low + high + 1) >> 1;
            if ((this.countedOffsets[middle] as number) <= offset) low = middle;
            else high = middle - 1;
        }
        const from = this.countedOffsets[low] as number;
        if (from === offset) return this.countedNewlines[low] as number;
        const count = (this.countedNewlines[low] as number) + countNewlines(this.text, from, offset);
        this.countedOffsets.splice(low + 1, 0, offset);
        this.countedNewlines.splice(low + 1, 0, count);
        return count;
    }
}

/**
 * The first NUL byte of `text` that follows other bytes on its line, or -1. NUL bytes at a line's start
 * are what a tool that rewrites the file in place without its lock leaves beside an in-place write of
 * ours, which must cut the file to its length: a read of the tool's while the cut runs copies the zeros
 * the kernel leaves in the cut page (the read took the longer length), and a rewrite of the tool's shorter
 * than our content, landing between our look at the length and the cut, is extended by the cut with zeros
 * (no system call cuts only a longer file); a line appended next (`echo >>`) then follows the zeros on
 * their line. Resolvers read a line only up to its first NUL, so such a line is empty to them, and it is
 * kept as any other foreign line (refusing it would lock every writer out). A NUL after other bytes of
 * its line means the file is not text (a binary file named by mistake).
 */
export function nulAmongText(text: string): number {
    for (let at = text.indexOf("\0"); at >= 0; at = text.indexOf("\0", at + 1)) {
        const start = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
        for (let i = start; i < at; i++) if (text.charCodeAt(i) !== 0) return at;
    }
    return -1;
}
