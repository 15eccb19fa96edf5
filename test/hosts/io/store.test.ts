// Guards the hosts-file store: edits issued together are coalesced into one locked atomic write; a
// failing edit fails only its caller; reads see the file before a batch's edits; a change by a writer
// that ignores our lock is never overwritten; symlinks are followed; missing files and directories and
// unreadable encodings give clear errors.

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { appendFileSync, statSync, writeFileSync } from "node:fs";
import { lstat, mkdir, readFile, readlink, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HostsFileError } from "../../../provider/hosts/errors/hostsFileError";
import { type HostsFileAccess, type HostsFileLocation, localFiles } from "../../../provider/hosts/io/hostsFileAccess";
import { HostsFileStore, type WriteEvent } from "../../../provider/hosts/io/hostsFileStore";
import { createEntry, deleteEntry, identityOf, readEntry } from "../../../provider/hosts/logic/entries";
import { acquireFileLock } from "../../../provider/shared/files/fileLock";
import { hasSidecar, sidecarPathFor } from "../../../provider/shared/files/inPlaceSidecar";
import { sidecarBytes } from "../../../provider/shared/files/sidecarRecord";
import { signatureOf } from "../../../provider/shared/files/signature";
import { makeTempDir, type TempDir } from "../../support/projects";
import { isRoot, skipBecause } from "../../support/system";

const BASE = "# managed elsewhere\n127.0.0.1\tlocalhost\n";

function entry(n: number) {
    return { address: `10.1.${Math.floor(n / 250)}.${n % 250}`, names: [`host-${n}.test`] };
}

describe("hosts file store", () => {
    let temp: TempDir;
    let file: string;
    let writes: WriteEvent[];
    let store: HostsFileStore;

    beforeEach(async () => {
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
        await writeFile(file, BASE);
        writes = [];
        store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 }, onWrite: (e) => writes.push(e) });
    });
    afterEach(() => temp.cleanup());

    const create = (n: number, target: HostsFileLocation = file) =>
        store.edit(target, (doc) => {
            const { line } = createEntry(doc, entry(n), {
                adopt: false,
                file: typeof target === "string" ? target : target.file,
            });
            return () => doc.lineNumber(line);
        });

    it("coalesces edits issued in the same turn into one write", async () => {
        const lines = await Promise.all(Array.from({ length: 50 }, (_, n) => create(n)));
        assert.equal(writes.length, 1);
        assert.equal(writes[0]?.edits, 50);
        assert.deepEqual(
            lines,
            Array.from({ length: 50 }, (_, n) => n + 3),
        );
        const text = await readFile(file, "utf8");
        assert.ok(text.startsWith(BASE));
        assert.equal(text.split("\n").length - 1, 52);
    });

    it("fails only the edit that fails and writes the others", async () => {
        const results = await Promise.allSettled([
            create(1),
            store.edit(file, (doc) => {
                createEntry(doc, { address: "10.9.9.9", names: ["localhost"] }, { adopt: false, file });
                return () => undefined;
            }),
            create(2),
        ]);
        assert.deepEqual(
            results.map((r) => r.status),
            ["fulfilled", "rejected", "fulfilled"],
        );
        assert.match(String((results[1] as PromiseRejectedResult).reason), /already has "localhost" at line 2/);
        assert.equal(await readFile(file, "utf8"), `${BASE}10.1.0.1\thost-1.test\n10.1.0.2\thost-2.test\n`);
        assert.equal(writes.length, 1);
    });

    it("answers reads from the file as it was before the batch's edits", async () => {
        const [seen] = await Promise.all([
            store.read(file, (doc) => readEntry(doc, { family: "ipv4", name: "host-7.test" })),
            create(7),
        ]);
        assert.equal(seen, undefined);
        const after = await store.read(file, (doc) => readEntry(doc, { family: "ipv4", name: "host-7.test" }));
        assert.equal(after?.lineNumber, 3);
    });

    it("writes nothing when a batch changes nothing", async () => {
        await store.edit(file, (doc) => {
            deleteEntry(doc, { family: "ipv4", name: "not-there.test" });
            return () => undefined;
        });
        assert.equal(writes.length, 0);
    });

    it("keeps a change made between batches by a writer that ignores the lock", async () => {
        await create(1);
        const foreign = `${await readFile(file, "utf8")}192.168.1.1\tprinter # added by hand\n`;
        await writeFile(file, foreign);
        await create(2);
        assert.equal(await readFile(file, "utf8"), `${foreign}10.1.0.2\thost-2.test\n`);
    });

    it("redoes a batch on the new content when a foreign write lands after the read", async () => {
        let foreignWrites = 0;
        await store.edit(file, (doc) => {
            // Runs once per attempt; the first time, another program appends between our read and our write.
            if (foreignWrites++ === 0) appendFileSync(file, "192.168.1.1\tprinter\n");
            createEntry(doc, entry(4), { adopt: false, file });
            return () => undefined;
        });
        assert.equal(foreignWrites, 2, "computed twice: on the old content, then on the new");
        assert.equal(await readFile(file, "utf8"), `${BASE}192.168.1.1\tprinter\n10.1.0.4\thost-4.test\n`);
        assert.equal(writes.length, 1);
    });

    it("fails with the file intact, never overwriting, when a foreign writer changes it on every attempt", async () => {
        let foreignWrites = 0;
        const error = await store
            .edit(file, (doc) => {
                appendFileSync(file, `192.168.1.${++foreignWrites}\tforeign-${foreignWrites}.test\n`);
                createEntry(doc, entry(4), { adopt: false, file });
                return () => undefined;
            })
            .then(
                () => assert.fail("the write went through over a foreign change"),
                (e: unknown) => e,
            );
        assert.ok(error instanceof HostsFileError);
        assert.equal(error.code, "ECHANGED");
        assert.match(error.message, /another program kept changing it .* Nothing of theirs was overwritten\. Retry/);
        const text = await readFile(file, "utf8");
        assert.equal((text.match(/foreign-\d+\.test/g) ?? []).length, foreignWrites, "every foreign line kept");
        assert.doesNotMatch(text, /host-4\.test/);
        assert.equal(writes.length, 0);
    });

    /**
     * This machine's files, counting whole reads, reads ahead and searches for an in-place write's
     * sidecar, with each read ahead reported to `onReadAhead` once it is done.
     */
    function counted(onReadAhead: () => void = () => undefined) {
        const calls = { read: 0, readAhead: 0, mayNeedRecovery: 0 };
        const access: HostsFileAccess = {
            ...localFiles,
            read: (real) => {
                calls.read++;
                return localFiles.read(real);
            },
            readAhead: async (real) => {
                calls.readAhead++;
                const read = await localFiles.readAhead?.(real);
                onReadAhead();
                return read;
            },
            mayNeedRecovery: (real) => {
                calls.mayNeedRecovery++;
                return localFiles.mayNeedRecovery(real);
            },
        };
        return { location: { file, access }, calls };
    }

    /** Dates the file a minute back: changed long before it is read, as a hosts file usually is. */
    const settle = () => utimes(file, Date.now() / 1000 - 60, Date.now() / 1000 - 60);

    describe("reading ahead of the lock", () => {
        it("uses the bytes read while it took the lock, reading nothing under it", async () => {
            await settle();
            const { location, calls } = counted();
            await create(1, location);
            assert.deepEqual(calls, { read: 0, readAhead: 1, mayNeedRecovery: 0 });
            assert.equal(await readFile(file, "utf8"), `${BASE}10.1.0.1\thost-1.test\n`);
        });

        it("does not vouch for a file changed moments ago, which could change again within its timestamp's tick", async () => {
            const { location, calls } = counted();
            await create(1, location);
            assert.deepEqual(calls, { read: 1, readAhead: 1, mayNeedRecovery: 0 });
            assert.equal(await readFile(file, "utf8"), `${BASE}10.1.0.1\thost-1.test\n`);
        });

        it("reads again, keeping the change, when the file changed while the batch waited for the lock", async () => {
            await settle();
            const holder = await acquireFileLock(file, { timeoutMs: 5000, staleMs: 60_000 });
            let readAhead!: () => void;
            const read = new Promise<void>((resolve) => {
                readAhead = resolve;
            });
            const { location, calls } = counted(() => readAhead());
            const edit = create(1, location);
            await read;
            // The lock's holder writes, keeping the size, so only the signature's time tells the change.
            await writeFile(file, BASE.replace("elsewhere", "ELSEWHERE"));
            await holder.release();
            await edit;
            assert.deepEqual(calls, { read: 1, readAhead: 1, mayNeedRecovery: 0 });
            assert.equal(
                await readFile(file, "utf8"),
                `${BASE.replace("elsewhere", "ELSEWHERE")}10.1.0.1\thost-1.test\n`,
            );
        });
    });

    describe("reading a file that has settled", () => {
        const localhost = (location: HostsFileLocation) =>
            store.read(location, (doc) => readEntry(doc, identityOf({ address: "127.0.0.1", names: ["localhost"] })));

        it("answers from the document it read while the file keeps its signature, reading nothing and seeking no sidecar", async () => {
            await settle();
            const { location, calls } = counted();
            assert.equal((await localhost(location))?.lineNumber, 2);
            assert.deepEqual(calls, { read: 1, readAhead: 0, mayNeedRecovery: 1 });
            const again = await Promise.all([localhost(location), localhost(location)]);
            assert.deepEqual(
                again.map((found) => found?.lineNumber),
                [2, 2],
            );
            assert.deepEqual(calls, { read: 1, readAhead: 0, mayNeedRecovery: 1 });
        });

        it("reads a file changed since, keeping its size, again", async () => {
            await settle();
            const { location, calls } = counted();
            await localhost(location);
            await writeFile(file, BASE.replace("127.0.0.1\tlocalhost", "127.0.0.9\tlocalhost"));
            assert.equal((await localhost(location))?.address, "127.0.0.9");
            assert.deepEqual(calls, { read: 2, readAhead: 0, mayNeedRecovery: 2 });
        });

        it("seeks a sidecar again after a write of its own, whose signature a write in the same tick could keep", async () => {
            await settle();
            const { location, calls } = counted();
            await create(1, location);
            await localhost(location);
            await localhost(location);
            assert.deepEqual(calls, { read: 0, readAhead: 1, mayNeedRecovery: 2 });
        });

        it("never answers from a document whose edits are applied but not yet written", async () => {
            await settle();
            let release!: () => void;
            const gate = new Promise<void>((resolve) => {
                release = resolve;
            });
            let writing!: () => void;
            const written = new Promise<void>((resolve) => {
                writing = resolve;
            });
            const access: HostsFileAccess = {
                ...localFiles,
                write: async (...args) => {
                    writing();
                    await gate;
                    return localFiles.write(...args);
                },
            };
            const location = { file, access };
            await localhost(location);
            const edit = create(1, location);
            await written;
            let answered = false;
            const read = store
                .read(location, (doc) => readEntry(doc, identityOf(entry(1))))
                .finally(() => {
                    answered = true;
                });
            try {
                await new Promise((resolve) => setImmediate(resolve));
                assert.equal(answered, false, "the read waits for the batch that holds the lock");
            } finally {
                release();
            }
            await edit;
            assert.equal((await read)?.address, entry(1).address);
        });

        it("waits for the recovery of an in-place write that a crash cut short after the document was read", async () => {
            await settle();
            const { location } = counted();
            await localhost(location);
            // Another process's in-place write of the same length, cut short after its first bytes.
            const previous = Buffer.from(BASE);
            const data = Buffer.from(BASE.replace("127.0.0.1\tlocalhost", "127.0.0.7\tlocalhost"));
            const previousSignature = signatureOf(statSync(file, { bigint: true }));
            writeFileSync(sidecarPathFor(file), sidecarBytes({ previous, data, previousSignature }));
            const torn = Buffer.concat([
                data.subarray(0, BASE.indexOf("127.0.0.") + 9),
                previous.subarray(BASE.indexOf("127.0.0.") + 9),
            ]);
            writeFileSync(file, torn);
            assert.equal((await localhost(location))?.address, "127.0.0.7");
            assert.equal(await readFile(file, "utf8"), data.toString());
            assert.equal(hasSidecar(file), false);
        });
    });

    it("follows a symlinked hosts file: the target changes, the link stays", async () => {
        const link = join(temp.dir, "hosts-link");
        await symlink(file, link);
        await create(3, link);
        assert.equal(await readlink(link), file);
        assert.match(await readFile(file, "utf8"), /host-3\.test/);
    });

    it("follows a dangling symlink: the first entry creates its target, and the link stays a link", async () => {
        const target = join(temp.dir, "not-yet");
        const link = join(temp.dir, "dangling-link");
        await symlink(target, link);
        await create(5, link);
        assert.equal(await readlink(link), target);
        assert.equal(await readFile(target, "utf8"), "10.1.0.5\thost-5.test\n");
    });

    it("refuses a FIFO at once (no open that blocks under the lock), and leaves it a FIFO", async () => {
        const fifo = join(temp.dir, "fifo-hosts");
        execFileSync("mkfifo", [fifo]);
        await assert.rejects(create(6, fifo), (error: unknown) => {
            assert.ok(error instanceof HostsFileError);
            assert.match(error.message, /is not a regular file \(a FIFO, device or socket\)/);
            return true;
        });
        assert.ok((await lstat(fifo)).isFIFO());
    });

    it("refuses a character device, and leaves it a device", async function () {
        if (!isRoot) skipBecause(this, "creating a device node needs root (mknod)");
        const device = join(temp.dir, "null-hosts");
        execFileSync("mknod", [device, "c", "1", "3"]);
        await assert.rejects(create(7, device), /is not a regular file/);
        assert.ok((await lstat(device)).isCharacterDevice());
    });

    it("creates a missing file on the first entry, and reads a missing file as empty", async () => {
        const fresh = join(temp.dir, "fresh-hosts");
        assert.equal(await store.read(fresh, (doc) => doc.allLines().length), 0);
        await create(4, fresh);
        assert.equal(await readFile(fresh, "utf8"), "10.1.0.4\thost-4.test\n");
    });

    it("says when the directory does not exist", async () => {
        const nowhere = join(temp.dir, "missing", "hosts");
        await assert.rejects(create(5, nowhere), (error: unknown) => {
            assert.ok(error instanceof HostsFileError);
            assert.match(error.message, /cannot lock hosts file .*missing\/hosts: its directory does not exist/);
            assert.match(error.message, /The file was not changed\./);
            return true;
        });
    });

    it("refuses a UTF-16 file without touching it", async () => {
        const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("127.0.0.1 localhost\r\n", "utf16le")]);
        await writeFile(file, utf16);
        await assert.rejects(create(6), /cannot read hosts file .*: the file is UTF-16 encoded; save it as UTF-8/);
        assert.deepEqual(await readFile(file), utf16);
    });

    it("refuses a path that is a directory", async () => {
        const directory = join(temp.dir, "adir");
        await mkdir(directory);
        await assert.rejects(create(8, directory), /adir: it is a directory/);
    });
});
