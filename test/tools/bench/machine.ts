// What a benchmark ran on, printed above its table so figures are never quoted without their machine.

import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";

/** One line describing the machine and runtime. */
export function machineLine(): string {
    const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
    return `${cpu}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}`;
}

/** Peak resident memory of a live process in MB (Linux /proc), or undefined elsewhere. */
export function peakRssMb(pid: number): number | undefined {
    try {
        const status = readFileSync(`/proc/${pid}/status`, "utf8");
        const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
        return Number.isFinite(kb) ? kb / 1024 : undefined;
    } catch {
        return undefined;
    }
}

/** CPU time (user + system) a live process has used, in seconds (Linux /proc), or undefined elsewhere. */
export function cpuSeconds(pid: number): number | undefined {
    try {
        // Fields 14 and 15 of /proc/<pid>/stat, counted after the command name's closing parenthesis.
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const ticks = Number(fields[11]) + Number(fields[12]);
        return Number.isFinite(ticks) ? ticks / CLOCK_TICKS_PER_SECOND : undefined;
    } catch {
        return undefined;
    }
}

/** USER_HZ, 100 on every Linux architecture Node.js runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** Formats a table: a header row and data rows, columns right-aligned. */
export function table(header: string[], rows: string[][]): string {
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
    const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join("  ");
    return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
