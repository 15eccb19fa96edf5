// Guards a delete written in place (a bind-mounted hosts file, or a directory we may not write) against a
// tool that appends without our lock (`echo line >> /etc/hosts`) while the write goes in. Found by the
// multi-writer soak (issue 18; seeds 7, 3002, 3038): "acknowledged as deleted, yet found 1 times in the
// file". Deleting the file's last line writes the remaining bytes over themselves, so until the cut to
// length the file is byte for byte what it was; an append landing then (while the new content is flushed)
// made the writer take the file for one whose write had never begun, keep the deleted line, and answer
// the delete as done. The append is injected by a real `sh -c 'printf ... >>'` run at the one moment it
// can land: as the store flushes the new content of the hosts file, before it reads the file back.

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { fstatSync, readFileSync, statSync } from "node:fs";
import { HostsFileStore } from "../../../provider/hosts/io/hostsFileStore";
import { createEntry, deleteEntry, identityOf } from "../../../provider/hosts/logic/entries";
import { makeTempDir, type TempDir } from "../../support/projects";
import { hasTool, inPlaceHostsFile, skipBecause } from "../../support/system";

// Patched on the module object itself: the store's modules call it through there (CommonJS), so the
// append runs inside their write, between the flush and the read that follows it.
const fs: typeof import("node:fs") = require("node:fs");

const BASE = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n";
const FOREIGN = "10.250.0.1\tforeign-a0-1.test";
const entry = (n: number) => ({ address: `10.3.0.${n}`, names: [`w3-0-${n}.test`] });
const lineOf = (n: number) => `10.3.0.${n}\tw3-0-${n}.test`;

describe("a delete written in place while a tool appends without the lock", () => {
    let temp: TempDir;
    let file: string;
    let undo: (() => void) | undefined;
    let store: HostsFileStore;
    const fsyncSync = fs.fsyncSync;

    beforeEach(async function () {
        if (!hasTool("sh")) skipBecause(this, "needs sh, to append to the file as `echo >>` does");
        temp = await makeTempDir();
        ({ file, undo } = inPlaceHostsFile(this, temp.dir, BASE));
        store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
    });

    afterEach(async () => {
        fs.fsyncSync = fsyncSync;
        undo?.();
        undo = undefined;
        await temp.cleanup();
    });

    async function create(n: number): Promise<void> {
        await store.edit(file, (doc) => {
            createEntry(doc, entry(n), { adopt: false, file });
            return () => undefined;
        });
    }

    /** Deletes entry `n`; a foreign append lands as the store flushes the hosts file. Answers the store's answer. */
    async function deleteWhileAppending(n: number): Promise<boolean> {
        const { dev, ino } = statSync(file);
        let appended = 0;
        fs.fsyncSync = (fd: number) => {
            fsyncSync(fd);
            const flushed = fstatSync(fd);
            if (appended > 0 || flushed.dev !== dev || flushed.ino !== ino) return;
            appended++;
            const run = spawnSync("sh", ["-c", 'printf "%s\\n" "$1" >> "$2"', "sh", FOREIGN, file]);
            assert.equal(run.status, 0, `the foreign append failed: ${run.stderr}`);
        };
        try {
            const removed = await store.edit(file, (doc) => {
                const found = deleteEntry(doc, identityOf(entry(n)));
                return () => found;
            });
            assert.equal(appended, 1, "the foreign append ran inside the store's write");
            return removed;
        } finally {
            fs.fsyncSync = fsyncSync;
        }
    }

    it("removes the file's last line and keeps the line appended meanwhile", async () => {
        await create(48);
        await create(49);
        assert.equal(await deleteWhileAppending(49), true);
        assert.equal(readFileSync(file, "latin1"), `${BASE}${lineOf(48)}\n${FOREIGN}\n`);
    });

    it("removes the file's only added line and keeps the line appended meanwhile", async () => {
        await create(49);
        assert.equal(await deleteWhileAppending(49), true);
        assert.equal(readFileSync(file, "latin1"), `${BASE}${FOREIGN}\n`);
    });

    it("removes a line from the middle and keeps the line appended meanwhile", async () => {
        await create(48);
        await create(49);
        await create(50);
        assert.equal(await deleteWhileAppending(49), true);
        assert.equal(readFileSync(file, "latin1"), `${BASE}${lineOf(48)}\n${lineOf(50)}\n${FOREIGN}\n`);
    });

    it("answers a later delete of the same file from the file, appended line included", async () => {
        await create(49);
        await create(50);
        assert.equal(await deleteWhileAppending(50), true);
        const removed = await store.edit(file, (doc) => {
            const found = deleteEntry(doc, identityOf(entry(49)));
            return () => found;
        });
        assert.equal(removed, true);
        assert.equal(readFileSync(file, "latin1"), `${BASE}${FOREIGN}\n`);
    });
});
