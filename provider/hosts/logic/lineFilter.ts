// Pure line selection shared by `hosts import --match` and the read helpers, so one pattern selects the
// same lines in both.

import { foldCase } from "./hostname";
import { type HostsLine, resolverFields, toUtf8 } from "./hostsDocument";

/**
 * Whether `pattern` matches the line's address or any of its names. Both are tried as written and as a
 * program declares them (canonical address, lowercase names), so neither spelling surprises the user.
 * A line that is not an address line is tried on its fields all the same, so a broken line the importer
 * reports can still be selected. Each test starts at the beginning of the text, also with the `g` or
 * `y` flag (which would otherwise carry `lastIndex` from one test to the next), so pass a copy of a
 * caller's pattern: its `lastIndex` is changed.
 */
export function lineMatches(pattern: RegExp, line: HostsLine): boolean {
    const candidates = resolverFields(line.text).map(toUtf8);
    if (line.entry) candidates.push(line.entry.address, ...line.entry.names.map(foldCase));
    return candidates.some((text) => {
        pattern.lastIndex = 0;
        return pattern.test(text);
    });
}
