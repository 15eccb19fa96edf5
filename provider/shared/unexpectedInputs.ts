// A property a resource does not take is most often a misspelling, and ignored it would silently mean the
// default: `hostsFile` for `file` writes the entry into the machine's own /etc/hosts, `createTokn` for
// `createToken` creates without a key. TypeScript programs cannot make that mistake; JavaScript and YAML
// programs, and inputs built at run time, can. So `check` refuses such a property, as Terraform refuses
// an unsupported argument, and names the input that was probably meant.

import type * as dynamic from "@pulumi/pulumi/dynamic";

/**
 * A check failure for each property of `news` that is neither one of `inputs` nor one of `state` (what the
 * resource's state adds, which `pulumi import` passes back as inputs). Properties whose value is undefined
 * are not set; `__`-prefixed ones are the SDK's and the resource classes' own.
 */
export function unexpectedInputs(
    kind: string,
    news: Readonly<Record<string, unknown>>,
    inputs: readonly string[],
    state: readonly string[],
): dynamic.CheckFailure[] {
    const known = new Set([...inputs, ...state]);
    return Object.entries(news)
        .filter(([property, value]) => value !== undefined && !property.startsWith("__") && !known.has(property))
        .map(([property]) => {
            const meant = likelyMeant(property, inputs);
            const guess = meant === undefined ? "" : ` Did you mean \`${meant}\`?`;
            return {
                property,
                reason: `${kind} has no input \`${property}\`.${guess} Its inputs are ${inputs.join(", ")}; correct or remove \`${property}\`.`,
            };
        });
}

/** The input `property` was probably meant to be: one it contains or is contained in, else one a typo or two away. */
export function likelyMeant(property: string, inputs: readonly string[]): string | undefined {
    const folded = property.toLowerCase();
    const within = inputs.filter((input) => {
        const other = input.toLowerCase();
        return Math.min(other.length, folded.length) >= 4 && (folded.includes(other) || other.includes(folded));
    });
    if (within.length > 0) return within.sort((a, b) => b.length - a.length)[0];
    let best: { input: string; distance: number } | undefined;
    for (const input of inputs) {
        const distance = editDistance(folded, input.toLowerCase());
        if (distance <= Math.max(1, Math.min(2, Math.floor(input.length / 3))) && (!best || distance < best.distance))
            best = { input, distance };
    }
    return best?.input;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (Damerau's transposition). */
export function editDistance(a: string, b: string): number {
    const rows = Array.from({ length: a.length + 1 }, (_, i) =>
        Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
    );
    const at = (i: number, j: number) => (rows[i] as number[])[j] as number;
    for (let i = 1; i <= a.length; i++) {
        for (let j = 1; j <= b.length; j++) {
            const substitution = at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1);
            let distance = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, substitution);
            if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
                distance = Math.min(distance, at(i - 2, j - 2) + 1);
            (rows[i] as number[])[j] = distance;
        }
    }
    return at(a.length, b.length);
}
