// Pure hostname validation (RFC 1123 labels). Every name that reaches a hosts file goes through here,
// which is what keeps whitespace, "#", line breaks and control characters out of the file.

import { describeCharacter, quote } from "../../shared/text";
import { addressFamily } from "./address";

const MAX_NAME_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
const LABEL_CHARACTER = /^[a-z0-9-]$/i;
/** A part of an address as inet_aton reads it: hex (0x...), octal (0...) or decimal. */
const INET_ATON_PART = /^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$/i;

/**
 * Folds a hostname's case the way resolvers compare names: ASCII letters only. Unicode lowercasing
 * would turn the Kelvin sign (U+212A) into "k" and match names that no resolver would match.
 */
export function foldCase(name: string): string {
    // Most names have no capital to fold (a native check, where the replace runs a callback per match).
    if (name.toLowerCase() === name) return name;
    return name.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/**
 * Returns why `name` is not a valid hostname, or undefined when it is one. The reason is a sentence
 * fragment that quotes the offending part, ready to follow the property name in an error.
 */
export function hostnameProblem(name: string): string | undefined {
    const shown = quote(name);
    if (name.length === 0) return "is empty; a hostname needs at least one character";
    if (name.length > MAX_NAME_LENGTH) {
        return `is ${name.length} characters long; a hostname may have at most ${MAX_NAME_LENGTH}`;
    }
    if (name.endsWith(".")) return `${shown} ends with "."; write the name without the trailing dot`;
    if (addressFamily(name)) return `${shown} is an IP address; put addresses in "address" and hostnames in "names"`;
    const labels = name.split(".");
    for (const label of labels) {
        if (label.length === 0) return `${shown} has an empty label (two dots in a row, or a leading dot)`;
        if (label.length > MAX_LABEL_LENGTH) {
            return `${shown} has a label of ${label.length} characters; a label may have at most ${MAX_LABEL_LENGTH}`;
        }
        for (const character of label) {
            if (!LABEL_CHARACTER.test(character)) {
                return `${shown} contains ${describeCharacter(character)}; a hostname may only contain letters, digits, hyphens and dots`;
            }
        }
        if (label.startsWith("-") || label.endsWith("-")) {
            return `${shown} has the label ${quote(label)}, which starts or ends with a hyphen`;
        }
    }
    if (labels.every((label) => /^[0-9]+$/.test(label))) {
        return `${shown} is all digits, which resolvers read as a numeric address`;
    }
    // glibc resolves what inet_aton accepts (1 to 4 parts, each hex, octal or decimal) as an address
    // without reading the hosts file, so such a line would never be used.
    if (labels.length <= 4 && labels.every((label) => INET_ATON_PART.test(label))) {
        return `${shown} is read as a numeric address by resolvers (inet_aton accepts it), which never look it up in the hosts file`;
    }
    return undefined;
}
