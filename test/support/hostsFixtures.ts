// Hosts-file test data: the checked-in fixtures (exact bytes), a generated StevenBlack-style blocklist,
// and the few helpers the hosts tests share (parsing text, splitting bytes into lines, a seeded PRNG).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HostsDocument } from "../../provider/hosts/logic/hostsDocument";

/** The fixtures under test/hosts/fixtures, by name (`debian` is `debian.hosts`). */
export const FIXTURE_NAMES = ["debian", "macos", "windows", "docker", "messy"] as const;

export type FixtureName = (typeof FIXTURE_NAMES)[number];

/** The exact bytes of a fixture. */
export function fixture(name: FixtureName): Buffer {
    return readFileSync(join(__dirname, "..", "hosts", "fixtures", `${name}.hosts`));
}

/** Number of lines before the first blocked domain in `blocklist`. */
export const BLOCKLIST_HEADER_LINES = 24;

const BLOCKLIST_HEADER = [
    "# Title: StevenBlack/hosts",
    "#",
    "# This hosts file is a merged collection of hosts from reputable sources,",
    "# with a dash of crowd sourcing via GitHub",
    "#",
    "# Date: 01 January 2025 00:00:00 (UTC)",
    "# Number of unique domains: generated for tests",
    "#",
    "# ===============================================================",
    "",
    "127.0.0.1 localhost",
    "127.0.0.1 localhost.localdomain",
    "127.0.0.1 local",
    "255.255.255.255 broadcasthost",
    "::1 localhost",
    "::1 ip6-localhost",
    "::1 ip6-loopback",
    "fe80::1%lo0 localhost",
    "ff00::0 ip6-localnet",
    "ff00::0 ip6-mcastprefix",
    "ff02::1 ip6-allnodes",
    "ff02::2 ip6-allrouters",
    "0.0.0.0 0.0.0.0",
    "# Custom host records are listed here.",
];

/**
 * The text of line `lineNumber` (1-based) of `blocklist`. After the header, every line names
 * `ads-<lineNumber>.example.com`: every 1000th line is a section comment instead, every 97th also carries
 * `track-<lineNumber>.example.net`, every 251st is an IPv6 (`::`) line; all others are `0.0.0.0` lines.
 */
export function blocklistLine(lineNumber: number): string {
    const header = BLOCKLIST_HEADER[lineNumber - 1];
    if (header !== undefined) return header;
    const name = `ads-${lineNumber}.example.com`;
    if (lineNumber % 1000 === 0) return `# --- section ${lineNumber / 1000} ---`;
    if (lineNumber % 251 === 0) return `:: ${name}`;
    if (lineNumber % 97 === 0) return `0.0.0.0 ${name} track-${lineNumber}.example.net`;
    return `0.0.0.0 ${name}`;
}

/** A deterministic blocklist of exactly `lines` LF-terminated lines (header included). */
export function blocklist(lines: number): Buffer {
    const text: string[] = [];
    for (let lineNumber = 1; lineNumber <= lines; lineNumber++) text.push(`${blocklistLine(lineNumber)}\n`);
    return Buffer.from(text.join(""), "utf8");
}

/** Parses UTF-8 text as a hosts file. */
export function parseText(text: string): HostsDocument {
    return HostsDocument.parse(Buffer.from(text, "utf8"));
}

/** Splits bytes into physical lines, each keeping its own ending, one character per byte (latin1). */
export function physicalLines(bytes: Buffer): string[] {
    return bytes.toString("latin1").split(/(?<=\n)/);
}

/** Picks one element of a non-empty list with `random`. */
export function pick<T>(random: () => number, items: readonly T[]): T {
    return items[Math.floor(random() * items.length)] as T;
}
