// Pure address handling: which family an address belongs to and its canonical spelling.
// Canonical spelling matters because "10.0.0.5" and "::ffff:a00:5" style variants, or "FE80::0:1" and
// "fe80::1", must compare equal when we look for drift, adopt a line or detect a conflict.

import { isIPv4, isIPv6 } from "node:net";

/** The address families a hosts-file line can carry. A name may appear once per family. */
/** How a family is named in messages. */
export const FAMILY_LABEL: Record<AddressFamily, string> = { ipv4: "IPv4", ipv6: "IPv6" };

export type AddressFamily = "ipv4" | "ipv6";

/** Returns the family of `address`, or undefined when it is not a literal IPv4 or IPv6 address. */
export function addressFamily(address: string): AddressFamily | undefined {
    if (isIPv4(address)) return "ipv4";
    if (isIPv6(address)) return "ipv6";
    return undefined;
}

/**
 * Returns the canonical text of a valid address: IPv4 unchanged (Node already refuses leading zeros),
 * IPv6 in RFC 5952 form (lowercase, no leading zeros, the longest run of two or more zero groups as `::`,
 * IPv4-mapped addresses in mixed notation). A zone index (`%eth0`) is kept as written.
 */
export function canonicalAddress(address: string): string {
    if (addressFamily(address) !== "ipv6") return address;
    const zoneAt = address.indexOf("%");
    const zone = zoneAt >= 0 ? address.slice(zoneAt) : "";
    const groups = ipv6Groups(zoneAt >= 0 ? address.slice(0, zoneAt) : address);
    return formatIpv6(groups) + zone;
}

function ipv6Groups(text: string): number[] {
    let body = text.toLowerCase();
    // An embedded IPv4 tail ("::ffff:10.0.0.5") is the last two groups written in decimal.
    const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(body);
    if (dotted) {
        const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
        body = `${body.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    }
    const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
    const [head, tail] = body.split("::");
    if (tail === undefined) return parse(head ?? "");
    const headGroups = parse(head ?? "");
    const tailGroups = parse(tail);
    const zeros = new Array<number>(8 - headGroups.length - tailGroups.length).fill(0);
    return [...headGroups, ...zeros, ...tailGroups];
}

function formatIpv6(groups: number[]): string {
    const isMapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
    if (isMapped) {
        const [hi, lo] = [groups[6] ?? 0, groups[7] ?? 0];
        return `::ffff:${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
    }
    let bestStart = -1;
    let bestLength = 1;
    for (let start = 0; start < 8; ) {
        if (groups[start] !== 0) {
            start++;
            continue;
        }
        let end = start;
        while (end < 8 && groups[end] === 0) end++;
        if (end - start > bestLength) {
            bestStart = start;
            bestLength = end - start;
        }
        start = end;
    }
    const hex = groups.map((g) => g.toString(16));
    if (bestStart < 0) return hex.join(":");
    return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}
