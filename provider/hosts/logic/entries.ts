// Pure operations on one managed entry inside a HostsDocument: identity, lookup, create (with adopt),
// update, delete. Each operation either throws before touching the document or applies all its edits,
// so a failed operation in a batch never leaves half an edit behind.

import { quote } from "../../shared/text";
import { AdoptMismatchError, type FieldDifference } from "../errors/adoptMismatchError";
import { type ConflictingLine, EntryConflictError } from "../errors/entryConflictError";
import { EntryMissingError } from "../errors/entryMissingError";
import { type AddressFamily, addressFamily, FAMILY_LABEL } from "./address";
import { foldCase } from "./hostname";
import { type HostsDocument, type HostsLine, type ParsedEntry, toUtf8 } from "./hostsDocument";

/** What a program declares for a line (normalized by `check`). */
export interface DesiredEntry {
    readonly address: string;
    readonly names: readonly string[];
    readonly comment?: string | undefined;
}

/**
 * What makes an entry the same entry: its address family and canonical (first) name. The same name may
 * be managed once for IPv4 and once for IPv6. Changing either means a different entry (a replacement);
 * the address within the family, the aliases and the comment are updated in place.
 */
export interface EntryIdentity {
    readonly family: AddressFamily;
    readonly name: string;
}

/** An entry as found in the file. */
export interface FoundEntry extends ParsedEntry {
    /** 1-based line number. */
    readonly lineNumber: number;
}

/** The identity of a desired entry. */
export function identityOf(entry: DesiredEntry): EntryIdentity {
    const family = addressFamily(entry.address);
    const [name] = entry.names;
    if (!family || name === undefined) throw new Error("identityOf needs a checked entry");
    return { family, name: foldCase(name) };
}

/**
 * The resource id: `<family>/<canonical name>`, e.g. `ipv4/web.internal`, and for an entry on another
 * machine `@<host>:<port>` after it (`ipv4/web.internal@10.0.0.5:22`): the same name on two machines is
 * two entries. Stable across in-place updates.
 */
export function formatId(identity: EntryIdentity, machine?: string): string {
    return `${identity.family}/${identity.name}${machine === undefined ? "" : `@${machine}`}`;
}

/** Parses a resource id; undefined when it is not one of ours. `machine` is `host:port`, when remote. */
export function parseId(id: string): (EntryIdentity & { machine?: string }) | undefined {
    const match = /^(ipv4|ipv6)\/([^/\s@]+)(?:@([^/\s@]+))?$/.exec(id);
    if (!match) return undefined;
    const identity = { family: match[1] as AddressFamily, name: foldCase(match[2] as string) };
    return match[3] === undefined ? identity : { ...identity, machine: match[3] };
}

/** How an entry is named in messages: `"web.internal" (IPv4)`. */
export function describeIdentity(identity: EntryIdentity): string {
    return `${quote(identity.name)} (${FAMILY_LABEL[identity.family]})`;
}

/** The line we write for an entry: address, a tab, names separated by spaces, then ` # comment`. */
export function renderLine(entry: DesiredEntry): string {
    const comment = entry.comment ? ` # ${entry.comment}` : "";
    return `${entry.address}\t${entry.names.join(" ")}${comment}`;
}

/**
 * The line of an entry: among lines of its family carrying its canonical name, the one where that name
 * comes first, else the first in file order (a hand edit may have moved the name to an alias position).
 */
export function findEntryLine(doc: HostsDocument, identity: EntryIdentity): HostsLine | undefined {
    const candidates = doc.linesNaming(identity.family, identity.name);
    return candidates.find((line) => foldCase(line.entry?.names[0] ?? "") === identity.name) ?? candidates[0];
}

/** Reads an entry from the document (refresh and get): undefined when its line is gone. */
export function readEntry(doc: HostsDocument, identity: EntryIdentity): FoundEntry | undefined {
    const line = findEntryLine(doc, identity);
    if (!line?.entry) return undefined;
    return { ...line.entry, names: line.entry.names.map(foldCase), lineNumber: doc.lineNumber(line) };
}

/** How a create treats lines that are already there. */
export interface CreateOptions {
    /** Take over an identical line instead of failing. */
    readonly adopt: boolean;
    /** The file, as the program names it, for messages. */
    readonly file: string;
    /**
     * The exact text of a line an earlier create of this very entry wrote, whose answer never reached
     * the stack (the create journal says so, or the store: an undone attempt of the same write): found
     * alone and unchanged, it is this entry's own line.
     */
    readonly interruptedLine?: string | undefined;
}

/**
 * Creates an entry's line, or takes over an existing one without writing: an identical line with
 * `adopt`, or the line an interrupted create of this entry wrote (`resumed`). Throws
 * EntryConflictError when a name is already on a line of the same family, and AdoptMismatchError when
 * adopting finds lines that are not identical to the entry.
 */
export function createEntry(
    doc: HostsDocument,
    desired: DesiredEntry,
    options: CreateOptions,
): { line: HostsLine; adopted: boolean; resumed?: boolean } {
    const identity = identityOf(desired);
    const existing = linesCarrying(doc, identity.family, desired.names);
    if (existing.length === 0) return { line: doc.append(renderLine(desired)), adopted: false };

    const [first] = existing;
    if (
        existing.length === 1 &&
        first?.entry &&
        options.interruptedLine !== undefined &&
        toUtf8(first.text) === options.interruptedLine &&
        differencesFrom(first.entry, desired).length === 0
    ) {
        return { line: first, adopted: false, resumed: true };
    }
    const described = existing.map((line) => describeLine(doc, line, desired.names));
    if (!options.adopt) throw new EntryConflictError(describeIdentity(identity), options.file, described, "create");
    const [only] = existing;
    const differences = existing.length === 1 && only?.entry ? differencesFrom(only.entry, desired) : [];
    if (only && existing.length === 1 && differences.length === 0) return { line: only, adopted: true };
    throw new AdoptMismatchError(describeIdentity(identity), options.file, described, differences);
}

/**
 * Rewrites an entry's line in place (address within the family, aliases, comment). Writes nothing when
 * the line already says the same. Throws EntryMissingError when the line is gone and EntryConflictError
 * when a new alias is already on another line.
 */
export function updateEntry(
    doc: HostsDocument,
    identity: EntryIdentity,
    desired: DesiredEntry,
    options: { file: string },
): { line: HostsLine; changed: boolean } {
    const line = findEntryLine(doc, identity);
    if (!line?.entry) throw new EntryMissingError(describeIdentity(identity), options.file);
    const others = linesCarrying(doc, identity.family, desired.names).filter((other) => other !== line);
    if (others.length > 0) {
        const described = others.map((other) => describeLine(doc, other, desired.names));
        throw new EntryConflictError(describeIdentity(identity), options.file, described, "update");
    }
    if (differencesFrom(line.entry, desired).length === 0) return { line, changed: false };
    doc.rewrite(line, renderLine(desired));
    return { line, changed: true };
}

/** Removes an entry's line; returns false when it was already gone (which is success for delete). */
export function deleteEntry(doc: HostsDocument, identity: EntryIdentity): boolean {
    const line = findEntryLine(doc, identity);
    if (!line) return false;
    doc.remove(line);
    return true;
}

/** How an existing line differs from a desired entry; empty when they are identical. */
export function differencesFrom(found: ParsedEntry, desired: DesiredEntry): FieldDifference[] {
    const differences: FieldDifference[] = [];
    if (found.address !== desired.address) {
        differences.push({ field: "address", inFile: found.address, inProgram: desired.address });
    }
    const foundNames = found.names.map(foldCase);
    if (foundNames.join(" ") !== desired.names.join(" ")) {
        differences.push({ field: "names", inFile: foundNames, inProgram: desired.names });
    }
    if ((found.comment ?? "") !== (desired.comment ?? "")) {
        differences.push({ field: "comment", inFile: found.comment, inProgram: desired.comment });
    }
    return differences;
}

function linesCarrying(doc: HostsDocument, family: AddressFamily, names: readonly string[]): HostsLine[] {
    const lines = new Set<HostsLine>();
    for (const name of names) for (const line of doc.linesNaming(family, name)) lines.add(line);
    return [...lines].sort((a, b) => doc.lineNumber(a) - doc.lineNumber(b));
}

function describeLine(doc: HostsDocument, line: HostsLine, names: readonly string[]): ConflictingLine {
    const carried = new Set(line.entry?.names.map(foldCase));
    return {
        lineNumber: doc.lineNumber(line),
        text: toUtf8(line.text),
        names: names.filter((n) => carried.has(n)),
    };
}
