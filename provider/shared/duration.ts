// Pure parsing of the per-operation timeouts users write (`timeouts: { create: "30m" }`).

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
const PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/y;

/**
 * Parses a duration such as "30m", "1h30m", "45s" or "500ms" into milliseconds. Returns a reason string
 * instead when the text is not a positive duration, for check to report.
 */
export function parseDuration(text: string): number | { problem: string } {
    const trimmed = text.trim();
    if (trimmed.length === 0) return { problem: 'is empty; write a duration such as "30m" or "1h30m"' };
    let total = 0;
    PART.lastIndex = 0;
    while (PART.lastIndex < trimmed.length) {
        const start = PART.lastIndex;
        const match = PART.exec(trimmed);
        if (!match) {
            return {
                problem: `${JSON.stringify(text)} is not a duration: unexpected ${JSON.stringify(trimmed.slice(start))}; use h, m, s or ms, as in "1h30m"`,
            };
        }
        total += Number(match[1]) * (UNIT_MS[match[2] as string] as number);
    }
    if (!(total > 0)) return { problem: `${JSON.stringify(text)} is not a positive duration` };
    return total;
}

/** Formats milliseconds for messages: "1h 30m", "45 s", "250 ms". */
export function formatDuration(ms: number): string {
    // Round to the unit shown first, so 59,999 ms reads "1m", never "60 s".
    if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
    if (Math.round(ms / 100) < 600) return `${Math.round(ms / 100) / 10} s`;
    const totalMinutes = Math.round(ms / 60_000);
    const hours = Math.floor(totalMinutes / 60);
    const minutes = totalMinutes % 60;
    return hours > 0 ? `${hours}h ${minutes}m` : `${minutes}m`;
}
