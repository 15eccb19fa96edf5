// The SFTP operations the remote hosts-file layer uses, as promises, with SFTP's status codes turned into
// the errno codes the rest of the package (and HostsFileError's advice) speaks. OpenSSH's sftp-server
// reports only "no such file", "permission denied" and "failure" (protocol version 3), so where an error
// must be told apart (a name that exists), the caller asks again with a stat.

import type { InputAttributes, SFTPWrapper, Stats } from "ssh2";
import { codeOf } from "../../shared/files/errno";
import { messageOf } from "../../shared/text";

/** SFTP status codes (draft-ietf-secsh-filexfer-02, section 7). */
const NO_SUCH_FILE = 2;
const PERMISSION_DENIED = 3;
const OP_UNSUPPORTED = 8;
const READ_CHUNK = 64 * 1024;

/** An SFTP session's file operations, promised. */
export class Sftp {
    private live = true;

    constructor(
        private readonly sftp: SFTPWrapper,
        /** How messages name the machine. */
        private readonly machine: string,
    ) {
        // ssh2 fails the requests under way when the channel goes, but buffers later ones forever: after
        // that, every operation must fail at once instead of hanging.
        sftp.once("end", () => this.markClosed());
        sftp.once("close", () => this.markClosed());
    }

    /** Whether the session can still carry operations. */
    get connected(): boolean {
        return this.live;
    }

    /** The connection is gone: later operations fail with ECONNRESET. */
    markClosed(): void {
        this.live = false;
    }

    stat(path: string): Promise<Stats> {
        return this.call(path, (done) => this.sftp.stat(path, done));
    }

    lstat(path: string): Promise<Stats> {
        return this.call(path, (done) => this.sftp.lstat(path, done));
    }

    /** stat, or undefined when nothing is at `path`. */
    async statIfAny(path: string): Promise<Stats | undefined> {
        try {
            return await this.stat(path);
        } catch (error) {
            if (codeOf(error) === "ENOENT") return undefined;
            throw error;
        }
    }

    realpath(path: string): Promise<string> {
        return this.call(path, (done) => this.sftp.realpath(path, done));
    }

    readlink(path: string): Promise<string> {
        return this.call(path, (done) => this.sftp.readlink(path, done));
    }

    /** Reads a whole regular file through one handle. */
    async readAll(path: string): Promise<Buffer> {
        const handle = await this.open(path, "r");
        try {
            return await this.readThrough(path, handle);
        } finally {
            await this.close(path, handle);
        }
    }

    /** Reads the whole file an open handle is on, from its start (the file it was opened on, even once replaced). */
    async readThrough(path: string, handle: Buffer): Promise<Buffer> {
        const chunks: Buffer[] = [];
        let position = 0;
        for (;;) {
            const chunk = Buffer.alloc(READ_CHUNK);
            const read = await this.call<number>(path, (done) =>
                this.sftp.read(handle, chunk, 0, READ_CHUNK, position, (error, bytesRead) => done(error, bytesRead)),
            ).catch((error: unknown) => {
                // The end of the file is an EOF status (SFTP status 1), which ssh2 reports as an error.
                if (/EOF|end of file/i.test(messageOf(error)) || codeOf(error) === "1") return 0;
                throw error;
            });
            if (read === 0) break;
            chunks.push(chunk.subarray(0, read));
            position += read;
            // A regular file reads whole up to its end (SFTP draft 02, 6.4), and ssh2 splits what exceeds the
            // server's limit itself: a short read is the end, and asking again would only cost a round trip.
            if (read < READ_CHUNK) break;
        }
        return Buffer.concat(chunks);
    }

    /** Writes `data` to a file that must not exist yet (O_EXCL), with `mode`; answers false when it exists. */
    async createExclusive(path: string, data: Uint8Array, mode: number, sync: boolean): Promise<boolean> {
        let handle: Buffer;
        try {
            handle = await this.open(path, "wx", mode);
        } catch (error) {
            if ((await this.statIfAny(path).catch(() => undefined)) !== undefined) return false;
            throw error;
        }
        try {
            await this.writeAt(path, handle, data, 0);
            if (sync) await this.fsync(path, handle);
        } finally {
            await this.close(path, handle);
        }
        return true;
    }

    open(path: string, flags: "r" | "r+" | "wx", mode?: number): Promise<Buffer> {
        const attributes: InputAttributes = mode === undefined ? {} : { mode };
        return this.call(path, (done) => this.sftp.open(path, flags, attributes, done));
    }

    close(path: string, handle: Buffer): Promise<void> {
        return this.call(path, (done) => this.sftp.close(handle, done));
    }

    async writeAt(path: string, handle: Buffer, data: Uint8Array, position: number): Promise<void> {
        const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
        for (let offset = 0; offset < buffer.length; offset += READ_CHUNK) {
            const length = Math.min(READ_CHUNK, buffer.length - offset);
            await this.call(path, (done) => this.sftp.write(handle, buffer, offset, length, position + offset, done));
        }
    }

    /** Flushes a handle to disk (fsync@openssh.com). */
    fsync(path: string, handle: Buffer): Promise<void> {
        return this.call(path, (done) => this.sftp.ext_openssh_fsync(handle, done));
    }

    /** Sets mode, owner or length of an open file. */
    fsetstat(path: string, handle: Buffer, attributes: InputAttributes): Promise<void> {
        return this.call(path, (done) => this.sftp.fsetstat(handle, attributes, done));
    }

    setstat(path: string, attributes: InputAttributes): Promise<void> {
        return this.call(path, (done) => this.sftp.setstat(path, attributes, done));
    }

    /** Replaces `to` by `from` atomically, as rename(2) does (posix-rename@openssh.com). */
    rename(from: string, to: string): Promise<void> {
        return this.call(to, (done) => this.sftp.ext_openssh_rename(from, to, done));
    }

    /** A hard link (hardlink@openssh.com); fails when `to` exists. */
    link(from: string, to: string): Promise<void> {
        return this.call(to, (done) => this.sftp.ext_openssh_hardlink(from, to, done));
    }

    unlink(path: string): Promise<void> {
        return this.call(path, (done) => this.sftp.unlink(path, done));
    }

    /** Removes a file; a missing one or a refusal is not an error here. */
    async removeQuietly(path: string): Promise<boolean> {
        try {
            await this.unlink(path);
            return true;
        } catch {
            return false;
        }
    }

    readdir(path: string): Promise<string[]> {
        return this.call(path, (done) =>
            this.sftp.readdir(path, (error, list) =>
                done(
                    error,
                    list?.map((entry) => entry.filename),
                ),
            ),
        );
    }

    private call<T = void>(
        path: string,
        start: (done: (error: Error | null | undefined, value?: T) => void) => void,
    ): Promise<T> {
        return new Promise<T>((resolve, reject) => {
            if (!this.live) {
                reject(this.translate(new Error("not connected: the SSH connection is closed"), path));
                return;
            }
            try {
                start((error, value) => (error ? reject(this.translate(error, path)) : resolve(value as T)));
            } catch (error) {
                reject(this.translate(error as Error, path));
            }
        });
    }

    private translate(error: Error, path: string): Error {
        const status = (error as { code?: unknown }).code;
        const code =
            status === NO_SUCH_FILE
                ? "ENOENT"
                : status === PERMISSION_DENIED
                  ? "EACCES"
                  : status === OP_UNSUPPORTED
                    ? "ENOTSUP"
                    : /No response from server|not connected|Channel is not open/i.test(error.message)
                      ? "ECONNRESET"
                      : "EREMOTE";
        return Object.assign(new Error(`${this.machine}:${path}: ${error.message}`), { code, cause: error });
    }
}
