// Guards a batch written in place that grows the file without only appending to it (a line deleted and a
// longer one created, as the multi-lane writers send) against a tool that appends without our lock
// (`echo line >> /etc/hosts`). Found by the multi-writer soak (issue 18; seeds 45, 114, 6112, 6146, 6226,
// 6245): a torn foreign line, ".250.0.97\tforeign-a0-97.test". The new content went in at 0 whole, so its
// bytes past the old end overwrote the start of a line appended after the last check. The append is
// injected by a real `sh -c 'printf ... >>'` at each moment it can land: as the store writes the hosts
// file in place, as it flushes what it wrote there, as it flushes what it appended.

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { fstatSync, readFileSync, statSync } from "node:fs";
import { HostsFileStore } from "../../../provider/hosts/io/hostsFileStore";
import { createEntry, deleteEntry, identityOf } from "../../../provider/hosts/logic/entries";
import { makeTempDir, type TempDir } from "../../support/projects";
import { hasTool, inPlaceHostsFile, skipBecause } from "../../support/system";

// Patched on the module object itself: the store's modules call it through there (CommonJS), so the
// append runs inside their write.
const fs: typeof import("node:fs") = require("node:fs");

const BASE = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n";
const FOREIGN = "10.250.0.97\tforeign-a0-97.test";
const REWRITER = "10.251.0.7\tforeign-r0-7.test";
/** Entries from 200 on have a longer line than the foreign one: written whole at 0, they would hide it. */
const entry = (n: number) => ({
    address: `10.3.0.${n}`,
    names: n < 200 ? [`w3-0-${n}.test`] : [`w3-0-${n}.test`, `w3-0-${n}-alias-with-a-long-name.test`],
});
const lineOf = (n: number) => `10.3.0.${n}\t${entry(n).names.join(" ")}`;

/** The moments of the store's write of the hosts file at which the foreign append is fired. */
type Moment = "as it writes in place" | "as it flushes the file" | "as it flushes the file a second time";

describe("a batch that grows a file written in place while a tool appends without the lock", () => {
    let temp: TempDir;
    let file: string;
    let undo: (() => void) | undefined;
    let store: HostsFileStore;
    const { writeSync, fsyncSync } = fs;

    beforeEach(async function () {
        if (!hasTool("sh")) skipBecause(this, "needs sh, to append to the file as `echo >>` does");
        temp = await makeTempDir();
        ({ file, undo } = inPlaceHostsFile(this, temp.dir, BASE));
        store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
    });

    afterEach(async () => {
        fs.writeSync = writeSync;
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

    /**
     * Deletes entry `gone` and creates `added` (a longer line) in one batch; the foreign append lands at
     * `moment` of the store's write of the hosts file.
     */
    async function replaceWhileAppending(gone: number, added: number, moment: Moment): Promise<void> {
        const { dev, ino } = statSync(file);
        const ours = (fd: number) => {
            const info = fstatSync(fd);
            return info.dev === dev && info.ino === ino;
        };
        let seen = 0;
        let appended = 0;
        const append = () => {
            appended++;
            const run = spawnSync("sh", ["-c", 'printf "%s\\n" "$1" >> "$2"', "sh", FOREIGN, file]);
            assert.equal(run.status, 0, `the foreign append failed: ${run.stderr}`);
        };
        if (moment === "as it writes in place") {
            fs.writeSync = ((fd: number, ...rest: never[]) => {
                // Positioned writes only: the store's in-place write, not an O_APPEND one.
                if (appended === 0 && typeof rest[3] === "number" && ours(fd)) append();
                return (writeSync as (...args: unknown[]) => number)(fd, ...rest);
            }) as typeof fs.writeSync;
        } else {
            const at = moment === "as it flushes the file" ? 1 : 2;
            fs.fsyncSync = (fd: number) => {
                fsyncSync(fd);
                if (appended === 0 && ours(fd) && ++seen === at) append();
            };
        }
        try {
            await store.edit(file, (doc) => {
                assert.equal(deleteEntry(doc, identityOf(entry(gone))), true);
                createEntry(doc, entry(added), { adopt: false, file });
                return () => undefined;
            });
            assert.equal(appended, 1, "the foreign append ran inside the store's write");
        } finally {
            fs.writeSync = writeSync;
            fs.fsyncSync = fsyncSync;
        }
    }

    const moments: Moment[] = [
        "as it writes in place",
        "as it flushes the file",
        "as it flushes the file a second time",
    ];
    for (const moment of moments) {
        it(`keeps a line appended ${moment}, whole, after the batch's content`, async () => {
            await create(48);
            await create(49);
            await replaceWhileAppending(48, 150, moment);
            assert.equal(readFileSync(file, "latin1"), `${BASE}${lineOf(49)}\n${lineOf(150)}\n${FOREIGN}\n`);
        });
    }

    it("leaves no torn line when a tool rewrites the file in place (O_TRUNC, then write) while the batch flushes its in-place part", async () => {
        // Found by the multi-writer suite in CI (seed 14, under load): a torn ".test" fragment. The rest
        // of the batch, which starts mid-line (line 150 is 2 bytes longer than line 48), was appended
        // after the tool's content: the tool had run during the flush between the two parts.
        await create(48);
        await create(49);
        const rewritten = `${readFileSync(file, "latin1")}${REWRITER}\n`;
        const { dev, ino } = statSync(file);
        let rewrites = 0;
        fs.fsyncSync = (fd: number) => {
            fsyncSync(fd);
            const info = fstatSync(fd);
            if (rewrites > 0 || info.dev !== dev || info.ino !== ino) return;
            rewrites++;
            // The tool read the file before the batch began, and writes back what it read plus its line.
            const run = spawnSync("sh", ["-c", 'printf "%s" "$1" > "$2"', "sh", rewritten, file]);
            assert.equal(run.status, 0, `the foreign rewrite failed: ${run.stderr}`);
        };
        try {
            await store.edit(file, (doc) => {
                deleteEntry(doc, identityOf(entry(48)));
                createEntry(doc, entry(150), { adopt: false, file });
                return () => undefined;
            });
        } finally {
            fs.fsyncSync = fsyncSync;
        }
        assert.equal(rewrites, 1, "the foreign rewrite ran inside the store's write");
        // The batch was redone on the tool's content: every line whole, the tool's kept.
        assert.equal(readFileSync(file, "latin1"), `${BASE}${lineOf(49)}\n${REWRITER}\n${lineOf(150)}\n`);
    });

    it("keeps a line appended as it writes in place when the batch grows the file by more than that line's length", async () => {
        await create(48);
        await replaceWhileAppending(48, 200, "as it writes in place");
        assert.equal(readFileSync(file, "latin1"), `${BASE}${lineOf(200)}\n${FOREIGN}\n`);
        await create(201);
        assert.equal(readFileSync(file, "latin1"), `${BASE}${lineOf(200)}\n${FOREIGN}\n${lineOf(201)}\n`);
    });
});
