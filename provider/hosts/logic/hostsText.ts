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
 * The first NUL byte of `text` that shares its line with other bytes (a line ending aside), or -1. A line
 * of nothing but NUL bytes is what a tool that rewrites the file in place without its lock leaves beside
 * an in-place write of ours, which must cut the file to its length: a read of the tool's while the cut
 * runs copies the zeros the kernel leaves in the cut page (the read took the longer length), and a
 * rewrite of the tool's shorter than our content, landing between our look at the length and the cut,
 * is extended by the cut with zeros (no system call cuts only a longer file). Resolvers read such a line
 * as empty, so it is kept as any other foreign line; a NUL among other bytes means the file is not text.
 */
export function nulAmongText(text: string): number {
    for (let at = text.indexOf("\0"); at >= 0; ) {
        const start = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
        const newline = text.indexOf("\n", at);
        const end = newline < 0 ? text.length : newline;
        const bare = text.charCodeAt(end - 1) === 13 && end - 1 > start ? end - 1 : end;
        for (let i = start; i < bare; i++) if (text.charCodeAt(i) !== 0) return at;
        at = newline < 0 ? -1 : text.indexOf("\0", newline);
    }
    return -1;
}
