// A hosts file's lines as a resolver reads them: the line, its ending, and the entry an address line
// carries. Text is in the document's one-character-per-byte form (latin1, see hostsDocument.ts), so bytes
// that are not UTF-8 survive; names and comments are decoded to UTF-8 when they are read.

import { type AddressFamily, addressFamily, canonicalAddress } from "./address";

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

const RESOLVER_WHITESPACE = /[ \t\r\f\v]+/;
const NON_ASCII = /[\x80-\xff]/;

/**
 * Parses one line's text (latin1) the way resolvers do: everything from the first "#" is a comment;
 * the rest is an address followed by names, separated by blanks. Anything else is not an entry.
 */
export function parseEntry(text: string): ParsedEntry | undefined {
    const [address, ...names] = resolverFields(text);
    if (address === undefined || names.length === 0) return undefined;
    const family = addressFamily(address);
    if (!family) return undefined;
    const hash = text.indexOf("#");
    const comment = hash >= 0 ? toUtf8(text.slice(hash + 1)).trim() : "";
    return {
        address: canonicalAddress(address),
        family,
        names: names.map(toUtf8),
        comment: comment.length > 0 ? comment : undefined,
    };
}

/** The fields a resolver reads on a line: the text before the first "#", split on blanks. */
export function resolverFields(text: string): string[] {
    const hash = text.indexOf("#");
    const body = hash >= 0 ? text.slice(0, hash) : text;
    return body.split(RESOLVER_WHITESPACE).filter((field) => field.length > 0);
}

/** Converts UTF-8 text to the document's one-character-per-byte form. */
export function fromUtf8(text: string): string {
    return Buffer.from(text, "utf8").toString("latin1");
}

/** Converts the document's one-character-per-byte form back to UTF-8 text. */
export function toUtf8(bytes: string): string {
    return NON_ASCII.test(bytes) ? Buffer.from(bytes, "latin1").toString("utf8") : bytes;
}
