// The lock on a hosts file of another machine: the same lock file beside the target that fileLock.ts
// takes locally (`.<name>.pulumi-lifecycle.lock`, JSON naming its holder, refreshed every quarter of
// `staleMs`), taken over SFTP. So a provider on this machine, one on a third machine and a local writer
// on the target all exclude each other. A remote holder cannot be examined (its pid is on another
// machine), so it is broken only once `staleMs` passed without a refresh; its host is written as
// "<hostname> via ssh", which no machine's own hostname equals, so local writers judge it the same way.

import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { posix } from "node:path";
import { LockTimeoutError } from "../../shared/errors/lockTimeoutError";
import { codeOf } from "../../shared/files/errno";
import {
    type HeldLock,
    type LockHolder,
    type LockOptions,
    lockPathFor,
    parseHolder,
} from "../../shared/files/fileLock";
import { LockLostError } from "../../shared/files/lockLostError";
import { systemClock, timerRepeat, timerSleep } from "../../shared/time";
import type { Sftp } from "./sftp";

const FIRST_RETRY_MS = 2;
const LONGEST_RETRY_MS = 100;
/** Links tried while each fails and no lock file is there (see createNamed). */
const LINK_ATTEMPTS = 5;

/**
 * Takes the lock on `target` (a real path on the machine `session` reaches); `label` names it in messages.
 * `session` answers the machine's live session, reconnecting once the connection dropped: so a batch whose
 * connection dropped mid-write still releases its lock, rather than leave it to block the next `up` for
 * `staleMs`.
 */
export async function acquireRemoteLock(
    session: () => Promise<Sftp>,
    target: string,
    label: string,
    options: LockOptions,
): Promise<HeldLock> {
    const clock = options.clock ?? systemClock;
    const sleep = options.sleep ?? timerSleep;
    const started = clock();
    const path = posix.join(posix.dirname(target), posix.basename(lockPathFor(target)));
    let retryMs = FIRST_RETRY_MS;
    for (;;) {
        const files = await session();
        const holder: LockHolder = {
            pid: process.pid,
            host: `${hostname()} via ssh`,
            token: randomBytes(8).toString("hex"),
            since: clock(),
        };
        if (await createNamed(files, path, holder)) return hold(session, path, holder.token, options);
        const current = await readHolder(files, path);
        if (current === "gone") continue;
        const info = await files.statIfAny(path);
        if (info === undefined) continue;
        const unrefreshedFor = clock() - info.mtime * 1000;
        if (unrefreshedFor > options.staleMs) {
            // Abandoned: broken unless it changed hands since it was read.
            const again = await readHolder(files, path);
            if (again === "gone" || again?.token === (current === undefined ? undefined : current.token)) {
                await files.removeQuietly(path);
            }
            continue;
        }
        const remaining = started + options.timeoutMs - clock();
        if (remaining <= 0) {
            const who =
                current === undefined
                    ? undefined
                    : `pid ${current.pid} on host ${JSON.stringify(current.host)} since ${new Date(current.since).toISOString()}`;
            throw new LockTimeoutError(
                label,
                `${label.slice(0, label.lastIndexOf(":") + 1)}${path}`,
                who,
                clock() - started,
            );
        }
        await sleep(Math.min(retryMs, remaining));
        retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
    }
}

/** Keeps the lock refreshed until released. */
function hold(session: () => Promise<Sftp>, path: string, token: string, options: LockOptions): HeldLock {
    const clock = options.clock ?? systemClock;
    const refresh = () => {
        const seconds = Math.floor(clock() / 1000);
        void session()
            .then(async (files) => {
                if (await isOurs(files, path, token)) await files.setstat(path, { atime: seconds, mtime: seconds });
            })
            .catch(() => undefined);
    };
    const stop = (options.repeat ?? timerRepeat)(Math.max(1, Math.floor(options.staleMs / 4)), refresh);
    return {
        path,
        verify: async () => {
            if (!(await isOurs(await session(), path, token))) throw new LockLostError(path);
        },
        release: async () => {
            stop();
            const files = await session();
            if (await isOurs(files, path, token).catch(() => false)) await files.removeQuietly(path);
        },
    };
}

async function isOurs(files: Sftp, path: string, token: string): Promise<boolean> {
    const current = await readHolder(files, path);
    return current !== "gone" && current?.token === token;
}

/**
 * Creates the lock file already naming its holder: written to a temporary file and hard-linked into
 * place, so a taker cut off at any moment never leaves a lock naming nobody; O_EXCL where the server
 * lacks hard links.
 */
async function createNamed(files: Sftp, path: string, holder: LockHolder): Promise<boolean> {
    const content = Buffer.from(JSON.stringify(holder));
    const temporary = `${path}.${holder.token}.pulumi-lifecycle.tmp`;
    if (!(await files.createExclusive(temporary, content, 0o644, false))) return false;
    try {
        for (let attempt = 1; ; attempt++) {
            try {
                await files.link(temporary, path);
                return true;
            } catch (error) {
                // SFTP v3 has no "already exists": OpenSSH answers a link onto an existing file with a bare
                // Failure. A lock file there now is held. One gone by now was held and released in
                // between (another writer's short batch), so the link is tried again; a failure with no
                // lock file there, time after time, is not contention, and is the error.
                if ((await files.statIfAny(path)) !== undefined) return false;
                if (codeOf(error) === "ENOTSUP") return await files.createExclusive(path, content, 0o644, false);
                if (attempt >= LINK_ATTEMPTS) throw error;
            }
        }
    } finally {
        await files.removeQuietly(temporary);
    }
}

/** The holder a lock file names; undefined while unreadable as one; "gone" when it vanished. */
async function readHolder(files: Sftp, path: string): Promise<LockHolder | undefined | "gone"> {
    let text: string;
    try {
        text = (await files.readAll(path)).toString("utf8");
    } catch (error) {
        if (codeOf(error) === "ENOENT") return "gone";
        throw error;
    }
    return parseHolder(text);
}
