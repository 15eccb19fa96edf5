// Where a hosts file lives and the few operations the store needs on it: this machine's file system
// (the default), or another machine's over SSH (hosts/remote/). The store's batching, locking order,
// foreign-change retries and answers are the same for both; only these steps differ.

import { closeSync, constants, fstatSync, openSync, statSync } from "node:fs";
import { resolve } from "node:path";
import {
    type BeforeChange,
    type WriteGuards,
    type WriteOutcome,
    writeFileAtomic,
} from "../../shared/files/atomicWrite";
import type { FileContent } from "../../shared/files/descriptors";
import { codeOf } from "../../shared/files/errno";
import { acquireFileLock, type HeldLock, type LockOptions } from "../../shared/files/fileLock";
import { hasSidecar, recoverWithSidecar } from "../../shared/files/inPlaceSidecar";
import { readWholeAhead, readWholeSync } from "../../shared/files/readWhole";
import { realPathSync } from "../../shared/files/realPath";
import { signatureOf } from "../../shared/files/signature";
import { sweepTemporariesSync } from "../../shared/files/temporaryFiles";

/** A file's bytes, the signature they belong to, and whether that signature vouches for them. */
export interface FileRead {
    readonly bytes: Buffer;
    readonly signature: string;
    /** While the file keeps this signature, it holds these very bytes (this machine's reads can tell). */
    readonly settled?: boolean;
}

/** The operations on the hosts files of one machine. Every path they take is a real path (`realPath`'s answer). */
export interface HostsFileAccess {
    /** The machine, `user@host:port`; undefined for this one. */
    readonly machine: string | undefined;
    /** The key operations on `file` queue under, computed without I/O so one turn's operations share a batch. */
    keyOf(file: string): string;
    /** How messages name a file: its path, prefixed with the machine when remote. */
    describe(real: string): string;
    /** The real path behind `file`: symlinks followed (a dangling one to its target), so the link is kept. */
    realPath(file: string): Promise<string>;
    /** A cheap identity of the file's content ("" when it does not exist); equal means unchanged. */
    signature(real: string): Promise<string>;
    /** The file's bytes and the signature they belong to; refuses anything but a regular file (ENOTREG). */
    read(real: string): Promise<FileRead>;
    /**
     * Starts reading the file before the lock is taken, where that pays (this machine: the thread pool
     * reads while this thread takes the lock). The store uses the bytes only if the file under the lock
     * still has their signature; undefined when they cannot be vouched for. Absent where it does not pay.
     */
    readAhead?(real: string): Promise<FileRead | undefined>;
    /** Takes the cross-process lock every writer of the file respects. */
    lock(real: string, options: LockOptions): Promise<HeldLock>;
    /**
     * Replaces the content atomically where it can, else in place, journaled; checks `guards` last. Runs
     * `beforeChange` once before the file changes (while the new content flushes, where it can): if it
     * throws, nothing is written.
     */
    write(real: string, content: FileContent, guards: WriteGuards, beforeChange: BeforeChange): Promise<WriteOutcome>;
    /** Whether an in-place write may be unfinished (its journal exists): reads then wait for the lock. */
    mayNeedRecovery(real: string): Promise<boolean>;
    /** Finishes or undoes an in-place write a crash cut short; under the lock. Answers whether there was one. */
    recover(real: string): Promise<boolean>;
    /** Removes temporary files killed writers left beside the file; under the lock. */
    sweep(real: string): Promise<void>;
}

/** This machine's hosts files. */
export const localFiles: HostsFileAccess = {
    machine: undefined,
    keyOf: (file) => resolve(file),
    describe: (real) => real,
    realPath: async (file) => realPathSync(file),
    signature: async (real) => {
        try {
            return signatureOf(statSync(real, { bigint: true }));
        } catch (error) {
            if (codeOf(error) === "ENOENT") return "";
            throw error;
        }
    },
    read: async (real) => readWholeSync(real),
    readAhead: (real) => readWholeAhead(real),
    lock: (real, options) => acquireFileLock(real, options),
    write: (real, content, guards, beforeChange) => writeFileAtomic(real, content, guards, beforeChange),
    mayNeedRecovery: async (real) => hasSidecar(real),
    recover: async (real) => recoverInPlace(real),
    sweep: async (real) => {
        sweepTemporariesSync(real);
    },
};

/** A hosts file and the machine it is on; a bare path is a file of this machine. */
export type HostsFileLocation = string | { readonly file: string; readonly access: HostsFileAccess };

/** The file of a location, and the access to its machine. */
export function located(location: HostsFileLocation): { file: string; access: HostsFileAccess } {
    return typeof location === "string" ? { file: location, access: localFiles } : location;
}

/** The name a location's operations are queued under: those on one file of one machine share it. */
export function locationKey(location: HostsFileLocation): string {
    const { file, access } = located(location);
    return access.keyOf(file);
}

/** The file as its queue and the create journal know it: the real path, or the machine and the path. */
export function journalKey(queue: { readonly access: HostsFileAccess }, real: string): string {
    return queue.access.machine === undefined ? real : `ssh://${queue.access.machine}${real}`;
}

function recoverInPlace(real: string): boolean {
    let fd: number;
    try {
        fd = openSync(real, constants.O_RDWR | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0));
    } catch {
        // Missing, or not ours to write: nothing to recover, and the read or write says what is wrong.
        return false;
    }
    try {
        return fstatSync(fd).isFile() && recoverWithSidecar(fd, real);
    } finally {
        closeSync(fd);
    }
}
