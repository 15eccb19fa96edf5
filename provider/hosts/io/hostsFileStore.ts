// All hosts-file I/O goes through here.
//
// Operations on one file are queued; those that arrive together (the engine runs up to 16 at once in one
// provider process) form a batch that takes the cross-process lock once, reads and parses the file once,
// applies every edit in memory, and writes once, atomically. Reads in a batch see the file as it was
// before the batch's edits. A failing edit affects only its own caller; a failing write fails every edit
// of the batch and leaves the file as it was.

import { resolve } from "node:path";
import { LockTimeoutError } from "../../shared/errors/lockTimeoutError";
import type { WriteMethod } from "../../shared/files/atomicWrite";
import { contentLength, joinContent } from "../../shared/files/descriptors";
import { codeOf } from "../../shared/files/errno";
import { FileChangedError } from "../../shared/files/fileChangedError";
import type { HeldLock, LockOptions } from "../../shared/files/fileLock";
import { HostsFileError, type HostsFileOperation } from "../errors/hostsFileError";
import { SshConnectionError } from "../errors/sshConnectionError";
import { SshHostKeyError } from "../errors/sshHostKeyError";
import { HostsDocument } from "../logic/hostsDocument";
import {
    answerAll,
    applyToDocument,
    computeAhead,
    type EditThenAnswer,
    FIRST_ATTEMPT,
    type Pending,
    settle,
} from "./batchOperations";
import { type HostsFileAccess, localFiles } from "./hostsFileAccess";

/** A hosts file and the machine it is on; a bare path is a file of this machine. */
export type HostsFileLocation = string | { readonly file: string; readonly access: HostsFileAccess };

/** Reported after each write: the benchmark and `PULUMI_LIFECYCLE_TRACE` count these. */
export interface WriteEvent {
    readonly file: string;
    /** How many queued edits this one write carried. */
    readonly edits: number;
    readonly bytes: number;
    readonly method: WriteMethod;
}

/** What must be on disk before a write carries a batch's edits (the create journal), and be dropped when it fails. */
export interface WriteJournal {
    /**
     * Makes durable what the batch's edits staged for `file` (a real path); called under the lock, before
     * the write changes the file.
     */
    flush(file: string): void;
    /** Drops what the batch's edits staged for `file`: the write failed. */
    discard(file: string): void;
}

/** Settings of a store. */
export interface HostsFileStoreOptions {
    readonly lock: LockOptions;
    readonly journal?: WriteJournal;
    /** Line ending for a file that does not exist yet or has no line to copy one from. */
    readonly newFileEnding?: "\n" | "\r\n";
    readonly onWrite?: (event: WriteEvent) => void;
}

interface FileQueue {
    readonly file: string;
    readonly access: HostsFileAccess;
    pending: Pending[];
    draining: boolean;
    /** The document as last read or written, valid while the file's signature is unchanged. */
    cache: { doc: HostsDocument; signature: string } | undefined;
    /** The file as read ahead of the batch's lock (`HostsFileAccess.readAhead`), until the batch loads it. */
    ahead?: Promise<{ bytes: Buffer; signature: string } | undefined>;
    swept: boolean;
}

/**
 * How often a batch is computed and written before giving up when a writer that ignores our lock keeps
 * changing the file between our read and our rename (each attempt is one read, one parse and one write).
 */
const MAX_ATTEMPTS = 10;

/** Edited lines a cached document may carry before the next batch parses the written bytes instead. */
const REBASE_AFTER_EDITED_LINES = 256;

/** Serializes, coalesces and persists the operations on hosts files of one process. */
export class HostsFileStore {
    private readonly queues = new Map<string, FileQueue>();

    constructor(private readonly options: HostsFileStoreOptions) {}

    /** Reads the current document of `file` (relative paths resolve against the working directory). */
    read<T>(file: HostsFileLocation, view: (doc: HostsDocument) => T): Promise<T> {
        return this.enqueue(file, "read", (doc) => {
            const value = view(doc);
            return () => value;
        });
    }

    /** Applies `edit` to the document of `file` and persists it together with the edits queued beside it. */
    edit<T>(file: HostsFileLocation, edit: EditThenAnswer<T>): Promise<T> {
        return this.enqueue(file, "edit", edit);
    }

    /** The real path behind `file`: symlinks followed, so the target is written and the link kept. */
    async realPath(location: HostsFileLocation): Promise<string> {
        const { file, access } = located(location);
        try {
            return await access.realPath(file);
        } catch (error) {
            throw hostsFileError(access, access.machine === undefined ? resolve(file) : file, "read", error);
        }
    }

    private enqueue<T>(location: HostsFileLocation, kind: Pending["kind"], run: EditThenAnswer<T>): Promise<T> {
        // Keyed synchronously by the absolute path (and machine), so operations issued in one turn share a
        // batch; the real path (symlinks followed) is resolved by the batch itself.
        const { file, access } = located(location);
        const key = locationKey(location);
        let queue = this.queues.get(key);
        if (!queue) {
            queue = { file, access, pending: [], draining: false, cache: undefined, swept: false };
            this.queues.set(key, queue);
        }
        const result = new Promise<T>((resolve, reject) => {
            queue.pending.push({ kind, run, resolve: resolve as (value: unknown) => void, reject });
        });
        if (!queue.draining) void this.drain(queue);
        return result;
    }

    private async drain(queue: FileQueue): Promise<void> {
        queue.draining = true;
        // Let operations that arrived in the same turn of the event loop join this batch.
        await new Promise((resolve) => setImmediate(resolve));
        while (queue.pending.length > 0) {
            const batch = queue.pending.splice(0);
            await this.runBatch(queue, batch).catch((error) => {
                queue.cache = undefined;
                for (const op of batch) op.reject(error);
            });
        }
        queue.draining = false;
    }

    private async runBatch(queue: FileQueue, batch: Pending[]): Promise<void> {
        const real = await this.realPath(queue);
        const reads = batch.filter((op) => op.kind === "read");
        const edits = batch.filter((op) => op.kind === "edit");
        // An in-place write under way, or one a crash cut short, leaves a sidecar: then reads wait for the
        // lock and the recovery under it, like a batch of edits.
        if (edits.length === 0 && !(await this.mayNeedRecovery(queue, real))) {
            const { doc } = await this.load(real, queue);
            for (const op of reads) settle(op, () => op.run(doc, FIRST_ATTEMPT)());
            return;
        }
        // Read while the lock is taken: the bytes serve if the file under the lock still has their signature.
        if (!queue.cache && queue.access.readAhead) {
            queue.ahead = queue.access.readAhead(real).catch(() => undefined);
        }
        let answer: () => void;
        try {
            const lock = await this.lock(queue, real);
            try {
                answer = await this.applyEdits(real, queue, reads, edits, lock);
            } finally {
                await lock.release().catch(() => undefined);
            }
        } finally {
            queue.ahead = undefined;
        }
        // Answer only once the lock is gone: a provider stopped right after its last answer leaves none behind.
        answer();
    }

    /** Applies a batch under the lock; returns how to answer its operations. */
    private async applyEdits(
        real: string,
        queue: FileQueue,
        reads: Pending[],
        edits: Pending[],
        lock: HeldLock,
    ): Promise<() => void> {
        if (!queue.swept) {
            await queue.access.sweep(real).catch((error: unknown) => {
                throw hostsFileError(queue.access, real, "write", error);
            });
            queue.swept = true;
        }
        // An in-place write that a crash cut short left its journal in the file: finish or undo it before
        // anything reads the file. (Under the lock, so a live writer's write is never taken for a crash.)
        let loaded = await this.recoverAndLoad(real, queue);
        const readOutcomes = reads.map((op) => applyToDocument(op, loaded.doc, FIRST_ATTEMPT));
        let shown: { followsShownAttempt: boolean; shownLines: Set<string> } | undefined;
        for (let attempt = 1; ; attempt++) {
            const revision = loaded.doc.revision;
            const appendedBefore = loaded.doc.appendedCount;
            const outcomes = edits.map((op) => applyToDocument(op, loaded.doc, shown ?? FIRST_ATTEMPT));
            if (loaded.doc.revision === revision) return () => answerAll([...readOutcomes, ...outcomes]);
            const applied = outcomes.filter((outcome) => outcome.finish !== undefined).length;
            // The answers are computed while the write flushes the new content (they are the document's,
            // already edited), and given once the write has landed and the lock is released.
            const failure = await this.write(real, queue, loaded.doc, applied, loaded.signature, lock, () =>
                computeAhead(outcomes),
            ).then(
                () => undefined,
                (error: unknown) => ({ error }),
            );
            if (failure && codeOf(failure.error) === "ECHANGED" && attempt < MAX_ATTEMPTS) {
                // A writer that ignores our lock changed the file between our read and our rename: nothing
                // of ours is left; redo the edits on its version.
                if (wasShown(failure.error)) {
                    shown ??= { followsShownAttempt: true, shownLines: new Set() };
                    for (const text of loaded.doc.appendedSince(appendedBefore)) shown.shownLines.add(text);
                }
                loaded = await this.recoverAndLoad(real, queue);
                continue;
            }
            if (failure) {
                return () => {
                    answerAll(readOutcomes);
                    for (const { op, finish, error } of outcomes) op.reject(finish ? failure.error : error);
                };
            }
            return () => answerAll([...readOutcomes, ...outcomes]);
        }
    }

    /** Finishes an in-place write a crash cut short, then reads the file; under the lock. */
    private async recoverAndLoad(real: string, queue: FileQueue): Promise<{ doc: HostsDocument; signature: string }> {
        let recovered: boolean;
        try {
            recovered = await queue.access.recover(real);
        } catch (error) {
            throw hostsFileError(queue.access, real, "write", error);
        }
        if (recovered) {
            queue.cache = undefined;
            queue.ahead = undefined;
        }
        return await this.load(real, queue);
    }

    private get newFileEnding(): "\n" | "\r\n" {
        return this.options.newFileEnding ?? "\n";
    }

    private async lock(queue: FileQueue, real: string): Promise<HeldLock> {
        try {
            return await queue.access.lock(real, this.options.lock);
        } catch (error) {
            throw hostsFileError(queue.access, real, "lock", error);
        }
    }

    private async mayNeedRecovery(queue: FileQueue, real: string): Promise<boolean> {
        try {
            return await queue.access.mayNeedRecovery(real);
        } catch (error) {
            throw hostsFileError(queue.access, real, "read", error);
        }
    }

    private async load(real: string, queue: FileQueue): Promise<{ doc: HostsDocument; signature: string }> {
        const { access } = queue;
        let signature: string;
        try {
            signature = await access.signature(real);
        } catch (error) {
            throw hostsFileError(access, real, "read", error);
        }
        if (queue.cache && queue.cache.signature === signature) return queue.cache;
        const ahead = await queue.ahead;
        queue.ahead = undefined;
        queue.cache =
            signature === ""
                ? { doc: HostsDocument.parse(new Uint8Array(), this.newFileEnding), signature }
                : ahead?.signature === signature
                  ? { doc: parseDocument(access, real, ahead.bytes, this.newFileEnding), signature }
                  : await readDocument(access, real, this.newFileEnding);
        return queue.cache;
    }

    /** Writes `doc`, unless the file is no longer the one whose `signature` it was read with. */
    private async write(
        real: string,
        queue: FileQueue,
        doc: HostsDocument,
        edits: number,
        signature: string,
        lock: HeldLock,
        meanwhile: () => void,
    ): Promise<void> {
        const content = doc.content();
        try {
            const guards = { unchangedSince: signature, beforeCommit: lock.verify };
            const outcome = await queue.access.write(real, content, guards, () => {
                meanwhile();
                // Durable before the file holds the lines it records. Last: its own flush waits for the
                // write's (a file system commits them in order), so work before it is what overlaps.
                this.options.journal?.flush(journalKey(queue, real));
            });
            // The document now says what the file says; later batches edit it further. Once its edited
            // lines (which searches and serializing visit one by one) are many, the next batch starts from
            // the bytes written instead, so a batch never costs more than what it touches plus one pass.
            const next =
                doc.editedLines > REBASE_AFTER_EDITED_LINES
                    ? HostsDocument.parse(joinContent(content), this.newFileEnding, doc.lineCount)
                    : doc;
            queue.cache = { doc: next, signature: outcome.signature };
            this.options.onWrite?.({
                file: queue.access.describe(real),
                edits,
                bytes: contentLength(content),
                method: outcome.method,
            });
        } catch (error) {
            queue.cache = undefined;
            this.options.journal?.discard(journalKey(queue, real));
            throw hostsFileError(queue.access, real, "write", error);
        }
    }
}

/** Reads and parses the file; the signature belongs to the bytes read. */
async function readDocument(
    access: HostsFileAccess,
    real: string,
    ending: "\n" | "\r\n",
): Promise<{ doc: HostsDocument; signature: string }> {
    let read: { bytes: Buffer; signature: string };
    try {
        read = await access.read(real);
    } catch (error) {
        throw hostsFileError(access, real, "read", error);
    }
    return { doc: parseDocument(access, real, read.bytes, ending), signature: read.signature };
}

/** Parses the file's bytes; a file we cannot rewrite without damage is refused as a read failure. */
function parseDocument(access: HostsFileAccess, real: string, bytes: Buffer, ending: "\n" | "\r\n"): HostsDocument {
    try {
        return HostsDocument.parse(bytes, ending);
    } catch (error) {
        throw hostsFileError(access, real, "read", error);
    }
}

/** The file as its queue and the create journal know it: the real path, or the machine and the path. */
export function journalKey(queue: { readonly access: HostsFileAccess }, real: string): string {
    return queue.access.machine === undefined ? real : `ssh://${queue.access.machine}${real}`;
}

/**
 * An I/O failure as a HostsFileError naming the file; failures that are not the file's (a lock held too
 * long, a machine that cannot be reached) pass unchanged, already explained.
 */
function hostsFileError(access: HostsFileAccess, real: string, operation: HostsFileOperation, error: unknown): Error {
    if (error instanceof LockTimeoutError || error instanceof SshConnectionError || error instanceof SshHostKeyError) {
        return error;
    }
    return new HostsFileError(access.describe(real), operation, error, access.machine);
}

/** The name a location's operations are queued under: those on one file of one machine share it. */
export function locationKey(location: HostsFileLocation): string {
    const { file, access } = located(location);
    return access.keyOf(file);
}

function located(location: HostsFileLocation): { file: string; access: HostsFileAccess } {
    return typeof location === "string" ? { file: location, access: localFiles } : location;
}

/**
 * Whether a failed write's content was in the file for a moment before it was undone: the `shown` of the
 * FileChangedError that `write` wrapped in its HostsFileError.
 */
function wasShown(error: unknown): boolean {
    const cause = error instanceof Error ? error.cause : undefined;
    return cause instanceof FileChangedError && cause.shown;
}
