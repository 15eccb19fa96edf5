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
import {
    type FileRead,
    type HostsFileAccess,
    type HostsFileLocation,
    journalKey,
    located,
    locationKey,
} from "./hostsFileAccess";

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
    /** A batch takes or holds the lock: its edits (or a recovery) may change the cached document and the file. */
    locked: boolean;
    /** The document as last read or written, valid while the file's signature is unchanged. */
    cache: Loaded | undefined;
    /** The file as read ahead of the batch's lock (`HostsFileAccess.readAhead`), until the batch loads it. */
    ahead?: Promise<FileRead | undefined>;
    swept: boolean;
}

/** A document and the signature of the file it was read from or written to. */
interface Loaded {
    readonly doc: HostsDocument;
    readonly signature: string;
    /** Whether the signature vouches for the bytes: while the file keeps it, it holds the document's bytes. */
    readonly settled: boolean;
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
    async read<T>(file: HostsFileLocation, view: (doc: HostsDocument) => T): Promise<T> {
        // The file still holds the settled bytes of the cached document: this read is a batch of its own,
        // answered now rather than a turn later (a refresh's reads arrive one by one).
        const current = await this.currentCache(this.queueOf(file)).catch(() => undefined);
        if (current) return view(current.doc);
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

    /**
     * The cached document, when no batch holds the lock and the file has kept its settled signature: it
     * holds the very bytes read, so no in-place write has touched it since (its sidecar need not be
     * sought). Edits queued but not begun come after this read.
     */
    private async currentCache(queue: FileQueue): Promise<Loaded | undefined> {
        const idle = () => !queue.locked && queue.cache?.settled === true;
        if (!idle()) return undefined;
        // By the path as given: a symlink turned to another file gives that file's signature.
        const signature = await this.signature(queue, queue.file);
        return idle() && queue.cache?.signature === signature ? queue.cache : undefined;
    }

    /**
     * The queue of a location, keyed synchronously by the absolute path (and machine), so operations
     * issued in one turn share a batch; the real path (symlinks followed) is resolved by the batch itself.
     */
    private queueOf(location: HostsFileLocation): FileQueue {
        const { file, access } = located(location);
        const key = locationKey(location);
        let queue = this.queues.get(key);
        if (!queue) {
            queue = { file, access, pending: [], draining: false, locked: false, cache: undefined, swept: false };
            this.queues.set(key, queue);
        }
        return queue;
    }

    private enqueue<T>(location: HostsFileLocation, kind: Pending["kind"], run: EditThenAnswer<T>): Promise<T> {
        const queue = this.queueOf(location);
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
        queue.locked = true;
        try {
            const lock = await this.lock(queue, real);
            try {
                answer = await this.applyEdits(real, queue, reads, edits, lock);
            } finally {
                await lock.release().catch(() => undefined);
            }
        } finally {
            queue.ahead = undefined;
            queue.locked = false;
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
            await explained(queue.access, real, "write", () => queue.access.sweep(real));
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
    private async recoverAndLoad(real: string, queue: FileQueue): Promise<Loaded> {
        if (await explained(queue.access, real, "write", () => queue.access.recover(real))) {
            queue.cache = undefined;
            queue.ahead = undefined;
        }
        return await this.load(real, queue);
    }

    private get newFileEnding(): "\n" | "\r\n" {
        return this.options.newFileEnding ?? "\n";
    }

    private lock(queue: FileQueue, real: string): Promise<HeldLock> {
        return explained(queue.access, real, "lock", () => queue.access.lock(real, this.options.lock));
    }

    private mayNeedRecovery(queue: FileQueue, real: string): Promise<boolean> {
        return explained(queue.access, real, "read", () => queue.access.mayNeedRecovery(real));
    }

    private signature(queue: FileQueue, real: string): Promise<string> {
        return explained(queue.access, real, "read", () => queue.access.signature(real));
    }

    private async load(real: string, queue: FileQueue): Promise<Loaded> {
        const { access } = queue;
        const signature = await this.signature(queue, real);
        if (queue.cache && queue.cache.signature === signature) return queue.cache;
        const ahead = await queue.ahead;
        queue.ahead = undefined;
        if (signature === "") {
            queue.cache = { doc: HostsDocument.parse(new Uint8Array(), this.newFileEnding), signature, settled: true };
            return queue.cache;
        }
        const read =
            ahead?.signature === signature ? ahead : await explained(access, real, "read", () => access.read(real));
        const doc = parseDocument(access, real, read.bytes, this.newFileEnding);
        queue.cache = { doc, signature: read.signature, settled: read.settled ?? false };
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
            // Not settled: another write within the file time's tick could keep the signature.
            queue.cache = { doc: next, signature: outcome.signature, settled: false };
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

/** Runs one step of I/O on the file; its failure is explained as a failure to `operation` it (hostsFileError). */
async function explained<T>(
    access: HostsFileAccess,
    real: string,
    operation: HostsFileOperation,
    step: () => Promise<T>,
): Promise<T> {
    try {
        return await step();
    } catch (error) {
        throw hostsFileError(access, real, operation, error);
    }
}

/** Parses the file's bytes; a file we cannot rewrite without damage is refused as a read failure. */
function parseDocument(access: HostsFileAccess, real: string, bytes: Buffer, ending: "\n" | "\r\n"): HostsDocument {
    try {
        return HostsDocument.parse(bytes, ending);
    } catch (error) {
        throw hostsFileError(access, real, "read", error);
    }
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

/**
 * Whether a failed write's content was in the file for a moment before it was undone: the `shown` of the
 * FileChangedError that `write` wrapped in its HostsFileError.
 */
function wasShown(error: unknown): boolean {
    const cause = error instanceof Error ? error.cause : undefined;
    return cause instanceof FileChangedError && cause.shown;
}
