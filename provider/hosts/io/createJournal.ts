// What this package's creates wrote, for creates whose answer never reached the engine.
//
// A create writes its line and then answers the engine. If the provider is ended in between (a second
// Ctrl-C during a big `up`, a crash, the CLI killed), or the engine is ended before it records the
// answer, the line is in the file but the stack holds the create as pending, and the next `up` creates
// the entry again: it would find its own line and fail as if someone else had written it (row 4). So
// before a write carries a create's line, the line is recorded here with the stack it was written for,
// flushed; the next create of the same entry for the same stack that finds exactly that line, recorded
// by a provider process that is gone, takes it over as its own. A line nobody recorded (a hand edit,
// another tool) or recorded for another stack still fails row 4.
//
// Whether the engine recorded an answer cannot be seen from here (it sends the same Cancel and SIGINT
// at the end of every deployment as after a second Ctrl-C), so records are not cleared when a create
// answers. They are settled once the engine shows it knows the entry (it asks to diff, read, update or
// delete it, or a create takes the line over); a record left open only ever serves its own stack, for
// which the line is its own. The journal is a file of JSON lines beside the hosts file
// (`.<name>.pulumi-lifecycle.journal`), or in this user's private directory when that directory is not
// writable; records are appended (O_APPEND) and the file is removed, under the hosts file's lock, once
// nothing in it is open.

import { createHash } from "node:crypto";
import {
    closeSync,
    constants,
    fstatSync,
    fsyncSync,
    lstatSync,
    openSync,
    readSync,
    unlinkSync,
    writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { codeOf } from "../../shared/files/errno";
import { existingPrivateDirectory, privateDirectory } from "../../shared/files/privateDirectory";
import { isIdentityGone, processIdentity } from "../../shared/files/processes";

/** One line of the journal. */
type Record =
    | {
          readonly op: "wrote";
          readonly id: string;
          readonly line: string;
          readonly stack: string;
          readonly writer: string;
      }
    | { readonly op: "settled"; readonly id: string; readonly line: string };

type Wrote = Extract<Record, { op: "wrote" }>;

/**
 * What a settle found: nothing recorded (no journal, or none with a whole record), records still open
 * after it, or a journal with nothing open, to be removed (`removeIfSettled`, under the lock).
 */
export type SettleOutcome = "nothing recorded" | "still open" | "all settled";

const PERMISSION_CODES = new Set(["EACCES", "EPERM", "EROFS"]);

/** Where the journal of `real` (a hosts file's real path) lives when its directory is writable. */
export function journalPathFor(real: string): string {
    return join(dirname(real), `.${basename(real)}.pulumi-lifecycle.journal`);
}

/** The journal of the hosts files one provider process writes. */
export class CreateJournal {
    /** Lines staged by this batch's creates, per file, until the write that carries them. */
    private readonly staged = new Map<string, Map<string, { line: string; stack: string }>>();
    private readonly reader = new JournalReader();
    private flushes = 0;

    /** @param writer this process, as `host:pid:start` */
    constructor(private readonly writer: string = processIdentity()) {}

    /** Notes that a create for `stack` writes `line` for entry `id` into `real` in the batch being computed. */
    stage(real: string, id: string, line: string, stack: string): void {
        const lines = this.staged.get(real) ?? new Map<string, { line: string; stack: string }>();
        this.staged.set(real, lines);
        lines.set(id, { line, stack });
    }

    /**
     * How many times this process has recorded lines (`flush`): what it found clear before stays clear,
     * as far as its own entries go, while this is unchanged.
     */
    get recorded(): number {
        return this.flushes;
    }

    /**
     * Records the staged lines of `real`, flushed; call under the lock, before the write that carries them
     * changes the file.
     */
    flush(real: string): void {
        const lines = this.staged.get(real);
        if (!lines || lines.size === 0) return;
        this.staged.delete(real);
        this.flushes++;
        const records = [...lines].map(
            ([id, { line, stack }]): Record => ({ op: "wrote", id, line, stack, writer: this.writer }),
        );
        this.append(real, records, true);
    }

    /** Drops what a batch staged but did not write (its write failed). */
    discard(real: string): void {
        this.staged.delete(real);
    }

    /**
     * The line an earlier create for `stack` wrote for `id` into `real`, if any, whose answer may never
     * have been recorded: recorded here, not settled, by a process of this host that is gone. Call under
     * the lock.
     */
    interruptedLine(real: string, id: string, stack: string): string | undefined {
        const files = this.reader.journals(real);
        if (openCount(files) === 0) {
            this.removeIfEmpty(real);
            return undefined;
        }
        return openFor(files, id).find((record) => record.stack === stack && isIdentityGone(record.writer))?.line;
    }

    /**
     * The engine knows the entries `ids` of `real`: whatever was recorded for them (for `line`, when
     * given) is settled. Answers what is left: nothing to settle, records still open, or a journal with
     * nothing open, to be removed (`removeIfSettled`, under the lock).
     */
    settle(real: string, ids: ReadonlySet<string>, line?: string): SettleOutcome {
        const files = this.reader.journals(real);
        if (!files.some((file) => file.count > 0)) return "nothing recorded";
        // By id, never by a scan of every open record: a first refresh after an `up` of N entries settles
        // them all, and an `up` asks each create's interrupted line (both were quadratic in N).
        const settling = new Map<string, Record>();
        for (const id of ids) {
            for (const record of openFor(files, id)) {
                if (line === undefined || record.line === line) {
                    settling.set(recordKey(record), { op: "settled", id: record.id, line: record.line });
                }
            }
        }
        if (settling.size > 0) this.append(real, [...settling.values()], false);
        return settling.size === openCount(files) ? "all settled" : "still open";
    }

    /** Removes the journal of `real` when nothing in it is open; call under the lock. Answers whether nothing was. */
    removeIfSettled(real: string): boolean {
        if (openCount(this.reader.journals(real)) > 0) return false;
        this.removeIfEmpty(real);
        return true;
    }

    private append(real: string, records: readonly Record[], durable: boolean): void {
        const text = records.map((record) => `${JSON.stringify(record)}\n`).join("");
        let fd: number;
        try {
            if (isRemote(real)) throw Object.assign(new Error("a file of another machine"), { code: "EACCES" });
            fd = openJournal(journalPathFor(real));
        } catch (error) {
            if (!PERMISSION_CODES.has(codeOf(error))) throw error;
            fd = openJournal(privateJournalPathFor(real));
        }
        try {
            writeSync(fd, text);
            if (durable) fsyncSync(fd);
        } finally {
            closeSync(fd);
        }
    }

    /** Removes the journal of `real` once nothing in it is open (under the lock). */
    private removeIfEmpty(real: string): void {
        for (const path of journalPaths(real)) {
            try {
                unlinkSync(path);
            } catch {
                // Absent, or not ours to remove: it stays, settled, and costs a read.
            }
        }
    }
}

function openJournal(path: string): number {
    return openSync(
        path,
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0),
        0o644,
    );
}

function isRemote(real: string): boolean {
    return real.startsWith("ssh://");
}

const privateNames = new Map<string, string>();

/** The name of `real`'s journal in the private directory; kept per path, since every lookup of the journal asks for it. */
function privateJournalName(real: string): string {
    let name = privateNames.get(real);
    if (name === undefined) {
        name = `journal-${createHash("sha256").update(real).digest("hex").slice(0, 16)}-${basename(real)}`;
        privateNames.set(real, name);
    }
    return name;
}

/** Where the journal of `real` lives when its directory may not be written: this user's private directory. */
export function privateJournalPathFor(real: string): string {
    return join(privateDirectory(), privateJournalName(real));
}

function journalPaths(real: string): string[] {
    // A file on another machine (`ssh://user@host:port/path`) keeps its journal in this user's private
    // directory: the next `up` that needs it runs here, and the remote directory may not be ours to write.
    const paths = isRemote(real) ? [] : [journalPathFor(real)];
    // Only look in the private directory when it exists: reading must not create it.
    try {
        const directory = existingPrivateDirectory();
        if (directory) paths.push(join(directory, privateJournalName(real)));
    } catch {
        // Not private (refused): nothing of ours can be there.
    }
    return paths;
}

/** How much of a journal's first bytes identify it: a journal removed and written anew differs there. */
const HEAD_BYTES = 256;

/** What this process has read of one journal file: its complete lines up to `offset`, parsed. */
interface ReadSoFar {
    readonly ino: number;
    /** When the file was made, where the file system says (0 where it does not). */
    readonly born: number;
    /** The file's first bytes as read, to tell it from a new journal on a reused inode. */
    head: Buffer;
    offset: number;
    /** How many records it holds. */
    count: number;
    /** Its written records not settled in it, by id and line (`recordKey`). */
    readonly open: Map<string, Wrote[]>;
    /** The keys of `open`, by id. */
    readonly openIds: Map<string, Set<string>>;
    /** The ids and lines it settles. */
    readonly settled: Set<string>;
}

/**
 * Reads journals incrementally: each read parses only the lines appended since this process last read
 * the file (a refresh settles every entry, and reparsing the whole journal each time made the first
 * refresh after a big `up` quadratic). A file that was removed, replaced or truncated is read whole again.
 */
class JournalReader {
    private readonly files = new Map<string, ReadSoFar>();

    /** The journals of `real` as they are now (one, or also the private directory's). */
    journals(real: string): ReadSoFar[] {
        return journalPaths(real).flatMap((path) => this.read(path) ?? []);
    }

    private read(path: string): ReadSoFar | undefined {
        let fd: number | undefined;
        try {
            // Looked for before every settle, where it is usually absent: no error to build then.
            if (lstatSync(path, { throwIfNoEntry: false })) {
                fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
            }
        } catch (error) {
            if (codeOf(error) !== "ENOENT") throw error;
        }
        if (fd === undefined) {
            this.files.delete(path);
            return undefined;
        }
        try {
            const { ino, size, birthtimeMs: born } = fstatSync(fd);
            let known = this.files.get(path);
            const same = known && known.ino === ino && known.born === born && size >= known.offset;
            if (known && !(same && startsWith(fd, known.head))) known = undefined;
            known ??= {
                ino,
                born,
                head: Buffer.alloc(0),
                offset: 0,
                count: 0,
                open: new Map(),
                openIds: new Map(),
                settled: new Set(),
            };
            this.files.set(path, known);
            if (size > known.offset) {
                const bytes = readAt(fd, known.offset, size - known.offset);
                // Only complete lines: a line being appended is read whole next time.
                const end = bytes.lastIndexOf(0x0a) + 1;
                for (const line of bytes.subarray(0, end).toString("utf8").split("\n")) {
                    const record = parseRecord(line);
                    if (record) take(known, record);
                }
                if (known.offset === 0) known.head = Buffer.from(bytes.subarray(0, Math.min(end, HEAD_BYTES)));
                known.offset += end;
            }
            return known;
        } finally {
            closeSync(fd);
        }
    }
}

/** Adds a record to what has been read of its journal. */
function take(file: ReadSoFar, record: Record): void {
    file.count++;
    const key = recordKey(record);
    if (record.op === "settled") {
        file.settled.add(key);
        file.open.delete(key);
        file.openIds.get(record.id)?.delete(key);
    } else if (!file.settled.has(key)) {
        file.open.set(key, [...(file.open.get(key) ?? []), record]);
        const keys = file.openIds.get(record.id) ?? new Set<string>();
        file.openIds.set(record.id, keys.add(key));
    }
}

/** What a settled record names: the entry and its line. */
function recordKey(record: { readonly id: string; readonly line: string }): string {
    return `${record.id}\n${record.line}`;
}

/** Whether `key`, open in `file`, is still open: a record settles what either journal of the file wrote. */
function stillOpen(files: readonly ReadSoFar[], file: ReadSoFar, key: string): boolean {
    return files.length === 1 || !files.some((other) => other !== file && other.settled.has(key));
}

/** The open records of entry `id`. */
function openFor(files: readonly ReadSoFar[], id: string): Wrote[] {
    const open: Wrote[] = [];
    for (const file of files) {
        for (const key of file.openIds.get(id) ?? []) {
            if (stillOpen(files, file, key)) open.push(...(file.open.get(key) ?? []));
        }
    }
    return open;
}

/** How many entry lines are open (one journal: its count; both: each key once checked against the other). */
function openCount(files: readonly ReadSoFar[]): number {
    if (files.length === 1) return (files[0] as ReadSoFar).open.size;
    let count = 0;
    for (const file of files) for (const key of file.open.keys()) if (stillOpen(files, file, key)) count++;
    return count;
}

/** `length` bytes of `fd` from `position` (fewer when the file is shorter by now). */
function readAt(fd: number, position: number, length: number): Buffer {
    const buffer = Buffer.alloc(length);
    let filled = 0;
    while (filled < length) {
        const read = readSync(fd, buffer, filled, length - filled, position + filled);
        if (read === 0) break;
        filled += read;
    }
    return buffer.subarray(0, filled);
}

function startsWith(fd: number, head: Buffer): boolean {
    return head.length === 0 || readAt(fd, 0, head.length).equals(head);
}

/** A record, or undefined for a line that is not one (a torn last line, a foreign edit). */
function parseRecord(line: string): Record | undefined {
    try {
        const value = JSON.parse(line) as Partial<Record> & { [key: string]: unknown };
        if (typeof value.id !== "string" || typeof value.line !== "string") return undefined;
        if (value.op === "settled") return value as Record;
        if (value.op === "wrote" && typeof value.writer === "string" && typeof value.stack === "string") {
            return value as Record;
        }
    } catch {
        // Not a record.
    }
    return undefined;
}
