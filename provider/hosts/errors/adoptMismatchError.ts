import { LifecycleError } from "../../shared/errors/lifecycleError";
import { quote } from "../../shared/text";
import type { ConflictingLine } from "./entryConflictError";

/** One field in which an existing line differs from the entry a program declares. */
export interface FieldDifference {
    readonly field: "address" | "names" | "comment";
    readonly inFile: string | readonly string[] | undefined;
    readonly inProgram: string | readonly string[] | undefined;
}

/**
 * `adopt: true` found the entry's names in the file, but not on one line identical to the entry.
 * Names each difference, so the user can fix either side.
 */
export class AdoptMismatchError extends LifecycleError {
    override readonly name = "AdoptMismatchError";

    constructor(
        readonly entry: string,
        readonly file: string,
        readonly lines: readonly ConflictingLine[],
        readonly differences: readonly FieldDifference[],
    ) {
        const [only] = lines;
        const detail =
            lines.length === 1 && only
                ? `the line ${only.lineNumber} ${quote(only.text)} differs from the program: ` +
                  differences
                      .map((d) => `${d.field}: the file has ${show(d.inFile)}, the program has ${show(d.inProgram)}`)
                      .join("; ")
                : `its names are on ${lines.length} lines (${lines
                      .map((l) => `line ${l.lineNumber}: ${quote(l.text)}`)
                      .join("; ")}), and adopt takes over exactly one identical line`;
        super(
            `hosts entry ${entry} cannot adopt an existing line of ${file}: ${detail}. ` +
                "Change the program to match the file (`npx pulumi-lifecycle hosts import` prints the declaration), " +
                "or edit the file, or remove the line and let Pulumi create it.",
        );
    }
}

function show(value: string | readonly string[] | undefined): string {
    if (value === undefined) return "none";
    if (typeof value === "string") return quote(value);
    return `[${value.join(", ")}]`;
}
