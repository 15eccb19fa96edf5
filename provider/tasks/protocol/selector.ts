// Selectors: where a value sits in an API's JSON, written as users write them in other tools
// (`id`, `properties.provisioningState`, `items[0].name`, `response["odata.type"]`). Parsed once, when
// the program is checked, so a selector that does not parse is a check failure naming the field, never
// a surprise in the middle of an operation.

/** One step into a JSON value: a property name or an array index. */
export type SelectorStep = string | number;

/** A parsed selector: the steps from the root. */
export interface Selector {
    readonly source: string;
    readonly steps: readonly SelectorStep[];
}

/** Why a selector did not parse: a sentence naming the position and what was expected. */
export interface SelectorProblem {
    readonly problem: string;
}

const NAME = /^[A-Za-z_$@][A-Za-z0-9_$@-]*/;
const INDEX = /^\[(0|[1-9][0-9]{0,8})\]/;
const QUOTED = /^\["((?:[^"\\]|\\.){1,200})"\]/;
/** Selectors longer than this are no selector any API needs, and are refused rather than walked. */
const MAX_STEPS = 32;

/**
 * Parses `source`: names joined by `.`, `[n]` array indices and `["any name"]` quoted names. The empty
 * selector is refused: a value is always somewhere inside the answer.
 */
export function parseSelector(source: string): Selector | SelectorProblem {
    if (typeof source !== "string" || source.length === 0) return { problem: "it is empty" };
    const steps: SelectorStep[] = [];
    let rest = source;
    let expectName = true;
    while (rest.length > 0) {
        const at = source.length - rest.length;
        if (!expectName && rest.startsWith(".")) {
            rest = rest.slice(1);
            expectName = true;
            if (rest.length === 0) return { problem: `it ends with "." at position ${at + 1}` };
            continue;
        }
        const index = steps.length > 0 ? INDEX.exec(rest) : null;
        const quoted = index ? null : QUOTED.exec(rest);
        const name = index || quoted || !expectName ? null : NAME.exec(rest);
        if (index) steps.push(Number(index[1]));
        else if (quoted) steps.push(JSON.parse(`"${quoted[1]}"`) as string);
        else if (name) steps.push(name[0]);
        else {
            const what = expectName ? 'a name, "[n]" or "[\\"name\\"]"' : '".", "[n]" or "[\\"name\\"]"';
            return { problem: `at position ${at + 1} ("${rest.slice(0, 12)}") expected ${what}` };
        }
        rest = rest.slice(((index ?? quoted ?? name) as RegExpExecArray)[0].length);
        expectName = false;
        if (steps.length > MAX_STEPS) return { problem: `it has more than ${MAX_STEPS} steps` };
    }
    return { source, steps };
}

/** Whether parseSelector refused its input. */
export function isSelectorProblem(value: Selector | SelectorProblem): value is SelectorProblem {
    return "problem" in value;
}

/** A selector known to parse (written in our own code). */
export function selector(source: string): Selector {
    const parsed = parseSelector(source);
    if (isSelectorProblem(parsed)) throw new Error(`selector ${JSON.stringify(source)}: ${parsed.problem}`);
    return parsed;
}

/** The value at `selector` in `value`, or undefined when any step is missing. Never walks prototypes. */
export function select(value: unknown, at: Selector): unknown {
    let current: unknown = value;
    for (const step of at.steps) {
        if (typeof step === "number") {
            if (!Array.isArray(current) || step >= current.length) return undefined;
            current = current[step];
        } else {
            if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
            if (!Object.hasOwn(current, step)) return undefined;
            current = (current as Record<string, unknown>)[step];
        }
    }
    return current;
}

/** `value` with `at` set to `replacement` (copied along the path; nothing of `value` is changed). */
export function assign(value: unknown, at: Selector, replacement: unknown): unknown {
    const [step, ...rest] = at.steps;
    if (step === undefined) return replacement;
    const inner: Selector = { source: at.source, steps: rest };
    if (typeof step === "number") {
        const copy = Array.isArray(value) ? [...value] : [];
        copy[step] = assign(copy[step], inner, replacement);
        return copy;
    }
    const base = typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
    return { ...base, [step]: assign((base as Record<string, unknown>)[step], inner, replacement) };
}
