// Pure helpers for putting user-supplied text into messages safely.

/** Quotes user text for an error message so that control characters show as escapes, never raw. */
export function quote(text: string): string {
    // JSON.stringify escapes only U+0000-U+001F; line separators, DEL, C1 controls and format characters
    // (a right-to-left override can reorder what a reader sees) must not reach a message raw either.
    return JSON.stringify(text).replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (character) => {
        const codePoint = character.codePointAt(0) ?? 0;
        return codePoint > 0xffff ? `\\u{${codePoint.toString(16)}}` : `\\u${codePoint.toString(16).padStart(4, "0")}`;
    });
}

/** Quotes a word for a POSIX shell command a message suggests, so copying it works for any path. */
export function shellQuote(word: string): string {
    return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/**
 * Characters that are not format characters yet show nothing: the Hangul fillers, the combining grapheme
 * joiner and the variation selectors (an alternation: a class may not mix them with other characters).
 */
export const INVISIBLE = /[\u115f\u1160\u3164\uffa0]|\u034f|\p{Variation_Selector}/u;

/** Names a character for an error message: printable ones quoted, the rest as a code point. */
export function describeCharacter(character: string): string {
    const codePoint = character.codePointAt(0) ?? 0;
    const hex = `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
    if (character === " ") return "a space";
    if (character === "\t") return "a tab";
    if (character === "\n" || character === "\r") return `a line break (${hex})`;
    if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(character)) return `the control character ${hex}`;
    if (INVISIBLE.test(character)) return `the invisible character ${hex}`;
    if (/\s/u.test(character)) return `the whitespace character ${hex}`;
    return `${quote(character)}`;
}

/** The message of anything thrown: an Error's message, or the value as text. */
export function messageOf(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

/**
 * Describes a bad input value for a check failure ("must be a string, not the number 5"): the one
 * wording every resource uses. Strings are quoted (escaped, never raw); other values name their kind.
 */
export function describeInput(value: unknown): string {
    if (value === undefined) return "nothing (it is required)";
    if (value === null) return "null";
    if (typeof value === "string") return value === "" ? "an empty string" : quote(value);
    if (Array.isArray(value)) return "a list";
    if (typeof value === "object") return "an object";
    return `the ${typeof value} ${String(value)}`;
}
