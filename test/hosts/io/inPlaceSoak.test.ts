// Guards the in-place write path for real (a bind-mounted hosts file, where rename fails with EBUSY as on
// Docker's /etc/hosts) against SIGKILL at random points: 200 writer processes, each killed while it
// writes in a loop. After every kill, the next run must find a whole file (every original line in order,
// every added line whole, no line twice) and, when the kill cut a write short, restore exactly the
// backup it left. The kill points are random (seeded, so a failure can be replayed); the assertions hold
// wherever they land.

import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { HostsFileStore } from "../../../provider/hosts/io/hostsFileStore";
import { createEntry } from "../../../provider/hosts/logic/entries";
import { backupPath } from "../../../provider/shared/files/inPlaceBackup";
import { privateDirectory } from "../../../provider/shared/files/privateDirectory";
import { seededRandom } from "../../../provider/shared/random";
import { blocklist } from "../../support/hostsFixtures";
import { makeTempDir, REPO_ROOT, type TempDir } from "../../support/projects";
import { bindMount, canBindMount, skipBecause, useTmpdir } from "../../support/system";

const KILLS = 200;
const SEED = 20261123;
const BASE = blocklist(2_000).toString("utf8");
const ADDED = /^10\.7\.\d+\.\d+\t(?:soak|next)-\d+-\d+\.test$/;

/**
 * A writer that waits for a line on stdin (so the next one can start up while a round is checked), then
 * creates entries in a loop and says "ready" once its first write is on disk.
 */
const WRITER = `
    const { HostsFileStore } = require(${JSON.stringify(join(REPO_ROOT, "dist", "hosts", "io", "hostsFileStore.js"))});
    const { createEntry } = require(${JSON.stringify(join(REPO_ROOT, "dist", "hosts", "logic", "entries.js"))});
    const [file, round] = [process.argv[1], Number(process.argv[2])];
    const store = new HostsFileStore({ lock: { timeoutMs: 30000, staleMs: 60000 } });
    process.stdin.once("data", async () => {
        for (let i = 0; ; i++) {
            await store.edit(file, (doc) => {
                const entry = { address: "10.7." + (round % 250) + "." + (i % 250), names: ["soak-" + round + "-" + i + ".test"] };
                createEntry(doc, entry, { adopt: false, file });
                return () => undefined;
            });
            if (i === 0) process.stdout.write("ready\\n");
        }
    });
`;

interface Writer {
    readonly child: ChildProcess;
    /** Lets it write; resolves once its first write is on disk. */
    go(): Promise<void>;
}

function startWriter(file: string, round: number): Writer {
    const child = spawn(process.execPath, ["-e", WRITER, file, String(round)], { stdio: ["pipe", "pipe", "inherit"] });
    const ready = new Promise<void>((resolve, reject) => {
        child.stdout?.once("data", () => resolve());
        child.once("exit", (code, signal) => reject(new Error(`the writer exited early (${code ?? signal})`)));
    });
    ready.catch(() => undefined);
    return {
        child,
        go: () => {
            child.stdin?.write("go\n");
            return ready;
        },
    };
}

/** Asserts the file is whole: the base in order, then whole added lines, none twice. */
function assertWhole(text: string, round: number): void {
    assert.ok(text.startsWith(BASE), `round ${round}: the original lines are no longer intact at the start`);
    const added = text.slice(BASE.length).split("\n");
    assert.equal(added.pop(), "", `round ${round}: the file does not end with a whole line`);
    for (const line of added) assert.match(line, ADDED, `round ${round}: a torn line`);
    assert.equal(new Set(added).size, added.length, `round ${round}: a line appears twice`);
}

describe("in-place writes under SIGKILL (a bind-mounted hosts file)", function () {
    this.timeout(600_000);
    let temp: TempDir;
    let source: string;
    let target: string;
    let unmount: (() => void) | undefined;
    let restoreTmpdir: (() => void) | undefined;

    beforeEach(async function () {
        if (!canBindMount()) skipBecause(this, "needs root with mount(8) to bind-mount a file (the in-place path)");
        temp = await makeTempDir();
        // The writers inherit it: their backups land in this test's own private directory.
        restoreTmpdir = useTmpdir(temp.dir);
        source = join(temp.dir, "source");
        target = join(temp.dir, "hosts");
        await writeFile(source, BASE);
        await writeFile(target, "");
        unmount = bindMount(source, target);
    });
    afterEach(async () => {
        unmount?.();
        unmount = undefined;
        restoreTmpdir?.();
        restoreTmpdir = undefined;
        await temp?.cleanup();
    });

    it(`leaves a whole file and loses no backup over ${KILLS} random kills of the writer`, async () => {
        const random = seededRandom(SEED);
        let cutShort = 0;
        let writer = startWriter(target, 0);
        for (let round = 0; round < KILLS; round++) {
            await writer.go();
            await sleep(Math.floor(random() * 40));
            const exited = new Promise((resolve) => writer.child.once("exit", resolve));
            writer.child.kill("SIGKILL");
            await exited;
            if (round + 1 < KILLS) writer = startWriter(target, round + 1);

            const backup = backupPath(target);
            const saved = existsSync(backup) ? readFileSync(backup, "utf8") : undefined;
            if (saved !== undefined) {
                cutShort++;
                assertWhole(saved, round);
            } else {
                assertWhole(await readFile(target, "utf8"), round);
            }
            // The next run: one more entry, after restoring what the kill left.
            const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
            const next = { address: `10.7.${round % 250}.250`, names: [`next-${round}-0.test`] };
            await store.edit(target, (doc) => {
                createEntry(doc, next, { adopt: false, file: target });
                return () => undefined;
            });
            const after = await readFile(target, "utf8");
            assertWhole(after, round);
            if (saved !== undefined) {
                assert.equal(
                    after,
                    `${saved}10.7.${round % 250}.250\tnext-${round}-0.test\n`,
                    `round ${round}: backup lost`,
                );
            }
            assert.equal(existsSync(backup), false, `round ${round}: the backup was left behind`);
            // Keep the file small enough that every round writes at the same pace.
            await writeFile(source, BASE);
        }
        assert.deepEqual(await readdir(privateDirectory()), [], "no backup or temporary left behind");
        console.log(`      ${cutShort} of ${KILLS} kills cut an in-place write short; all were restored`);
    });
});
