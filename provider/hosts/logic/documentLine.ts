// A line of a HostsDocument, as the document keeps it: its place, its bytes as read, its text now.

import type { HostsDocument } from "./hostsDocument";
import { type HostsLine, type LineEnding, type ParsedEntry, parseEntry } from "./hostsLine";

/**
 * A line of one document: an original line of the file, placed by the offset where it starts, or a line
 * appended after them.
 */
export class DocumentLine implements HostsLine {
    removed = false;
    private parsed: ParsedEntry | undefined | null = null;

    constructor(
        readonly document: HostsDocument,
        /** File order: an original line's offset in the text; past the text's end for appended lines. */
        readonly order: number,
        /** The bytes the line had in the file, ending included; 0 for an appended line. */
        readonly originalBytes: number,
        public text: string,
        public ending: LineEnding,
    ) {}

    get entry(): ParsedEntry | undefined {
        if (this.parsed === null) this.parsed = parseEntry(this.text);
        return this.parsed;
    }

    setText(text: string): void {
        this.text = text;
        this.parsed = null;
    }
}
