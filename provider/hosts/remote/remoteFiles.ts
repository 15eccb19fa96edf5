// The hosts files of another machine, over SFTP: what the store needs (hostsFileAccess.ts), with the
// guarantees of the local layer. A write goes to a temporary file beside the target, is flushed
// (fsync@openssh.com), given the target's mode and owner, and renamed over it (posix-rename@openssh.com)
// only after the file is checked to hold, byte for byte, what the edits were computed from and the lock
// to still be ours. Where the rename is refused (a bind-mounted file), the file is written in place,
// journaled in the same sidecar the local layer writes and recovers. Non-regular files are refused
// before they are opened (an SFTP open of a FIFO would hang the server), and a dangling symlink is
// followed to its target, as locally.

import { createHash, randomBytes } from "node:crypto";
import { posix } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Stats } from "ssh2";
import {
    type BeforeChange,
    REWRITE_SETTLED_MS,
    REWRITE_WAIT_MS,
    type WriteGuards,
    type WriteOutcome,
} from "../../shared/files/atomicWrite";
import { type FileContent, joinContent } from "../../shared/files/descriptors";
import { codeOf } from "../../shared/files/errno";
import { FileChangedError } from "../../shared/files/fileChangedError";
import type { HeldLock, LockOptions } from "../../shared/files/fileLock";
import { sidecarPathFor } from "../../shared/files/inPlaceSidecar";
import { finishedContent, parseSidecar, sidecarBytes } from "../../shared/files/sidecarRecord";
import type { HostsFileAccess } from "../io/hostsFileAccess";
import { acquireRemoteLock } from "./remoteLock";
import type { Sftp } from "./sftp";

const TEMPORARY = /^\..+\.[0-9a-f]{16}\.pulumi-lifecycle\.remote\.tmp$/;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const MAX_LINK_HOPS = 40;

/** The files of one machine, through the SFTP session `files()` answers (opened on first use). */
export class RemoteFiles implements HostsFileAccess {
    /**
     * @param machine `user@host:port`
     * @param session tells this login's session apart from another's on the same machine (a digest)
     * @param files the machine's SFTP session, (re)connected on demand
     * @param sleep how it waits for a rewrite by another tool to land (see putBackWhatWasWrittenInto)
     */
    constructor(
        readonly machine: string,
        private readonly session: string,
        private readonly files: () => Promise<Sftp>,
        private readonly sleep: (ms: number) => Promise<void> = (ms) => delay(ms),
    ) {}

    /** Operations through one session share batches; another login to the same machine queues apart. */
    keyOf(file: string): string {
        return `ssh://${this.machine}${posix.resolve("/", file)}#${this.session}`;
    }

    describe(real: string): string {
        return `${this.machine}:${real}`;
    }

    async realPath(file: string): Promise<string> {
        const sftp = await this.files();
        let path = posix.resolve("/", file);
        for (let hops = 0; ; hops++) {
            try {
                return await sftp.realpath(path);
            } catch (error) {
                if (codeOf(error) !== "ENOENT") throw error;
            }
            // A dangling symlink: its target is the file (created by the first write), not the link.
            const info = await sftp.lstat(path).catch(() => undefined);
            if (info === undefined || !info.isSymbolicLink() || hops >= MAX_LINK_HOPS) break;
            path = posix.resolve(posix.dirname(path), await sftp.readlink(path));
        }
        const directory = await sftp.realpath(posix.dirname(path)).catch(() => posix.dirname(path));
        return posix.join(directory, posix.basename(path));
    }

    /** "" when the file does not exist; otherwise unique, so a batch always reads: SFTP's times are whole seconds, too coarse to trust a cache. */
    async signature(real: string): Promise<string> {
        const info = await (await this.files()).statIfAny(real);
        return info === undefined ? "" : `stat:${randomBytes(8).toString("hex")}`;
    }

    async read(real: string): Promise<{ bytes: Buffer; signature: string }> {
        const sftp = await this.files();
        regularOrThrow(real, await sftp.stat(real));
        const bytes = await sftp.readAll(real);
        return { bytes, signature: digestOf(bytes) };
    }

    async lock(real: string, options: LockOptions): Promise<HeldLock> {
        return acquireRemoteLock(this.files, real, this.describe(real), options);
    }

    async write(
        real: string,
        content: FileContent,
        guards: WriteGuards,
        beforeChange: BeforeChange,
    ): Promise<WriteOutcome> {
        // Before anything is sent: this write does not overlap the caller's work with its own round trips.
        beforeChange();
        const data = joinContent(content);
        const sftp = await this.files();
        const existing = await sftp.statIfAny(real);
        if (existing) regularOrThrow(real, existing);
        // As locally: an empty file may be a tool's rewrite between its truncation and its write.
        if (existing?.size === 0) return this.writeInPlace(sftp, real, data, guards);
        const temporary = this.temporaryFor(real);
        const mode = existing ? existing.mode & 0o7777 : 0o644;
        let written = false;
        try {
            const handle = await sftp.open(temporary, "wx", mode);
            try {
                await sftp.writeAt(temporary, handle, data, 0);
                await sftp.fsetstat(temporary, handle, { mode });
                if (existing) await keepOwner(sftp, temporary, handle, existing);
                await sftp.fsync(temporary, handle);
            } finally {
                await sftp.close(temporary, handle);
            }
            written = true;
        } catch (error) {
            await this.removeQuietly(temporary);
            // A directory we may not write, or an owner we may not give: in place, as locally.
            if (existing && isPermission(error)) return this.writeInPlace(sftp, real, data, guards);
            throw error;
        }
        // The file about to be replaced, held open: a writer that ignores locks and opened it before our
        // rename writes into it even after, and that write would vanish with it.
        const replaced =
            existing && guards.unchangedSince !== undefined
                ? await sftp.open(real, "r").catch(() => undefined)
                : undefined;
        try {
            await this.checkUnchanged(sftp, real, guards);
            await guards.beforeCommit?.();
            try {
                await sftp.rename(temporary, real);
            } catch (error) {
                // EBUSY/EXDEV of a bind-mounted file reach us only as a generic failure: the file is as it was.
                if (!existing || !written) throw error;
                await sftp.removeQuietly(temporary);
                return this.writeInPlace(sftp, real, data, guards);
            }
            if (replaced !== undefined && existing) {
                await this.putBackWhatWasWrittenInto(sftp, replaced, real, existing, guards.unchangedSince as string);
            }
        } catch (error) {
            await this.removeQuietly(temporary);
            throw error;
        } finally {
            if (replaced !== undefined) await sftp.close(real, replaced).catch(() => undefined);
        }
        return { method: "rename", signature: digestOf(Buffer.from(data)) };
    }

    async mayNeedRecovery(real: string): Promise<boolean> {
        return (await (await this.files()).statIfAny(sidecarPathFor(real))) !== undefined;
    }

    async recover(real: string): Promise<boolean> {
        const sftp = await this.files();
        const sidecar = sidecarPathFor(real);
        const bytes = await sftp.readAll(sidecar).catch((error: unknown) => {
            if (codeOf(error) === "ENOENT") return undefined;
            throw error;
        });
        if (bytes === undefined) return false;
        const record = parseSidecar(bytes);
        const info = await sftp.statIfAny(real);
        if (record && info && (info.mode & S_IFMT) === S_IFREG) {
            const finished = finishedContent(await sftp.readAll(real), "", record);
            if (finished) await overwrite(sftp, real, finished);
        }
        await sftp.unlink(sidecar);
        return true;
    }

    async sweep(real: string): Promise<void> {
        // Under the lock: every writer writes its temporary files only while holding it, so any left are a
        // dead (or dispossessed) writer's.
        const sftp = await this.files();
        const directory = posix.dirname(real);
        const prefix = `.${posix.basename(real)}.`;
        const names = await sftp.readdir(directory).catch(() => [] as string[]);
        for (const name of names) {
            if (name.startsWith(prefix) && TEMPORARY.test(name)) await sftp.removeQuietly(posix.join(directory, name));
        }
    }

    /**
     * After our rename: if the file we replaced (open as `replaced`, read as `readAs`) was written meanwhile
     * by a writer that ignores locks, that write went into a file no longer there. Its content is put back
     * in place, and FileChangedError makes the store redo its edits on it: their write is not lost to ours.
     */
    private async putBackWhatWasWrittenInto(
        sftp: Sftp,
        replaced: Buffer,
        real: string,
        existing: Stats,
        readAs: string,
    ): Promise<void> {
        let theirs = await sftp.readThrough(real, replaced);
        if (digestOf(theirs) === readAs) return;
        // Let a write still going into it finish: read until two reads agree (a few times at most).
        for (let read = 0; read < 5; read++) {
            const again = await sftp.readThrough(real, replaced);
            if (again.equals(theirs)) break;
            theirs = again;
        }
        // Shorter than it was read: as locally, a tool's rewrite in place (`cat new > hosts`) whose write may
        // not have landed yet; put back now, it would take only what another tool appended meanwhile.
        if (theirs.length < existing.size) theirs = await this.settled(sftp, real, replaced, theirs);
        // Emptied: a tool's rewrite between its truncation and its write; as locally, ours stays.
        if (theirs.length === 0) return;
        const temporary = this.temporaryFor(real);
        const mode = existing.mode & 0o7777;
        const handle = await sftp.open(temporary, "wx", mode);
        try {
            await sftp.writeAt(temporary, handle, theirs, 0);
            await sftp.fsetstat(temporary, handle, { mode });
            // Their content under our owner is better than lost.
            await keepOwner(sftp, temporary, handle, existing).catch(() => undefined);
            await sftp.fsync(temporary, handle);
        } finally {
            await sftp.close(temporary, handle);
        }
        await sftp.rename(temporary, real);
        throw new FileChangedError(this.describe(real), true);
    }

    /** The content of `replaced` once it stayed unchanged for REWRITE_SETTLED_MS (or REWRITE_WAIT_MS passed), as locally. */
    private async settled(sftp: Sftp, real: string, replaced: Buffer, current: Buffer): Promise<Buffer> {
        let content = current;
        for (let waited = 0, stable = 0; waited < REWRITE_WAIT_MS && stable < REWRITE_SETTLED_MS; waited++) {
            await this.sleep(1);
            const again = await sftp.readThrough(real, replaced);
            stable = again.equals(content) ? stable + 1 : 0;
            content = again;
        }
        return content;
    }

    /** A temporary file beside `real`, named so `sweep` knows it. */
    private temporaryFor(real: string): string {
        return posix.join(
            posix.dirname(real),
            `.${posix.basename(real)}.${randomBytes(8).toString("hex")}.pulumi-lifecycle.remote.tmp`,
        );
    }

    /** Removes a file through the live session (reconnecting when this one dropped): a failed write leaves nothing. */
    private async removeQuietly(path: string): Promise<void> {
        await this.files()
            .then((sftp) => sftp.removeQuietly(path))
            .catch(() => undefined);
    }

    /** Throws FileChangedError unless the file still holds the bytes the edits were computed from. */
    private async checkUnchanged(sftp: Sftp, real: string, guards: WriteGuards): Promise<void> {
        if (guards.unchangedSince === undefined) return;
        const info = await sftp.statIfAny(real);
        const now = info === undefined ? "" : digestOf(await sftp.readAll(real));
        if (now !== guards.unchangedSince) throw new FileChangedError(this.describe(real));
    }

    /**
     * Writes over the file itself, journaled: the sidecar (old and new content) is on disk before the
     * file is touched, so a connection dropped mid-write is finished or undone by the next writer.
     */
    private async writeInPlace(sftp: Sftp, real: string, data: Uint8Array, guards: WriteGuards): Promise<WriteOutcome> {
        const previous = await sftp.readAll(real);
        if (guards.unchangedSince !== undefined && digestOf(previous) !== guards.unchangedSince) {
            throw new FileChangedError(this.describe(real));
        }
        await guards.beforeCommit?.();
        const sidecar = sidecarPathFor(real);
        const record = { previous, data: Buffer.from(data), previousSignature: "" };
        if (!(await sftp.createExclusive(sidecar, sidecarBytes(record), 0o600, true))) {
            throw Object.assign(new Error(`${this.describe(sidecar)} exists: another in-place write is under way`), {
                code: "EBUSY",
            });
        }
        // Journaled: a writer that ignores locks may have written since our check; then the file is theirs.
        if (!(await sftp.readAll(real)).equals(previous)) {
            await sftp.unlink(sidecar);
            throw new FileChangedError(this.describe(real));
        }
        await overwrite(sftp, real, record.data);
        await sftp.unlink(sidecar);
        return { method: "in-place", signature: digestOf(record.data) };
    }
}

/** Writes `data` over the file from its start, cuts it to length, flushes. */
async function overwrite(sftp: Sftp, real: string, data: Buffer): Promise<void> {
    const handle = await sftp.open(real, "r+");
    try {
        await sftp.writeAt(real, handle, data, 0);
        await sftp.fsetstat(real, handle, { size: data.length });
        await sftp.fsync(real, handle);
    } finally {
        await sftp.close(real, handle);
    }
}

async function keepOwner(sftp: Sftp, path: string, handle: Buffer, existing: Stats): Promise<void> {
    try {
        await sftp.fsetstat(path, handle, { uid: existing.uid, gid: existing.gid });
    } catch (error) {
        // The new file would have another owner than the old: not a replacement we may make.
        throw Object.assign(new Error(`cannot give ${path} the owner ${existing.uid}:${existing.gid}`), {
            code: "EPERM",
            cause: error,
        });
    }
}

function regularOrThrow(path: string, info: Stats): void {
    const type = info.mode & S_IFMT;
    if (type === S_IFREG) return;
    const kind =
        type === S_IFDIR
            ? "a directory"
            : info.isFIFO()
              ? "a FIFO"
              : info.isSocket()
                ? "a socket"
                : "a device or special file";
    throw Object.assign(new Error(`${path} is ${kind}`), { code: type === S_IFDIR ? "EISDIR" : "ENOTREG", kind });
}

function isPermission(error: unknown): boolean {
    const code = codeOf(error);
    return code === "EACCES" || code === "EPERM";
}

function digestOf(bytes: Buffer): string {
    return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}
