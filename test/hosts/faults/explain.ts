// Explains a finding of a kept multi-writer run (soak.ts --keep, or MULTI_WRITER_KEEP=1): the timeline of
// one entry (its writer's operations on it) among what the harness did (starts, SIGKILL, SIGSTOP,
// SIGCONT) and what every other writer logged meanwhile, on the writers' shared monotonic clock.
//
//   node -r ts-node/register/transpile-only test/hosts/faults/explain.ts <run directory> <entry key, e.g. w3-0-49>

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

function main(directory: string, key: string): void {
    const match = /^w(\d+)-(\d+)-(\d+)$/.exec(key);
    if (!match) throw new Error(`${key} is not an entry key (w<slot>-<gen>-<n>)`);
    const [, slot, gen, n] = match;
    const logs = join(directory, "logs");
    const own = readFileSync(join(logs, `w${slot}.${gen}.log`), "utf8").split("\n");
    const mine = own.filter((line) => new RegExp(`^[abf][+-] ${n} `).test(line));
    const times = mine.map((line) => BigInt(line.split(" ")[2] as string));
    if (times.length === 0) throw new Error(`w${slot}.${gen}.log has nothing on entry ${n}`);
    const from = (times[0] as bigint) - 100_000_000n;
    const to = (times[times.length - 1] as bigint) + 20_000_000n;
    const timeline: [bigint, string][] = [];
    for (const name of readdirSync(logs)) {
        for (const line of readFileSync(join(logs, name), "utf8").split("\n")) {
            const at = timeOf(name, line);
            if (at === undefined || at < from || at > to) continue;
            const mark = name === `w${slot}.${gen}.log` && mine.includes(line) ? ">>" : "  ";
            timeline.push([at, `${mark} ${name.replace(/\.log$/, "").padEnd(8)} ${describe(line)}`]);
        }
    }
    timeline.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [at, text] of timeline) console.log(`${(Number(at - from) / 1e6).toFixed(3).padStart(9)} ms ${text}`);
}

function timeOf(name: string, line: string): bigint | undefined {
    if (line === "") return undefined;
    if (name === "harness.log") return BigInt(line.split(" ")[0] as string);
    if (line.startsWith("r ")) return BigInt((JSON.parse(line.slice(2)) as { wroteAt: string }).wroteAt);
    const parts = line.split(" ");
    return /^[abfw]/.test(line) && parts[2] !== undefined && /^\d+$/.test(parts[2]) ? BigInt(parts[2]) : undefined;
}

function describe(line: string): string {
    if (!line.startsWith("r ")) return line.replace(/^(\S+ \S+) \d+/, "$1").replace(/^\d+ /, "");
    const record = JSON.parse(line.slice(2)) as { readAt: string; method: string; added?: number; removed?: number };
    const change = record.added !== undefined ? `added ${record.added}` : `removed ${record.removed}`;
    return `rewrite by ${record.method} (${change}), read at ${record.readAt}`;
}

main(process.argv[2] as string, process.argv[3] as string);
