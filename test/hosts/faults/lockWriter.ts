// A lock-using writer of the multi-writer suite: a process that uses the package's HostsFileStore from
// dist/ through its public API, as a program would, creating and deleting its own entries on a few lanes
// at once. Every operation is logged to file descriptor 3 (a file the harness opened, so any uid may
// write it) with one write(2) each, unbuffered: `b` before the operation is issued, then `a` only after
// the store's promise resolved, or `f` when it rejected. A SIGKILL can only lose the line of an answer not
// yet logged; that operation then counts as in flight (its line may or may not be in the file).
//
// Log lines: `<event><op> <n> <monotonic ns> [detail]`, event b|a|f, op + (create) or - (delete); a
// delete's `a` carries 1 when the line was there to remove, 0 when it was already gone (`0 undone` when
// an earlier attempt of its batch was in the file for a moment, then undone); the first failure
// of each kind is explained once as `e <failure> <JSON message>`.
// Run by the harness as `node lockWriter.js '<LockWriterConfig as JSON>'` (transpiled, see harness.ts).
// Stops after its current operations when a line arrives on stdin.

import { writeSync } from "node:fs";
import { join } from "node:path";
import type * as StoreModule from "../../../provider/hosts/io/hostsFileStore";
import type * as EntriesModule from "../../../provider/hosts/logic/entries";
import type * as RandomModule from "../../../provider/shared/random";
import { entryOf } from "./lines";

/** What the harness tells a lock-using writer. */
export interface LockWriterConfig {
    /** The package's build output (dist/) whose store this writer uses. */
    readonly dist: string;
    readonly file: string;
    readonly slot: number;
    /** Restart count of this slot: its entries' names never repeat across restarts. */
    readonly gen: number;
    readonly seed: number;
    /** Operations in flight at once (the store coalesces those that meet). */
    readonly lanes: number;
    readonly lock: { readonly timeoutMs: number; readonly staleMs: number };
    /** Create one entry and exit (the recovery run after the faults). */
    readonly once?: boolean;
}

const LOG_FD = 3;

function log(event: string, n: number, detail?: string): void {
    const time = process.hrtime.bigint().toString();
    writeSync(LOG_FD, `${event} ${n} ${time}${detail === undefined ? "" : ` ${detail}`}\n`);
}

/** Failure messages logged so far (`e <code> <JSON message>`): the first of each code is enough. */
const explained = new Set<string>();

/** A short name for a failure: the error class and errno-style code, no spaces. */
function failureOf(error: unknown): string {
    const name = (error as { name?: unknown })?.name;
    const code = (error as { code?: unknown })?.code;
    const failure = `${typeof name === "string" ? name : "Error"}:${typeof code === "string" ? code : "-"}`.replace(
        /\s/g,
        "_",
    );
    if (!explained.has(failure)) {
        explained.add(failure);
        // The cause says which system call on which path failed (a store's error says what to do instead).
        const cause = error instanceof Error && error.cause instanceof Error ? ` (cause: ${error.cause.message})` : "";
        const message = error instanceof Error ? `${error.message}${cause}` : String(error);
        writeSync(LOG_FD, `e ${failure} ${JSON.stringify(message.slice(0, 900))}\n`);
    }
    return failure;
}

async function main(config: LockWriterConfig): Promise<void> {
    const { HostsFileStore } = require(join(config.dist, "hosts", "io", "hostsFileStore.js")) as typeof StoreModule;
    const { createEntry, deleteEntry, identityOf, renderLine } = require(
        join(config.dist, "hosts", "logic", "entries.js"),
    ) as typeof EntriesModule;
    const { seededRandom } = require(join(config.dist, "shared", "random.js")) as typeof RandomModule;

    const store = new HostsFileStore({ lock: { timeoutMs: config.lock.timeoutMs, staleMs: config.lock.staleMs } });
    const random = seededRandom(config.seed);
    const file = config.file;
    /** Entries this process created and whose creation was acknowledged, not being deleted. */
    const present: number[] = [];
    let next = 0;
    let stopping = false;
    process.stdin.on("data", () => {
        stopping = true;
    });
    process.stdin.on("end", () => {
        stopping = true;
    });

    const create = async () => {
        const n = next++;
        const entry = entryOf(config.slot, config.gen, n);
        log("b+", n);
        try {
            await store.edit(file, (doc, attempt) => {
                // As the provider does: this batch's own undone attempt, copied back by a rewriting tool, is ours.
                const rendered = renderLine(entry);
                const interruptedLine = attempt.shownLines.has(rendered) ? rendered : undefined;
                createEntry(doc, entry, { adopt: false, file, interruptedLine });
                return () => undefined;
            });
        } catch (error) {
            log("f+", n, failureOf(error));
            return;
        }
        log("a+", n);
        present.push(n);
    };
    const remove = async () => {
        const n = present.splice(Math.floor(random() * present.length), 1)[0] as number;
        const identity = identityOf(entryOf(config.slot, config.gen, n));
        log("b-", n);
        let found: boolean;
        let undone = false;
        try {
            found = await store.edit(file, (doc, attempt) => {
                undone = attempt.followsShownAttempt;
                const removed = deleteEntry(doc, identity);
                return () => removed;
            });
        } catch (error) {
            log("f-", n, failureOf(error));
            return;
        }
        log("a-", n, found ? "1" : undone ? "0 undone" : "0");
    };

    if (config.once) {
        await create();
        process.exit(0);
    }
    const lane = async () => {
        while (!stopping) {
            if (present.length > 0 && random() < 0.3) await remove();
            else await create();
            await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 4)));
        }
    };
    await Promise.all(Array.from({ length: config.lanes }, lane));
    process.exit(0);
}

main(JSON.parse(process.argv[2] as string) as LockWriterConfig).catch((error: unknown) => {
    process.stderr.write(`lock writer crashed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(70);
});
