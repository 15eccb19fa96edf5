// Reading and parsing an answer's body defensively. A server can send a body that never ends (one byte
// a second after the headers), one larger than any answer of the API, or JSON nested deep enough to
// overflow the stack of anything that walks it. Reading is raced against the request's own stop signal
// (its timer, the caller's abort), never left to fetch's signal alone: undici stops passing an abort on
// to a body once its request object has been collected, and a read would then wait forever. Parsing
// refuses nesting deeper than MAX_JSON_DEPTH before JSON.parse or any walk sees the text.

/** The largest answer read (the API's answers are a few KB; a list of thousands of datastores fits). */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** The deepest nesting of arrays and objects an answer may have (the API's go 4 levels deep). */
export const MAX_JSON_DEPTH = 64;

/** A promise that rejects with the signal's reason once it aborts, and the way to stop listening. */
export interface Abortion {
    readonly promise: Promise<never>;
    dispose(): void;
}

/** Rejects with `signal`'s reason once it aborts; never resolves. */
export function abortion(signal: AbortSignal): Abortion {
    let onAbort = (): void => undefined;
    const promise = new Promise<never>((_resolve, reject) => {
        if (signal.aborted) {
            reject(signal.reason);
            return;
        }
        onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
    });
    // Raced only while the request runs; an abort nobody awaits is no unhandled rejection.
    promise.catch(() => undefined);
    return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

/**
 * The body as text, or undefined when it is larger than MAX_RESPONSE_BYTES (declared or read: reading
 * stops there). Rejects with `stop`'s reason as soon as `stop` rejects, cancelling the body so that its
 * connection is released.
 */
export async function readBody(response: Response, stop: Promise<never>): Promise<string | undefined> {
    const declared = Number(response.headers.get("content-length") ?? 0);
    if (declared > MAX_RESPONSE_BYTES) {
        void response.body?.cancel().catch(() => undefined);
        return undefined;
    }
    const reader = response.body?.getReader();
    if (!reader) return "";
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
            chunk = await Promise.race([reader.read(), stop]);
        } catch (error) {
            // Not awaited: a body that stalls may never confirm its cancellation.
            reader.cancel(error).catch(() => undefined);
            throw error;
        }
        if (chunk.done) break;
        size += chunk.value.byteLength;
        if (size > MAX_RESPONSE_BYTES) {
            reader.cancel().catch(() => undefined);
            return undefined;
        }
        chunks.push(chunk.value);
    }
    return Buffer.concat(chunks).toString("utf8");
}

/** What parsing a body gave: its value, text that is not JSON, or JSON refused before it was parsed. */
export type Parsed = { readonly value: unknown } | { readonly notJson: true } | { readonly refused: string };

/** Parses JSON text; empty text is no value. Nesting deeper than MAX_JSON_DEPTH is refused unparsed. */
export function parseJson(text: string): Parsed {
    if (text.length === 0) return { value: undefined };
    if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
        return {
            refused: `the body is nested deeper than ${MAX_JSON_DEPTH} levels, far deeper than any answer of the API`,
        };
    }
    try {
        return { value: JSON.parse(text) };
    } catch {
        return { notJson: true };
    }
}

/** Whether JSON text nests arrays and objects deeper than `limit`; one pass, no recursion. */
export function nestedDeeperThan(text: string, limit: number): boolean {
    let depth = 0;
    let inString = false;
    for (let i = 0; i < text.length; i++) {
        const code = text.charCodeAt(i);
        if (inString) {
            if (code === 0x5c)
                i++; // a backslash escapes the next character
            else if (code === 0x22) inString = false;
        } else if (code === 0x22) {
            inString = true;
        } else if (code === 0x5b || code === 0x7b) {
            if (++depth > limit) return true;
        } else if (code === 0x5d || code === 0x7d) {
            depth--;
        }
    }
    return false;
}

/**
 * A copy of a parsed value with `map` applied to every string in it, keys included. Depth-bounded: what
 * lies deeper than MAX_JSON_DEPTH (which parseJson never lets through) is left out.
 */
export function mapStrings(value: unknown, map: (text: string) => string, depth = 0): unknown {
    if (typeof value === "string") return map(value);
    if (typeof value !== "object" || value === null) return value;
    if (depth >= MAX_JSON_DEPTH) return undefined;
    if (Array.isArray(value)) return value.map((item) => mapStrings(item, map, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [map(key), mapStrings(item, map, depth + 1)]));
}
