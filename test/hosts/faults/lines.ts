// The lines the writers of the multi-writer suite put in the hosts file. Each is built from its writer
// and a counter, so a line read back is either exactly the line some writer wrote (and names it) or not
// a whole line at all (torn). Shared by the writer processes and the checks; imports nothing but types.

/** Who wrote a line: a lock-using writer's entry, a foreign append, or a foreign rewrite's own line. */
export type LineKind = "entry" | "append" | "rewrite";

/** A line some writer wrote, by its key: `w<slot>-<gen>-<n>`, `a<slot>-<n>` or `r<slot>-<n>`. */
export interface KnownLine {
    readonly kind: LineKind;
    readonly key: string;
}

/** The entry a lock-using writer creates: slot, process generation (restart count) and counter. */
export function entryOf(slot: number, gen: number, n: number): { address: string; names: string[] } {
    return { address: `10.${slot}.${gen % 256}.${n % 256}`, names: [entryName(slot, gen, n)] };
}

/** The name of that entry. */
export function entryName(slot: number, gen: number, n: number): string {
    return `w${slot}-${gen}-${n}.test`;
}

/** The key of that entry's line. */
export function entryKey(slot: number, gen: number, n: number): string {
    return `w${slot}-${gen}-${n}`;
}

/** The line the package writes for that entry (its renderLine: address, a tab, the name). */
export function entryLine(slot: number, gen: number, n: number): string {
    const { address, names } = entryOf(slot, gen, n);
    return `${address}\t${names.join(" ")}`;
}

/** A line a foreign writer adds: `append` as `echo >>` does, `rewrite` as a read-modify-write tool. */
export function foreignLine(kind: "append" | "rewrite", slot: number, n: number): string {
    const octet = kind === "append" ? 250 : 251;
    return `10.${octet}.${slot}.${n % 256}\tforeign-${kind === "append" ? "a" : "r"}${slot}-${n}.test`;
}

/** The key of a foreign line. */
export function foreignKey(kind: "append" | "rewrite", slot: number, n: number): string {
    return `${kind === "append" ? "a" : "r"}${slot}-${n}`;
}

const SHAPE = /^10\.\d+\.\d+\.\d+\t(?:w(\d+)-(\d+)-(\d+)|foreign-([ar])(\d+)-(\d+))\.test$/;

/**
 * The writer's line `text` is, or undefined when it is not exactly a line some writer would write (a torn
 * line, or two glued together): the line is rebuilt from the numbers it names and must be identical.
 */
export function knownLine(text: string): KnownLine | undefined {
    const match = SHAPE.exec(text);
    if (!match) return undefined;
    const [, slot, gen, n, foreign, fslot, fn] = match;
    if (slot !== undefined) {
        const [s, g, i] = [Number(slot), Number(gen), Number(n)];
        return entryLine(s, g, i) === text ? { kind: "entry", key: entryKey(s, g, i) } : undefined;
    }
    const kind = foreign === "a" ? "append" : "rewrite";
    const [s, i] = [Number(fslot), Number(fn)];
    return foreignLine(kind, s, i) === text ? { kind, key: foreignKey(kind, s, i) } : undefined;
}
