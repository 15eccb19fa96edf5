// How the checks of the multi-writer suite read a hosts file: is the base still there byte for byte, and
// is every other line exactly a line some writer wrote (which one), or torn.

import { type KnownLine, knownLine } from "./lines";

/** A file's content as the checks see it. */
export interface FileView {
    /** The base file's bytes are the file's first bytes, unchanged, and its last line is not extended. */
    readonly baseIntact: boolean;
    /** How often each writer's line (by key) is in the file. */
    readonly counts: ReadonlyMap<string, number>;
    /** Lines that are neither a base line in place nor a whole line some writer wrote. */
    readonly torn: readonly string[];
    /** Base lines found again after the base. */
    readonly baseRepeated: readonly string[];
    /** The file's last line when it has no line ending where the base implies one (a cut write). */
    readonly unterminated: string | undefined;
    /** The known lines in file order. */
    readonly known: readonly KnownLine[];
}

/** Reads `text` (one character per byte) against `base`, the file's content before the run. */
export function viewOf(text: string, base: string): FileView {
    const baseLines = new Set(base.split("\n"));
    const baseEndsLine = base === "" || base.endsWith("\n");
    let baseIntact = text.startsWith(base);
    let rest: string;
    if (baseIntact && !baseEndsLine && text.length > base.length && text[base.length] !== "\n") {
        // Something was glued to the base's last line (it has no final newline).
        baseIntact = false;
    }
    if (baseIntact) {
        rest = text.slice(base.length);
        if (!baseEndsLine && rest !== "") rest = rest.slice(1);
    } else {
        rest = text;
    }
    const lines = rest === "" ? [] : rest.split("\n");
    let unterminated: string | undefined;
    if (lines.length > 0) {
        const last = lines.pop() as string;
        // A base without a final newline keeps its appended lines that way (the package's promise); with
        // one, every whole line written ends with one.
        if (baseEndsLine || !baseIntact) {
            if (last !== "") unterminated = last;
        } else {
            lines.push(last);
            if (last === "") unterminated = "";
        }
    }
    const counts = new Map<string, number>();
    const known: KnownLine[] = [];
    const torn: string[] = [];
    const baseRepeated: string[] = [];
    for (const line of unterminated ? [...lines, unterminated] : lines) {
        const found = knownLine(line);
        if (found) {
            counts.set(found.key, (counts.get(found.key) ?? 0) + 1);
            known.push(found);
        } else if (!baseIntact && baseLines.has(line)) {
            // The base is damaged: its lines are wherever they are.
        } else if (baseIntact && baseLines.has(line)) {
            baseRepeated.push(line);
        } else {
            torn.push(line);
        }
    }
    return { baseIntact, counts, torn, baseRepeated, unterminated, known };
}

/** Whether a view shows anything but whole lines and an intact base. */
export function isWhole(view: FileView): boolean {
    return (
        view.baseIntact && view.torn.length === 0 && view.baseRepeated.length === 0 && view.unterminated === undefined
    );
}
