// Path templates: where a collection and its items live, as an API's reference writes them
// (`/subscriptions/{subscriptionId}/resourceGroups/{resourceGroup}/providers/Test.Widgets/widgets/{name}`).
// Each `{placeholder}` names a path parameter of the resource, or `{id}`, the API's id of the item. A
// value is put in as one encoded path segment, and a value that could move the request elsewhere (".",
// "..", empty) is refused: nothing from a program reaches a request unchecked.

/** A parsed template: literal text and placeholders, in order. */
export interface PathTemplate {
    readonly source: string;
    readonly parts: ReadonlyArray<{ readonly literal: string } | { readonly placeholder: string }>;
}

/** The placeholder every item path may name: the API's id of the item. */
export const ID_PLACEHOLDER = "id";

const PLACEHOLDER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** What a template's literal text may hold: RFC 3986 path characters, and a query after "?". */
const LITERAL = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*$/;

/** Parses a template; a problem names what is wrong, for a check failure. */
export function parsePathTemplate(source: unknown): PathTemplate | { problem: string } {
    if (typeof source !== "string" || source.length === 0) return { problem: "it is empty" };
    if (!source.startsWith("/"))
        return { problem: `it must start with "/" (a path on the API), not ${JSON.stringify(source.slice(0, 20))}` };
    if (source.startsWith("//")) return { problem: 'it must not start with "//" (that names another host)' };
    const parts: Array<{ literal: string } | { placeholder: string }> = [];
    let rest = source;
    while (rest.length > 0) {
        const open = rest.indexOf("{");
        const literal = open === -1 ? rest : rest.slice(0, open);
        if (literal.includes("}")) return { problem: 'it has a "}" without a "{"' };
        if (!LITERAL.test(literal)) return { problem: `it holds characters a path cannot: ${JSON.stringify(literal)}` };
        const path = literal.split("?")[0] as string;
        // fetch (WHATWG URL) resolves %2e as "." too: /a/%2e%2e/b is requested as /b.
        if (path.split("/").some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment))) {
            return { problem: 'it holds a "." or ".." segment' };
        }
        if (literal) parts.push({ literal });
        if (open === -1) break;
        const close = rest.indexOf("}", open);
        if (close === -1) return { problem: 'it has a "{" without a "}"' };
        const placeholder = rest.slice(open + 1, close);
        if (!PLACEHOLDER_NAME.test(placeholder)) {
            return { problem: `{${placeholder}} is not a placeholder name (letters, digits, "_")` };
        }
        parts.push({ placeholder });
        rest = rest.slice(close + 1);
    }
    return { source, parts };
}

/** The placeholders a template names, in order. */
export function placeholdersOf(template: PathTemplate): string[] {
    return template.parts.flatMap((part) => ("placeholder" in part ? [part.placeholder] : []));
}

/** Why a value cannot go into a path segment, or undefined when it can. */
export function segmentProblem(value: unknown): string | undefined {
    if (typeof value !== "string")
        return `it is ${value === undefined ? "missing" : `a ${typeof value}`}, not a string`;
    if (value.length === 0) return "it is empty";
    if (value === "." || value === "..")
        return `it is ${JSON.stringify(value)}, which would leave its place in the path`;
    if (value.length > 1024) return "it is longer than 1024 characters";
    return undefined;
}

/**
 * The path with every placeholder replaced by its value, encoded as one segment. Throws when a value
 * is missing or cannot be a segment (check refuses those first; this is the last guard).
 */
export function fillPathTemplate(template: PathTemplate, values: Readonly<Record<string, unknown>>): string {
    return template.parts
        .map((part) => {
            if ("literal" in part) return part.literal;
            const value = values[part.placeholder];
            const problem = segmentProblem(value);
            if (problem) throw new Error(`{${part.placeholder}} in ${template.source}: ${problem}`);
            return encodeURIComponent(value as string);
        })
        .join("");
}
