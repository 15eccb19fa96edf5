// Node.js system errors, read in one place.

/** The `code` of a Node.js system error (`ENOENT`, `EACCES`, ...), or "" for anything else. */
export function codeOf(error: unknown): string {
    return typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
}
