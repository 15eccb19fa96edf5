// Guards the in-place write path for real (a bind-mounted hosts file, where rename fails with EBUSY as on
// Docker's /etc/hosts) against SIGKILL at random points: 200 writer processes, each killed while it
// writes in a loop, every other one as another user (who may write the file, not its directory). After
// every kill, a witness writer of another user and $TMPDIR must find a whole file (every original line
// in order, every added line whole, no line twice), finish exactly the write the kill cut short (from its
// sidecar: beside the file, or in the shared directory for the writer who may not write the directory),
// and keep its own entry, which no later recovery may take away. The kill points are random
// (seeded, so a failure can be replayed); the assertions hold wherever they land.

import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { HostsFileStore } from "../../../provider/hosts/io/hostsFileStore";
import { createEntry } from "../../../provider/hosts/logic/entries";
import { writeFileAtomicSync } from "../../../provider/shared/files/atomicWrite";
import { acquireFileLock } from "../../../provider/shared/files/fileLock";
import {
    SHARED_SIDECAR_DIRECTORY,
    sidecarNameFor,
    sidecarPathFor,
} from "../../../provider/shared/files/inPlaceSidecar";
import { finishedContent, parseSidecar } from "../../../provider/shared/files/sidecarRecord";
import { signatureOf } from "../../../provider/shared/files/signature";
import { seededRandom } from "../../../provider/shared/random";
import { budget } from "../../support/budget";
import { blocklist } from "../../support/hostsFixtures";
import { makeTempDir, REPO_ROOT, type TempDir } from "../../support/projects";
import { bindMount, canBindMount, NOBODY, skipBecause, useTmpdir } from "../../support/system";

/** Writers killed: CI's budget, and the inner loop's sample. */
const KILLS = budget({ full: 200, quick: 50 });
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

function startWriter(file: string, round: number, tmpdir: string): Writer {
    const child = spawn(process.execPath, ["-e", WRITER, file, String(round)], {
        stdio: ["pipe", "pipe", "inherit"],
        env: { ...process.env, TMPDIR: tmpdir },
        // Every other writer is another user, who may write the file but not its directory.
        ...(round % 2 === 1 ? NOBODY : {}),
    });
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
    let writerTmp: string;
    let witnessTmp: string;
    let unmount: (() => void) | undefined;
    let restoreTmpdir: (() => void) | undefined;

    beforeEach(async function () {
        if (!canBindMount()) skipBecause(this, "needs root with mount(8) to bind-mount a file (the in-place path)");
        temp = await makeTempDir();
        await chmod(temp.dir, 0o755);
        writerTmp = join(temp.dir, "tmp-writers");
        witnessTmp = join(temp.dir, "tmp-witness");
        await mkdir(writerTmp, { mode: 0o1777 });
        await chmod(writerTmp, 0o1777);
        await mkdir(witnessTmp);
        // The witness (this process) writes with another $TMPDIR than the writers it follows.
        restoreTmpdir = useTmpdir(witnessTmp);
        source = join(temp.dir, "source");
        target = join(temp.dir, "hosts");
        await writeFile(source, BASE, { mode: 0o666 });
        await chmod(source, 0o666);
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

    /** Puts the base back, under the lock as a writer of ours would, while a writer may be running. */
    async function reset(): Promise<void> {
        const lock = await acquireFileLock(target, { timeoutMs: 5000, staleMs: 60_000 });
        try {
            writeFileAtomicSync(target, Buffer.from(BASE));
        } finally {
            await lock.release();
        }
    }

    it(`leaves a whole file and loses no acknowledged entry over ${KILLS} random kills of the writer`, async () => {
        const random = seededRandom(SEED);
        let cutShort = 0;
        let witnessed: string | undefined;
        let writer = startWriter(target, 0, writerTmp);
        for (let round = 0; round < KILLS; round++) {
            await writer.go();
            if (witnessed !== undefined) {
                // Its first write recovered nothing of its own: the witness's entry must still be there.
                const seen = await readFile(target, "utf8");
                assert.ok(seen.startsWith(witnessed), `round ${round}: the writer took the witness's entry away`);
            }
            // Keep the file small enough that every round writes at the same pace.
            await reset();
            await sleep(Math.floor(random() * 40));
            const exited = new Promise((resolve) => writer.child.once("exit", resolve));
            writer.child.kill("SIGKILL");
            await exited;

            const left = await readFile(target);
            // What the write the kill cut short must become: finished from its sidecar, if one was left.
            const asNobody = round % 2 === 1;
            const sidecarPath = asNobody
                ? join(SHARED_SIDECAR_DIRECTORY, sidecarNameFor(target, NOBODY.uid))
                : sidecarPathFor(target);
            const sidecar = existsSync(sidecarPath) ? parseSidecar(readFileSync(sidecarPath)) : undefined;
            if (existsSync(sidecarPath)) cutShort++;
            const signature = signatureOf(statSync(target, { bigint: true }));
            const finished = sidecar ? finishedContent(left, signature, sidecar) : undefined;
            const expected = (finished ?? left).toString("utf8");
            assertWhole(expected, round);
            // The witness, another user (root) with another $TMPDIR: one more entry, after finishing what the
            // kill left, from the sidecar beside the file or in the shared directory.
            const next = { address: `10.7.${round % 250}.250`, names: [`next-${round}-0.test`] };
            const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 } });
            await store.edit(target, (doc) => {
                createEntry(doc, next, { adopt: false, file: target });
                return () => undefined;
            });
            assert.equal(existsSync(sidecarPath), false, `round ${round}: the sidecar was left behind`);
            witnessed = `${expected}10.7.${round % 250}.250\tnext-${round}-0.test\n`;
            assert.equal(await readFile(target, "utf8"), witnessed, `round ${round}: recovered wrongly`);
            if (round + 1 < KILLS) writer = startWriter(target, round + 1, writerTmp);
        }
        assert.deepEqual(await readdir(writerTmp), [], "the writers kept nothing in their $TMPDIR");
        assert.deepEqual(await readdir(witnessTmp), [], "the witness kept nothing in its $TMPDIR");
        console.log(`      ${cutShort} of ${KILLS} kills cut an in-place write short; each was finished`);
    });
});
