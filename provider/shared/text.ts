// Pure helpers for putting user-supplied text into messages safely.

/** Quotes user text for an error message so that control characters show as escapes, never raw. */
export function quote(text: string): string {
    return JSON.stringify(text);
}

/** Names a character for an error message: printable ones quoted, the rest as a code point. */
export function describeCharacter(character: string): string {
    const codePoint = character.codePointAt(0) ?? 0;
    const hex = `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
    if (character === " ") return "a space";
    if (character === "\t") return "a tab";
    if (character === "\n" || character === "\r") return `a line break (${hex})`;
    if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(character)) return `the control character ${hex}`;
    if (/\s/u.test(character)) return `the whitespace character ${hex}`;
    return `${quote(character)}`;
}
