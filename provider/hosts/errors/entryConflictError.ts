import { LifecycleError } from "../../shared/errors/lifecycleError";
import { quote, shellQuote } from "../../shared/text";

/** A line of the file that already carries one of an entry's names. */
export interface ConflictingLine {
    /** 1-based line number. */
    readonly lineNumber: number;
    /** The line as written (UTF-8). */
    readonly text: string;
    /** Which of the entry's names the line carries. */
    readonly names: readonly string[];
}

/**
 * A name of the entry is already on another line of the same address family, and the entry is not in state. Says where (file, line, text) and how to adopt or resolve it.
 */
export class EntryConflictError extends LifecycleError {
    override readonly name = "EntryConflictError";

    constructor(
        readonly entry: string,
        readonly file: string,
        readonly conflicts: readonly ConflictingLine[],
        readonly operation: "create" | "update",
    ) {
        const where = conflicts
            .map((c) => `${c.names.map(quote).join(", ")} at line ${c.lineNumber}: ${quote(c.text)}`)
            .join("; ");
        const advice =
            operation === "create"
                ? "To manage the existing line, set `adopt: true` (the line must match address, names and comment " +
                  `exactly; \`npx pulumi-lifecycle hosts import --file ${shellQuote(file)}\` prints a matching declaration), ` +
                  "or remove the line from the file, or choose other names."
                : "Remove the name from that line, or from this entry's names.";
        super(
            `hosts entry ${entry} cannot be ${operation}d: ${file} already has ${where}. ` +
                `A name may appear on only one line per address family. ${advice}`,
        );
    }
}
