// The invariants of the multi-writer suite, checked on the file after the run against what every writer
// logged:
// 1. every entry a lock-using writer had acknowledged is in the file, whole, exactly once, unless that
//    writer later acknowledged its deletion (then it is gone); an operation without an answer (its
//    process was killed, or the store rejected it) leaves its line at most once;
// 2. so no lock-using writer's line is lost to another, and the base's bytes are the file's first bytes,
//    unchanged;
// 3. every other line is a whole line some writer wrote (no torn line, no base line repeated);
// 4. foreign writers' lines may be lost (counted, never asserted).
// A foreign read-modify-write tool can itself drop, revive, tear or repeat lines it did not write (it
// writes back what it read, even mid-way through someone's in-place write). Such a finding is excused, and
// counted as excused, only when one of its logged rewrites could have caused it: its output lacks (or
// holds) that line and its read-to-write span overlaps the operation, or its output holds the same torn or
// repeated line. Two more ways belong to a tool that rewrites in place (O_TRUNC, then write), which the
// README documents as beyond any lock: its read, taken while a lock-using writer's in-place write was half
// done, copies that write's intermediate state, in which lines after the change are shifted or torn (so
// its output lacks a line, whenever that line was written); and between its truncation and its write the
// file is empty or short for everyone, a lock-using writer included, whose delete then finds nothing to
// delete. And a rewrite that read a lock-using writer's attempt in the moment it was in place, before it
// was undone (a tool had written into the file its rename replaced), copies that attempt: the retry finds
// its deletion already done (logged `0 undone`). Damage to the base is never excused (see below).

import { viewOf } from "./fileView";
import type { RewriteRecord } from "./foreignWriter";
import { entryKey, entryLine, foreignKey, foreignLine, knownLine } from "./lines";

/** What one lock-using writer process logged. */
export interface LockWriterLog {
    readonly slot: number;
    readonly gen: number;
    readonly lines: readonly string[];
}

/** What one foreign writer logged. */
export interface ForeignWriterLog {
    readonly slot: number;
    readonly kind: "append" | "rewrite";
    readonly lines: readonly string[];
}

/** The counts a run prints. */
export interface Counts {
    acknowledged: { creates: number; deletes: number };
    failed: Map<string, number>;
    /** The first message of each kind of failure. */
    failureMessages: Map<string, string>;
    cutByKill: number;
    failedCreatesInFile: number;
    appended: number;
    appendedLost: number;
    rewrites: { rename: number; inPlace: number };
    rewriteLinesAdded: number;
    rewriteLinesLost: number;
    checks: number;
    excused: number;
}

export interface Verdict {
    readonly counts: Counts;
    readonly violations: string[];
}

interface Rewrite {
    readonly readAt: bigint;
    readonly wroteAt: bigint;
    readonly lines: Map<string, number>;
    readonly record: RewriteRecord;
}

type Status =
    | { readonly state: "present"; readonly beginAt: bigint; readonly ackAt: bigint }
    | { readonly state: "deleted"; readonly beginAt: bigint; readonly ackAt: bigint }
    | { readonly state: "unknown"; readonly failed: boolean };

/** Checks the final file `text` against `base` and the writers' logs. */
export function checkFinalFile(
    text: string,
    base: string,
    lockLogs: readonly LockWriterLog[],
    foreignLogs: readonly ForeignWriterLog[],
): Verdict {
    const counts: Counts = {
        acknowledged: { creates: 0, deletes: 0 },
        failed: new Map(),
        failureMessages: new Map(),
        cutByKill: 0,
        failedCreatesInFile: 0,
        appended: 0,
        appendedLost: 0,
        rewrites: { rename: 0, inPlace: 0 },
        rewriteLinesAdded: 0,
        rewriteLinesLost: 0,
        checks: 0,
        excused: 0,
    };
    const violations: string[] = [];
    const rewrites = foreignLogs.filter((log) => log.kind === "rewrite").flatMap((log) => parseRewrites(log));
    const view = viewOf(text, base);
    /** Records a check; a failure is a violation unless `excuse` names a rewrite that explains it. */
    const check = (ok: boolean, what: () => string, excuse?: () => boolean) => {
        counts.checks++;
        if (ok) return;
        if (excuse?.()) counts.excused++;
        else violations.push(what());
    };

    // Invariant 2 (the base) and 3 (whole lines).
    // Never excused: a rewrite writes back the base as it read it, and no other writer changes the base's
    // bytes even for a moment (an in-place write rewrites them with the same bytes; the one rewriter's own
    // truncation never overlaps its own read), so a rewrite only ever copies a base someone else damaged.
    check(view.baseIntact, () => "the base file's bytes are no longer the file's first bytes, unchanged");
    for (const line of view.torn) {
        check(
            false,
            () => `a torn line (no writer wrote it whole): ${JSON.stringify(line)}`,
            () => rewroteLine(rewrites, line) || afterCopiedZeros(rewrites, line),
        );
    }
    for (const line of view.baseRepeated) {
        check(
            false,
            () => `a base line appears again after the base: ${JSON.stringify(line)}`,
            () => rewroteLine(rewrites, line),
        );
    }
    check(
        view.unterminated === undefined,
        () => `the file's last line has lost its line ending: ${JSON.stringify(view.unterminated)}`,
        () => rewrites.some((r) => !r.record.output.endsWith("\n")),
    );

    // Invariant 1, per lock-using writer process.
    const begun = new Set<string>();
    const windows = operationWindows(lockLogs);
    const lacks = (line: string, entry: { beginAt: bigint; ackAt: bigint }) =>
        dropped(rewrites, line, entry) || copiedMidWrite(rewrites, line, entry, windows);
    for (const log of lockLogs) {
        for (const [n, status] of statuses(log, counts, violations, rewrites, lacks)) {
            const key = entryKey(log.slot, log.gen, n);
            const line = entryLine(log.slot, log.gen, n);
            begun.add(key);
            const found = view.counts.get(key) ?? 0;
            const who = `entry ${key} (writer ${log.slot}, process ${log.gen})`;
            if (status.state === "present") {
                check(
                    found === 1,
                    () => `${who}: acknowledged as created, found ${found} times in the file (expected once)`,
                    () => (found === 0 ? lacks(line, status) : repeated(rewrites, line)),
                );
            } else if (status.state === "deleted") {
                check(
                    found === 0,
                    () => `${who}: acknowledged as deleted, yet found ${found} times in the file`,
                    // A rewrite that wrote the line twice leaves a copy a delete of the entry's own line does not take.
                    () => revived(rewrites, line, status) || repeated(rewrites, line),
                );
            } else {
                if (status.failed && found > 0) counts.failedCreatesInFile++;
                check(
                    found <= 1,
                    () => `${who}: its operation got no answer, and it is in the file ${found} times`,
                    () => repeated(rewrites, line),
                );
            }
        }
    }

    // Foreign writers (invariant 4: counted), and lines nobody began.
    for (const log of foreignLogs) {
        if (log.kind === "append") {
            for (const line of log.lines) {
                const [event, n] = line.split(" ");
                if (event === "b") begun.add(foreignKey("append", log.slot, Number(n)));
                if (event !== "w") continue;
                counts.appended++;
                const found = view.counts.get(foreignKey("append", log.slot, Number(n))) ?? 0;
                if (found === 0) counts.appendedLost++;
                check(
                    found <= 1,
                    () => `foreign line a${log.slot}-${n} is in the file ${found} times`,
                    () => repeated(rewrites, foreignLine("append", log.slot, Number(n))),
                );
            }
        } else {
            const kept = new Set<number>();
            for (const { record } of parseRewrites(log)) {
                if (record.method === "rename") counts.rewrites.rename++;
                else counts.rewrites.inPlace++;
                if (record.added !== undefined) {
                    counts.rewriteLinesAdded++;
                    kept.add(record.added);
                    begun.add(foreignKey("rewrite", log.slot, record.added));
                }
                if (record.removed !== undefined) kept.delete(record.removed);
            }
            for (const n of kept) {
                const found = view.counts.get(foreignKey("rewrite", log.slot, n)) ?? 0;
                if (found === 0) counts.rewriteLinesLost++;
            }
        }
    }
    for (const [key, found] of view.counts) {
        check(begun.has(key), () => `a line ${key} that no writer began to write is in the file ${found} times`);
    }
    return { counts, violations };
}

/** The status of each entry of one lock-using writer process, from its log. */
function statuses(
    log: LockWriterLog,
    counts: Counts,
    violations: string[],
    rewrites: readonly Rewrite[],
    lacks: (line: string, entry: { beginAt: bigint; ackAt: bigint }) => boolean,
): Map<number, Status> {
    const result = new Map<number, Status>();
    const begins = new Map<string, bigint>();
    /** When each acknowledged create began and was answered, kept while its delete runs. */
    const created = new Map<number, { beginAt: bigint; ackAt: bigint }>();
    for (const text of log.lines) {
        const [event, nText, timeText, detail, note] = text.split(" ") as [
            string,
            string,
            string,
            string | undefined,
            string | undefined,
        ];
        if (event === "e") {
            const message = JSON.parse(text.slice(3 + nText.length)) as string;
            if (!counts.failureMessages.has(nText)) counts.failureMessages.set(nText, message);
            continue;
        }
        const n = Number(nText);
        const at = BigInt(timeText);
        const key = entryKey(log.slot, log.gen, n);
        switch (event) {
            case "b+":
            case "b-":
                begins.set(`${event[1]}${n}`, at);
                result.set(n, { state: "unknown", failed: false });
                break;
            case "a+":
                counts.acknowledged.creates++;
                created.set(n, { beginAt: begins.get(`+${n}`) ?? at, ackAt: at });
                result.set(n, { state: "present", beginAt: begins.get(`+${n}`) ?? at, ackAt: at });
                break;
            case "a-": {
                counts.acknowledged.deletes++;
                counts.checks++;
                if (detail !== "1") {
                    // The line was gone before its writer deleted it: an acknowledged entry was lost meanwhile.
                    const creation = created.get(n);
                    const deletion = { beginAt: begins.get(`-${n}`) ?? at, ackAt: at };
                    const excused =
                        (creation !== undefined && lacks(entryLine(log.slot, log.gen, n), creation)) ||
                        truncatedDuring(rewrites, deletion) ||
                        (note === "undone" && copiedUndoneAttempt(rewrites, entryLine(log.slot, log.gen, n), deletion));
                    if (excused) counts.excused++;
                    else
                        violations.push(
                            `entry ${key}: acknowledged as created, but already gone when its writer deleted it`,
                        );
                }
                result.set(n, { state: "deleted", beginAt: begins.get(`-${n}`) ?? at, ackAt: at });
                break;
            }
            case "f+":
            case "f-":
                counts.failed.set(detail ?? "?", (counts.failed.get(detail ?? "?") ?? 0) + 1);
                result.set(n, { state: "unknown", failed: true });
                // Names never repeat, so the only line a create can conflict with is one it wrote itself.
                if (event === "f+" && detail?.startsWith("EntryConflictError")) {
                    violations.push(`entry ${key}: its create failed on a line of its own name, which only it wrote`);
                }
                break;
            default:
                if (text !== "")
                    violations.push(
                        `writer ${log.slot} process ${log.gen} logged a line the checks do not know: ${text}`,
                    );
        }
    }
    // A create or delete begun and never answered: its process was killed meanwhile (the writers stop
    // only between operations), so its line may or may not be in the file.
    for (const status of result.values()) if (status.state === "unknown" && !status.failed) counts.cutByKill++;
    return result;
}

function parseRewrites(log: ForeignWriterLog): Rewrite[] {
    return log.lines
        .filter((line) => line.startsWith("r "))
        .map((line) => {
            const record = JSON.parse(line.slice(2)) as RewriteRecord;
            const lines = new Map<string, number>();
            for (const text of record.output.split("\n")) lines.set(text, (lines.get(text) ?? 0) + 1);
            return { readAt: BigInt(record.readAt), wroteAt: BigInt(record.wroteAt), lines, record };
        });
}

/** A rewrite wrote `line` (torn, or a base line out of place) itself. */
function rewroteLine(rewrites: readonly Rewrite[], line: string): boolean {
    return rewrites.some((r) => r.lines.has(line));
}

/**
 * `line` is NUL bytes, then nothing or a whole line some writer wrote, and a rewrite wrote NUL bytes: it
 * copied the zeros an in-place write's cut leaves for a moment, and what was appended next followed them
 * on their line (the store keeps such a line, which resolvers read as empty, rather than lock out).
 */
function afterCopiedZeros(rewrites: readonly Rewrite[], line: string): boolean {
    const rest = /^\0+(.*)$/s.exec(line)?.[1];
    if (rest === undefined || (rest !== "" && knownLine(rest) === undefined)) return false;
    return rewrites.some((r) => r.record.output.includes("\0"));
}

/** A rewrite wrote `line` twice. */
function repeated(rewrites: readonly Rewrite[], line: string): boolean {
    return rewrites.some((r) => (r.lines.get(line) ?? 0) >= 2);
}

/** A rewrite that read before the entry was acknowledged wrote, after it was begun, a file without it. */
function dropped(rewrites: readonly Rewrite[], line: string, entry: { beginAt: bigint; ackAt: bigint }): boolean {
    return rewrites.some((r) => r.readAt < entry.ackAt && r.wroteAt > entry.beginAt && !r.lines.has(line));
}

/** When each lock-using operation ran, begin to answer, over every writer: in-place writes happen inside. */
function operationWindows(lockLogs: readonly LockWriterLog[]): { from: bigint; to: bigint }[] {
    const windows: { from: bigint; to: bigint }[] = [];
    for (const log of lockLogs) {
        const begins = new Map<string, bigint>();
        for (const text of log.lines) {
            const [event, n, time] = text.split(" ");
            if (!event || !n || !time || !/^\d+$/.test(time)) continue;
            if (event === "b+" || event === "b-") begins.set(`${event[1]}${n}`, BigInt(time));
            else if (event[0] === "a" || event[0] === "f") {
                const from = begins.get(`${event[1]}${n}`);
                if (from !== undefined) windows.push({ from, to: BigInt(time) });
            }
        }
    }
    return windows;
}

/**
 * An in-place rewrite that read while a lock-using operation was under way (its write half done) wrote,
 * after the entry was begun, a file without the entry's line.
 */
function copiedMidWrite(
    rewrites: readonly Rewrite[],
    line: string,
    entry: { beginAt: bigint; ackAt: bigint },
    windows: readonly { from: bigint; to: bigint }[],
): boolean {
    return rewrites.some(
        (r) =>
            r.record.method === "in-place" &&
            r.wroteAt > entry.beginAt &&
            !r.lines.has(line) &&
            windows.some((w) => w.from <= r.readAt && r.readAt <= w.to),
    );
}

/** An in-place rewrite truncated the file (just before its write) while the deletion ran. */
function truncatedDuring(rewrites: readonly Rewrite[], deletion: { beginAt: bigint; ackAt: bigint }): boolean {
    return rewrites.some(
        (r) => r.record.method === "in-place" && r.readAt <= deletion.ackAt && r.wroteAt >= deletion.beginAt,
    );
}

/**
 * A rewrite that read while the deletion ran wrote a file without the line: it may have copied the
 * deletion's own first attempt, which was in the file for a moment before it was undone (a tool had written
 * into the file it replaced), so the retry found the line already gone.
 */
function copiedUndoneAttempt(
    rewrites: readonly Rewrite[],
    line: string,
    deletion: { beginAt: bigint; ackAt: bigint },
): boolean {
    return rewrites.some((r) => r.readAt > deletion.beginAt && r.readAt < deletion.ackAt && !r.lines.has(line));
}

/** A rewrite that read before the deletion was acknowledged wrote the line back after it was begun. */
function revived(rewrites: readonly Rewrite[], line: string, deletion: { beginAt: bigint; ackAt: bigint }): boolean {
    return rewrites.some((r) => r.readAt < deletion.ackAt && r.wroteAt > deletion.beginAt && r.lines.has(line));
}
