// Guards the create journal through the HostEntry provider on real files: a create whose answer never
// reached the stack (its provider process ended after the write) is taken over by the next create of
// the same entry for the same stack, without writing; and row 4 still holds for every line that is not
// exactly that: a hand-written identical line, a line recorded for another stack, a line recorded by a
// process that is still running, a recorded line edited since. The engine asking about an entry (diff,
// refresh, update, delete) settles its record, and the journal is removed once nothing in it is open.

import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { appendFile, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { EntryConflictError } from "../../../provider/hosts/errors/entryConflictError";
import { HostEntryProvider } from "../../../provider/hosts/hostEntryProvider";
import type { HostEntryInputs, HostEntryOutputs } from "../../../provider/hosts/hostEntrySchema";
import { CreateJournal, journalPathFor, privateJournalPathFor } from "../../../provider/hosts/io/createJournal";
import { HostsFileStore } from "../../../provider/hosts/io/hostsFileStore";
import { makeTempDir, type TempDir } from "../../support/projects";
import { deadPid } from "../../support/system";

const BASE = "127.0.0.1\tlocalhost\n# mine\n";
const STACK = "organization/web/dev";

/** A provider as one provider process has it; `writer` stands for that process in the journal. */
function providerProcess(writer?: string): HostEntryProvider {
    const journal = new CreateJournal(writer);
    const store = new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 }, journal });
    return new HostEntryProvider(store, journal);
}

describe("the create journal", () => {
    let temp: TempDir;
    let file: string;
    let gone: string;

    beforeEach(async () => {
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
        await writeFile(file, BASE);
        // The provider process of an interrupted `up`: it wrote, and is gone.
        gone = `${hostname()}:${await deadPid()}:`;
    });
    afterEach(() => temp.cleanup());

    async function inputs(
        provider: HostEntryProvider,
        args: Record<string, unknown>,
        owner: string | null = STACK,
    ): Promise<HostEntryInputs> {
        const checked = await provider.check(
            {} as HostEntryInputs,
            {
                file,
                ...args,
                ...(owner ? { __owner: owner } : {}),
            } as unknown as HostEntryInputs,
        );
        assert.deepEqual(checked.failures, []);
        return checked.inputs as HostEntryInputs;
    }

    /** An `up` whose create wrote its line and never answered the stack. */
    async function interruptedCreate(args: Record<string, unknown>, owner = STACK): Promise<string> {
        const interrupted = providerProcess(gone);
        await interrupted.create(await inputs(interrupted, args, owner));
        return await readFile(file, "utf8");
    }

    it("lets the next create of the same entry for the same stack take its own line over, writing nothing", async () => {
        const web = { address: "10.0.0.5", names: ["web.internal", "web"], comment: "frontend" };
        const written = await interruptedCreate(web);
        assert.equal(written, `${BASE}10.0.0.5\tweb.internal web # frontend\n`);
        const next = providerProcess();
        const created = await next.create(await inputs(next, web));
        assert.equal(created.id, "ipv4/web.internal");
        assert.equal(created.outs?.line, 3);
        assert.equal(await readFile(file, "utf8"), written, "no second line, no byte changed");
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "taking the line over settled the journal away");
    });

    it("still refuses (row 4) an identical line nobody recorded", async () => {
        await appendFile(file, "10.0.0.5\tweb.internal\n");
        const next = providerProcess();
        await assert.rejects(
            next.create(await inputs(next, { address: "10.0.0.5", names: ["web.internal"] })),
            EntryConflictError,
        );
    });

    it("still refuses (row 4) a line recorded for another stack", async () => {
        await interruptedCreate({ address: "10.0.0.5", names: ["web.internal"] }, "organization/web/staging");
        const next = providerProcess();
        await assert.rejects(
            next.create(await inputs(next, { address: "10.0.0.5", names: ["web.internal"] })),
            EntryConflictError,
        );
    });

    it("still refuses (row 4) a line recorded by a provider process that is still running", async () => {
        const running = providerProcess(`${hostname()}:${process.pid}:`);
        await running.create(await inputs(running, { address: "10.0.0.5", names: ["web.internal"] }));
        const next = providerProcess();
        await assert.rejects(
            next.create(await inputs(next, { address: "10.0.0.5", names: ["web.internal"] })),
            EntryConflictError,
        );
    });

    it("still refuses (row 4) a recorded line that was edited since", async () => {
        const written = await interruptedCreate({ address: "10.0.0.5", names: ["web.internal"] });
        await writeFile(file, written.replace("10.0.0.5\tweb.internal", "10.0.0.5 web.internal"));
        const next = providerProcess();
        await assert.rejects(
            next.create(await inputs(next, { address: "10.0.0.5", names: ["web.internal"] })),
            EntryConflictError,
        );
    });

    it("records nothing for a program that names no stack, which then meets row 4", async () => {
        const interrupted = providerProcess(gone);
        await interrupted.create(await inputs(interrupted, { address: "10.0.0.5", names: ["web.internal"] }, null));
        const next = providerProcess();
        await assert.rejects(
            next.create(await inputs(next, { address: "10.0.0.5", names: ["web.internal"] })),
            EntryConflictError,
        );
    });

    for (const [operation, ask] of [
        [
            "diff",
            (p: HostEntryProvider, id: string, olds: HostEntryOutputs, news: HostEntryInputs) => p.diff(id, olds, news),
        ],
        ["refresh", (p: HostEntryProvider, id: string, olds: HostEntryOutputs) => p.read(id, olds)],
        [
            "update",
            (p: HostEntryProvider, id: string, olds: HostEntryOutputs, news: HostEntryInputs) =>
                p.update(id, olds, news),
        ],
    ] as const) {
        it(`settles a record once the stack shows it holds the entry (${operation}), and removes the journal`, async () => {
            const interrupted = providerProcess(gone);
            const web = await inputs(interrupted, { address: "10.0.0.5", names: ["web.internal"] });
            const created = await interrupted.create(web);
            const other = await interrupted.create(
                await inputs(interrupted, { address: "10.0.0.6", names: ["api.internal"] }),
            );
            assert.ok((await readdir(temp.dir)).includes(".hosts.pulumi-lifecycle.journal"));

            const next = providerProcess();
            await ask(next, created.id, created.outs as HostEntryOutputs, web);
            // The entry the stack holds is no longer this stack's to take over: a second declaration meets row 4.
            await writeFile(file, (await readFile(file, "utf8")).replace("10.0.0.5\tweb.internal\n", ""));
            await appendFile(file, "10.0.0.5\tweb.internal\n");
            await assert.rejects(next.create(web), EntryConflictError);
            assert.ok((await readdir(temp.dir)).includes(".hosts.pulumi-lifecycle.journal"), "one record still open");

            await next.diff(other.id, other.outs as HostEntryOutputs, other.outs as unknown as HostEntryInputs);
            assert.deepEqual(await readdir(temp.dir), ["hosts"], "nothing open: the journal is gone");
        });
    }

    it("settles what a create recorded even for an entry this process settled before the create", async () => {
        const provider = providerProcess();
        const web = await inputs(provider, { address: "10.0.0.5", names: ["web.internal"] });
        const first = await provider.create(web);
        const outs = first.outs as HostEntryOutputs;
        await provider.diff(first.id, outs, web);
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "settled, and the journal gone");
        // Its line deleted by hand, then the entry created again by the same process (a replacement).
        await writeFile(file, BASE);
        const again = await provider.create(web);
        assert.ok(
            (await readdir(temp.dir)).includes(".hosts.pulumi-lifecycle.journal"),
            "the create recorded its line",
        );
        await provider.diff(again.id, again.outs as HostEntryOutputs, web);
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "settled again, and the journal gone");
    });

    it("reads the journal no more once it found nothing open there, until this process records a create", async () => {
        const journal = new CreateJournal();
        let reads = 0;
        const settle = journal.settle.bind(journal);
        journal.settle = (...args) => {
            reads++;
            return settle(...args);
        };
        const provider = new HostEntryProvider(
            new HostsFileStore({ lock: { timeoutMs: 5000, staleMs: 60_000 }, journal }),
            journal,
        );
        const web = await provider.create(await inputs(provider, { address: "10.0.0.5", names: ["web.internal"] }));
        const api = await provider.create(await inputs(provider, { address: "10.0.0.6", names: ["api.internal"] }));
        await Promise.all([web, api].map(({ id, outs }) => provider.read(id, outs as HostEntryOutputs)));
        assert.equal(reads, 1, "one read settles the entries asked for in one turn");
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "settled, and the journal gone");

        // A refresh of the rest of the file's entries (here one written by hand) reads no journal.
        await appendFile(file, "10.0.0.7\thand.internal\n");
        const hand = { address: "10.0.0.7", names: ["hand.internal"], file, adopt: false, line: 5 };
        assert.deepEqual((await provider.read("ipv4/hand.internal", hand)).props?.names, ["hand.internal"]);
        assert.equal(reads, 1, "the journal found clear is not read again");

        const db = await provider.create(await inputs(provider, { address: "10.0.0.8", names: ["db.internal"] }));
        assert.ok(
            (await readdir(temp.dir)).includes(".hosts.pulumi-lifecycle.journal"),
            "the create recorded its line",
        );
        await provider.diff(db.id, db.outs as HostEntryOutputs, db.outs as unknown as HostEntryInputs);
        assert.equal(reads, 2, "a line this process recorded is settled");
        assert.deepEqual(await readdir(temp.dir), ["hosts"], "settled, and the journal gone");
    });

    it("settles a record when the entry is deleted", async () => {
        const interrupted = providerProcess(gone);
        const created = await interrupted.create(
            await inputs(interrupted, { address: "10.0.0.5", names: ["web.internal"] }),
        );
        await providerProcess().delete(created.id, created.outs as HostEntryOutputs);
        assert.equal(await readFile(file, "utf8"), BASE);
        assert.deepEqual(await readdir(temp.dir), ["hosts"]);
    });

    it("takes back its own line when a tool copied a write of ours that was then undone, and keeps its record open", async () => {
        // Our rename puts the create's line in place while an appender writes into the file it replaced:
        // the appender's content is put back and the write redone. In between, a tool that rewrites by
        // rename read our content, and renames it (with its line) over the put-back file. The retry meets
        // its own first attempt, which it must take back rather than fail as if someone else had written it.
        const provider = providerProcess();
        const web = await inputs(provider, { address: "10.0.0.5", names: ["web.internal"] });
        const fs = require("node:fs") as typeof import("node:fs");
        const renameSync = fs.renameSync;
        let renames = 0;
        let ours: Buffer | undefined;
        (fs as { renameSync: unknown }).renameSync = (from: string, to: string) => {
            if (to !== file) return renameSync(from, to);
            renames++;
            if (renames === 1) {
                // Our write: the appender opened the file before it, and writes after it.
                const appender = fs.openSync(file, "a");
                renameSync(from, to);
                ours = fs.readFileSync(file);
                fs.writeSync(appender, "192.168.1.1\tappended.test\n");
                fs.closeSync(appender);
            } else if (renames === 2) {
                // The appender's content put back; then the rewriting tool lands what it read: ours, and its line.
                renameSync(from, to);
                fs.writeFileSync(
                    `${file}.tool`,
                    Buffer.concat([ours as Buffer, Buffer.from("192.168.1.2\trewriter.test\n")]),
                );
                renameSync(`${file}.tool`, file);
            } else renameSync(from, to);
        };
        let created: Awaited<ReturnType<HostEntryProvider["create"]>>;
        try {
            created = await provider.create(web);
        } finally {
            (fs as { renameSync: unknown }).renameSync = renameSync;
        }
        assert.equal(renames, 2, "one write, undone, and the retry wrote nothing: the file already said it");
        assert.equal(
            await readFile(file, "utf8"),
            `${BASE}10.0.0.5\tweb.internal\n192.168.1.2\trewriter.test\n`,
            "the tool's copy of our write, and nothing written twice",
        );
        assert.equal(created.id, "ipv4/web.internal");
        assert.equal(created.outs?.line, 3);
        const records = (await readFile(journalPathFor(file), "utf8"))
            .trim()
            .split("\n")
            .map((r) => JSON.parse(r));
        assert.deepEqual(
            records.filter((r) => r.id === "ipv4/web.internal").map((r) => r.op),
            ["wrote"],
            "the create's record stays open: its answer has not reached the engine yet",
        );
    });

    it("keeps the record durable before the line reaches the file", async () => {
        const journal = new CreateJournal(gone);
        const hostsWhenRecorded: string[] = [];
        const store = new HostsFileStore({
            lock: { timeoutMs: 5000, staleMs: 60_000 },
            journal: {
                flush: (real) => {
                    hostsWhenRecorded.push(readFileSync(file, "utf8"));
                    journal.flush(real);
                },
                discard: (real) => journal.discard(real),
            },
        });
        const provider = new HostEntryProvider(store, journal);
        const before = await readFile(file, "utf8");
        await provider.create(await inputs(provider, { address: "10.0.0.5", names: ["web.internal"] }));
        assert.deepEqual(hostsWhenRecorded, [before], "recorded once, while the file did not hold the line yet");
        assert.match(await readFile(file, "utf8"), /^10\.0\.0\.5\tweb\.internal$/m);
        const record = JSON.parse((await readFile(journalPathFor(file), "utf8")).trim());
        assert.deepEqual(record, {
            op: "wrote",
            id: "ipv4/web.internal",
            line: "10.0.0.5\tweb.internal",
            stack: STACK,
            writer: gone,
        });
    });

    it("fails a create whose record cannot be written, and writes nothing to the file", async () => {
        const journal = new CreateJournal(gone);
        const store = new HostsFileStore({
            lock: { timeoutMs: 5000, staleMs: 60_000 },
            journal: {
                flush: () => {
                    // EACCES too: the code that sends a write in place must not send this one there.
                    throw Object.assign(new Error("no space left for the journal"), { code: "EACCES" });
                },
                discard: (real) => journal.discard(real),
            },
        });
        const provider = new HostEntryProvider(store, journal);
        const before = await readFile(file, "utf8");
        await assert.rejects(
            provider.create(await inputs(provider, { address: "10.0.0.5", names: ["web.internal"] })),
            (error: Error) =>
                /The file was not changed/.test(error.message) && /for the journal/.test(`${error.cause}`),
        );
        assert.equal(await readFile(file, "utf8"), before);
        assert.deepEqual(
            (await readdir(temp.dir)).filter((name) => name.endsWith(".tmp")),
            [],
            "no temporary file is left",
        );
    });

    describe("read incrementally by each process (a refresh settles every entry)", () => {
        /** A process's journal that has recorded `ids` as written into `real` by a gone process. */
        function recorded(journal: CreateJournal, real: string, ids: string[]): void {
            for (const id of ids) journal.stage(real, id, `10.0.0.1\t${id}.internal\n`, STACK);
            journal.flush(real);
        }

        it("sees what another process appended since it last read", async () => {
            const writer = new CreateJournal(gone);
            const reader = new CreateJournal();
            recorded(writer, file, ["e1"]);
            assert.equal(reader.settle(file, new Set(["e1"])), "all settled", "e1 was all that was open");
            recorded(writer, file, ["e2", "e3"]);
            assert.equal(reader.settle(file, new Set(["e2"])), "still open", "e3 is still open");
            assert.equal(reader.settle(file, new Set(["e3"])), "all settled");
            const lines = (await readFile(journalPathFor(file), "utf8")).trim().split("\n");
            assert.deepEqual(
                lines.map((line) => `${JSON.parse(line).op} ${JSON.parse(line).id}`),
                ["wrote e1", "settled e1", "wrote e2", "wrote e3", "settled e2", "settled e3"],
            );
        });

        it("settles the entries of one batch together, leaving the others open", async () => {
            const writer = new CreateJournal(gone);
            const reader = new CreateJournal();
            recorded(writer, file, ["e1", "e2", "e3"]);
            assert.equal(reader.settle(file, new Set(["e1", "e3", "e9"])), "still open", "e2 is still open");
            assert.equal(reader.settle(file, new Set(["e2"])), "all settled");
            const lines = (await readFile(journalPathFor(file), "utf8")).trim().split("\n");
            assert.deepEqual(
                lines.map((line) => `${JSON.parse(line).op} ${JSON.parse(line).id}`),
                ["wrote e1", "wrote e2", "wrote e3", "settled e1", "settled e3", "settled e2"],
            );
        });

        it("counts what the file's other journal (this user's private one) settled as settled", async () => {
            const writer = new CreateJournal(gone);
            const reader = new CreateJournal();
            recorded(writer, file, ["e1", "e2"]);
            // A process that could not write beside the file settled e1 in its private journal.
            const other = privateJournalPathFor(file);
            await writeFile(other, `${JSON.stringify({ op: "settled", id: "e1", line: "10.0.0.1\te1.internal\n" })}\n`);
            try {
                assert.equal(reader.interruptedLine(file, "e1", STACK), undefined, "e1 is settled");
                assert.equal(reader.interruptedLine(file, "e2", STACK), "10.0.0.1\te2.internal\n");
                assert.equal(reader.settle(file, new Set(["e9"])), "still open", "e2 is still open");
                assert.equal(
                    reader.settle(file, new Set(["e2"])),
                    "all settled",
                    "e1 was settled in the other journal",
                );
            } finally {
                await rm(other, { force: true });
            }
        });

        it("reads a journal removed and written anew whole: nothing of the old one is kept", async () => {
            const writer = new CreateJournal(gone);
            const reader = new CreateJournal();
            recorded(writer, file, ["e1"]);
            assert.equal(reader.settle(file, new Set(["e1"])), "all settled");
            reader.removeIfSettled(file);
            assert.deepEqual(await readdir(temp.dir), ["hosts"]);
            // The same first record again (same writer, id and line), then more than the old journal held.
            recorded(writer, file, ["e1", "e2-with-a-longer-name-than-the-settled-record-had"]);
            assert.equal(
                reader.settle(file, new Set(["e1"])),
                "still open",
                "e1 is open again in the new journal, e2 too",
            );
            const lines = (await readFile(journalPathFor(file), "utf8")).trim().split("\n");
            assert.equal(lines.filter((line) => JSON.parse(line).op === "settled").length, 1);
        });

        it("takes a line whose append is under way only once it is whole", async () => {
            const reader = new CreateJournal();
            const record = JSON.stringify({
                op: "wrote",
                id: "e1",
                line: "10.0.0.1\te1\n",
                stack: STACK,
                writer: gone,
            });
            await writeFile(journalPathFor(file), record.slice(0, 20));
            assert.equal(reader.settle(file, new Set(["e1"])), "nothing recorded", "half a record is not one");
            await appendFile(journalPathFor(file), `${record.slice(20)}\n`);
            assert.equal(reader.settle(file, new Set(["e1"])), "all settled", "the whole record is read and settled");
        });
    });
});
