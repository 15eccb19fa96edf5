// A foreign writer of the multi-writer suite: a process that writes the hosts file without our lock, as
// other tools do.
// - `append`: `echo line >> file` (fs.appendFileSync: open with O_APPEND, one write, close).
// - `rewrite`: a read-modify-write tool in the style of `sed -i`: read the file, add a line of its own or
//   drop one it added earlier, write the result to a temporary file beside it and rename it over the
//   file; where that is impossible (a bind-mounted file: EBUSY; a directory it may not write: EACCES) it
//   truncates the file and writes it in place, as hostile does. Every other byte is written back as read
//   (unlike hostile, which reformats every line: that would say nothing about us).
// Logs to file descriptor 3, one write(2) a line:
//   append:  `b <n> <ns>` before the append, `w <n> <ns>` once it returned;
//   rewrite: `r <JSON of RewriteRecord>` once the write returned (its output, for the checks to tell what
//            a rewrite of this tool, rather than our writers, may have lost or written).
// Run by the harness as `node foreignWriter.js '<ForeignWriterConfig as JSON>'`; stops when a line
// arrives on stdin.

import {
    chmodSync,
    closeSync,
    openSync,
    readFileSync,
    renameSync,
    unlinkSync,
    writeFileSync,
    writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type * as RandomModule from "../../../provider/shared/random";
import { foreignLine } from "./lines";

/** What the harness tells a foreign writer. */
export interface ForeignWriterConfig {
    readonly dist: string;
    readonly kind: "append" | "rewrite";
    readonly file: string;
    readonly slot: number;
    readonly seed: number;
}

/** What one rewrite did, logged for the checks. */
export interface RewriteRecord {
    /** Monotonic ns just before it read the file and just after its write returned. */
    readonly readAt: string;
    readonly wroteAt: string;
    readonly method: "rename" | "in-place";
    /** The line number `n` it added, or removed. */
    readonly added?: number;
    readonly removed?: number;
    /** Everything it wrote, one character per byte. */
    readonly output: string;
}

const LOG_FD = 3;
const now = () => process.hrtime.bigint().toString();
const log = (line: string) => writeSync(LOG_FD, `${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rename errors after which a tool writes the file in place instead. */
const RENAME_REFUSED = new Set(["EBUSY", "EXDEV", "EACCES", "EPERM"]);

function writeBack(file: string, output: string): "rename" | "in-place" {
    const temporary = join(dirname(file), `.${basename(file)}.sed${process.pid}`);
    try {
        writeFileSync(temporary, output, { encoding: "latin1", mode: 0o666 });
        chmodSync(temporary, 0o666);
        renameSync(temporary, file);
        return "rename";
    } catch (error) {
        if (!RENAME_REFUSED.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
        try {
            unlinkSync(temporary);
        } catch {
            // Never created (a directory it may not write).
        }
        // O_TRUNC, then one write: a reader in between sees an empty or short file, as with hostile.
        const fd = openSync(file, "w");
        try {
            writeSync(fd, output, 0, "latin1");
        } finally {
            closeSync(fd);
        }
        return "in-place";
    }
}

async function main(config: ForeignWriterConfig): Promise<void> {
    const { seededRandom } = require(join(config.dist, "shared", "random.js")) as typeof RandomModule;
    const random = seededRandom(config.seed);
    let stopping = false;
    process.stdin.on("data", () => {
        stopping = true;
    });
    process.stdin.on("end", () => {
        stopping = true;
    });
    const mine: number[] = [];
    for (let n = 0; !stopping; n++) {
        if (config.kind === "append") {
            log(`b ${n} ${now()}`);
            writeFileSync(config.file, `${foreignLine("append", config.slot, n)}\n`, { flag: "a" });
            log(`w ${n} ${now()}`);
            await sleep(3 + Math.floor(random() * 25));
            continue;
        }
        await sleep(20 + Math.floor(random() * 60));
        const readAt = now();
        const input = readFileSync(config.file, "latin1");
        const lines = input.split("\n");
        const seen = mine.filter((m) => lines.includes(foreignLine("rewrite", config.slot, m)));
        let output: string;
        let change: { added: number } | { removed: number };
        if (seen.length > 0 && random() < 0.3) {
            const removed = seen[Math.floor(random() * seen.length)] as number;
            const index = lines.indexOf(foreignLine("rewrite", config.slot, removed));
            output = [...lines.slice(0, index), ...lines.slice(index + 1)].join("\n");
            mine.splice(mine.indexOf(removed), 1);
            change = { removed };
        } else {
            const separator = input === "" || input.endsWith("\n") ? "" : "\n";
            output = `${input}${separator}${foreignLine("rewrite", config.slot, n)}\n`;
            mine.push(n);
            change = { added: n };
        }
        const method = writeBack(config.file, output);
        const record: RewriteRecord = { readAt, wroteAt: now(), method, ...change, output };
        log(`r ${JSON.stringify(record)}`);
    }
    process.exit(0);
}

main(JSON.parse(process.argv[2] as string) as ForeignWriterConfig).catch((error: unknown) => {
    process.stderr.write(`foreign writer crashed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(70);
});
