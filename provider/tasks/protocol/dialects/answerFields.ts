// Reading fields of an API's JSON without trusting its shape: every dialect reads answers through these,
// so a field of the wrong type reads as absent instead of throwing in the middle of an operation.

/** `value` as a plain object, or undefined. */
export function objectOf(value: unknown): Record<string, unknown> | undefined {
    return typeof value === "object" && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : undefined;
}

/** The own string field `name` of `value`, or undefined. */
export function stringField(value: unknown, name: string): string | undefined {
    const object = objectOf(value);
    if (!object || !Object.hasOwn(object, name)) return undefined;
    const field = object[name];
    return typeof field === "string" ? field : undefined;
}

/** The own number field `name` of `value` when it is a finite number, or undefined. */
export function numberField(value: unknown, name: string): number | undefined {
    const object = objectOf(value);
    if (!object || !Object.hasOwn(object, name)) return undefined;
    const field = object[name];
    return typeof field === "number" && Number.isFinite(field) ? field : undefined;
}

/** A percentage field, only when it is a number in [0, 100]. */
export function percentField(value: unknown, name: string): number | undefined {
    const percent = numberField(value, name);
    return percent !== undefined && percent >= 0 && percent <= 100 ? percent : undefined;
}

/** Whether `word` is one of `words`, compared case-insensitively (APIs write `CANCELLED` and `Canceled`). */
export function oneOf(word: string, words: readonly string[]): boolean {
    const lower = word.toLowerCase();
    return words.some((candidate) => candidate.toLowerCase() === lower);
}

/** An error object as `code: message`, from the shapes APIs use (`{code, message}`, `{errorCode, message}`). */
export function describeError(value: unknown): string | undefined {
    const object = objectOf(value);
    if (!object) return typeof value === "string" ? value : undefined;
    const code = stringField(object, "code") ?? stringField(object, "errorCode") ?? numberField(object, "code");
    const message = stringField(object, "message") ?? stringField(object, "Message");
    if (code === undefined && message === undefined) return undefined;
    return code === undefined ? message : message === undefined ? String(code) : `${code}: ${message}`;
}
