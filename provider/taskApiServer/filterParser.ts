// Reads and applies the `filter` query parameter of the datastore list (grammar: tasks/protocol/filter.ts).
// Server-only: a client only writes filters. Pure: text in, clauses out; clauses and a datastore in, a
// boolean out.

import { FILTER_FIELDS, type Filter, type FilterClause, type FilterField, quoteValue } from "../tasks/protocol/filter";
import type { DatastoreRecord } from "../tasks/protocol/wire";
import { FilterSyntaxError } from "./filterSyntaxError";

const EXPECTED_FIELD = `a field name (${FILTER_FIELDS.join(", ")})`;

/** Parses a filter; throws FilterSyntaxError naming the 1-based position and what was expected there. */
export function parseFilter(text: string): Filter {
    const scanner = new Scanner(text);
    const clauses: FilterClause[] = [];
    scanner.skipSpace();
    for (;;) {
        clauses.push(parseClause(scanner));
        const hadSpace = scanner.skipSpace();
        if (scanner.atEnd()) return clauses;
        const at = scanner.position;
        const word = scanner.word();
        if (!hadSpace || word.toLowerCase() !== "and") {
            throw new FilterSyntaxError(at + 1, `"and" or the end of the filter`, word);
        }
        scanner.requireSpace(`a space after "and"`);
    }
}

function parseClause(scanner: Scanner): FilterClause {
    const fieldAt = scanner.position;
    const field = scanner.word();
    if (!isField(field)) {
        const hint = FILTER_FIELDS.find((known) => known.toLowerCase() === field.toLowerCase());
        throw new FilterSyntaxError(
            fieldAt + 1,
            EXPECTED_FIELD,
            field === "" ? scanner.peek() : field,
            hint ? `field names are case-sensitive: write ${hint}` : undefined,
        );
    }
    scanner.requireSpace(`a space after ${field}`);
    const operatorAt = scanner.position;
    const operator = scanner.word();
    if (operator.toLowerCase() !== "eq") {
        throw new FilterSyntaxError(
            operatorAt + 1,
            `"eq"`,
            operator === "" ? scanner.peek() : operator,
            operator === "" ? undefined : "eq is the only comparison",
        );
    }
    scanner.requireSpace(`a space after "eq"`);
    return { field, value: parseValue(scanner) };
}

function parseValue(scanner: Scanner): string {
    const start = scanner.position;
    if (scanner.peek() === "'") return scanner.quoted();
    const value = scanner.word();
    if (value === "") throw new FilterSyntaxError(start + 1, "a value", scanner.peek());
    const quoteAt = value.indexOf("'");
    if (quoteAt >= 0) {
        throw new FilterSyntaxError(
            start + quoteAt + 1,
            "a space or the end of the value",
            "'",
            `a value containing a quote must be quoted, with the quote doubled: ${quoteValue(value)}`,
        );
    }
    return value;
}

function isField(word: string): word is FilterField {
    return (FILTER_FIELDS as readonly string[]).includes(word);
}

/** Walks the filter text; positions are 0-based indexes into it. */
class Scanner {
    position = 0;

    constructor(private readonly text: string) {}

    atEnd(): boolean {
        return this.position >= this.text.length;
    }

    /** The next character, or undefined at the end. */
    peek(): string | undefined {
        return this.atEnd() ? undefined : this.text[this.position];
    }

    /** Skips whitespace; true when there was some. */
    skipSpace(): boolean {
        const start = this.position;
        while (!this.atEnd() && /\s/.test(this.text[this.position] ?? "")) this.position++;
        return this.position > start;
    }

    requireSpace(expected: string): void {
        const at = this.position;
        if (!this.skipSpace()) throw new FilterSyntaxError(at + 1, expected, this.peek());
    }

    /** The run of characters up to the next whitespace or the end; "" when there is none. */
    word(): string {
        const start = this.position;
        while (!this.atEnd() && !/\s/.test(this.text[this.position] ?? "")) this.position++;
        return this.text.slice(start, this.position);
    }

    /** A single-quoted value (the scanner is at its opening quote), with `''` read as one quote. */
    quoted(): string {
        const opening = this.position;
        this.position++;
        let value = "";
        for (;;) {
            const end = this.text.indexOf("'", this.position);
            if (end < 0) {
                throw new FilterSyntaxError(
                    this.text.length + 1,
                    `"'" closing the value that starts at position ${opening + 1}`,
                    undefined,
                );
            }
            value += this.text.slice(this.position, end);
            this.position = end + 1;
            if (this.text[this.position] !== "'") break;
            value += "'";
            this.position++;
        }
        if (!this.atEnd() && !/\s/.test(this.text[this.position] ?? "")) {
            throw new FilterSyntaxError(
                this.position + 1,
                "a space or the end of the filter after the quoted value",
                this.peek(),
            );
        }
        return value;
    }
}

/** True when `datastore` satisfies every clause. Ids and uuids compare case-insensitively, names exactly. */
export function matchesFilter(filter: Filter, datastore: DatastoreRecord): boolean {
    return filter.every(({ field, value }) => {
        switch (field) {
            case "name":
                return datastore.name === value;
            case "hciClusterUuid":
                return sameUuid(datastore.hciClusterUuid, value);
            case "clusterInfo/id":
                return sameUuid(datastore.clusterInfo.id, value);
            case "id":
                return sameUuid(datastore.id, value);
        }
        return false;
    });
}

/** UUIDs are case-insensitive (RFC 9562); a client may send either case. */
export function sameUuid(a: string, b: string): boolean {
    return a.toLowerCase() === b.toLowerCase();
}
