// Guards checkHostEntry, the only door into a hosts file: each bad input is refused with the exact
// property and a readable reason; good inputs are normalized (lowercase names, RFC 5952 addresses, trimmed
// comments, defaults); unknown preview values pass untouched; and, over many seeded random inputs, no
// accepted address or name can carry whitespace, "#" or a control character into the file.

import { strict as assert } from "node:assert";
import { BlockList, isIP, isIPv6 } from "node:net";
import { type CheckOutcome, checkHostEntry } from "../../../provider/hosts/logic/check";
import { renderLine } from "../../../provider/hosts/logic/entries";
import { fromUtf8, parseEntry } from "../../../provider/hosts/logic/hostsDocument";
import { seededRandom } from "../../../provider/shared/random";
import { UNKNOWN } from "../../../provider/shared/unknown";
import { pick } from "../../support/hostsFixtures";

const DEFAULT_FILE = "/etc/hosts";
const GOOD = {
    address: "10.0.0.5",
    names: ["web.internal", "www"],
    comment: "app",
    file: "/tmp/test.hosts",
    adopt: false,
};

/** Checks GOOD with `overrides` applied (an `undefined` override removes the property). */
function check(overrides: Record<string, unknown> = {}, defaultFile = () => DEFAULT_FILE): CheckOutcome {
    const news: Record<string, unknown> = { ...GOOD, ...overrides };
    for (const key of Object.keys(overrides)) if (overrides[key] === undefined) delete news[key];
    return checkHostEntry(news, defaultFile);
}

/** Characters that must never reach an address or name, and some look-alikes that must not slip through. */
const NASTY = [
    " ",
    "\t",
    "\n",
    "\r",
    "\0",
    "\v",
    "\f",
    "\x1b",
    "\x7f",
    "\u0085",
    "\u00a0",
    "\u1680",
    "\u2003",
    "\u200b",
    "\u2028",
    "\u2029",
    "\u202e",
    "\u3000",
    "\ufeff",
    "#",
    "_",
    "%",
    "/",
    ",",
    "\u00e9",
    "\u212a",
    "\u017f",
    "\u0130",
];
const SAFE = [..."abcdefxyzABCDEFXYZ0123456789.-:"];
const FORBIDDEN_IN_FILE = /[\s#\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

describe("checkHostEntry", () => {
    // Ignored, `hostsFile` meant the default file: the machine's own /etc/hosts.
    it("refuses a property it does not take, naming the input meant; passes on what the state adds", () => {
        const { failures } = check({ hostsFile: "/tmp/hosts", Names: ["x.test"] });
        assert.deepEqual(
            failures.map((failure) => failure.property),
            ["hostsFile", "Names"],
        );
        assert.equal(
            failures[0]?.reason,
            "HostEntry has no input `hostsFile`. Did you mean `file`? Its inputs are address, names, comment, file, adopt, connection, credentials; correct or remove `hostsFile`.",
        );
        assert.match(failures[1]?.reason ?? "", /Did you mean `names`\?/);
        assert.deepEqual(check({ line: 3, stateVersion: 1, __owner: "o/p/s" }).failures, []);
    });

    describe("refuses bad input with the exact property and reason", () => {
        const longLabel = `${"a".repeat(64)}.example`;
        const longName = `${"abcdefghi.".repeat(25)}abcd`;
        const table: [string, Record<string, unknown>, string, string][] = [
            [
                "a numeric address",
                { address: 5 },
                "address",
                "must be an IPv4 or IPv6 address string, not the number 5",
            ],
            ["a missing address", { address: undefined }, "address", "not nothing (it is required)"],
            ["a null address", { address: null }, "address", "string, not null"],
            ["an address list", { address: ["10.0.0.5"] }, "address", "not a list"],
            [
                "an address with a trailing space",
                { address: "10.0.0.5 " },
                "address",
                '"10.0.0.5 " contains a space; write the address alone',
            ],
            ["an address with a newline", { address: "10.0.0.5\n" }, "address", "contains a line break (U+000A)"],
            ["an address with a leading tab", { address: "\t10.0.0.5" }, "address", "contains a tab"],
            [
                "an address with a no-break space",
                { address: "10.0.0.5\u00a0" },
                "address",
                "the whitespace character U+00A0",
            ],
            ["an address with a NUL", { address: "::1\0" }, "address", "contains the control character U+0000"],
            [
                "a hostname as address",
                { address: "web.internal" },
                "address",
                '"web.internal" is not an IPv4 or IPv6 address; hostnames belong in "names"',
            ],
            ["an empty address", { address: "" }, "address", '"" is not an IPv4 or IPv6 address'],
            ["an out-of-range IPv4 address", { address: "10.0.0.256" }, "address", "is not an IPv4 or IPv6 address"],
            [
                "an IPv4 address with a leading zero",
                { address: "10.0.0.05" },
                "address",
                "is not an IPv4 or IPv6 address",
            ],
            ["an address with a comment", { address: "10.0.0.5#x" }, "address", "is not an IPv4 or IPv6 address"],
            ["a CIDR range", { address: "10.0.0.0/8" }, "address", "is not an IPv4 or IPv6 address"],
            [
                "names as a string",
                { names: "web.internal" },
                "names",
                'must be a list of hostnames (canonical name first), not "web.internal"',
            ],
            ["missing names", { names: undefined }, "names", "not nothing (it is required)"],
            ["names as an object", { names: { 0: "web" } }, "names", "not an object"],
            [
                "an empty names list",
                { names: [] },
                "names",
                "must hold at least one hostname; the first is the canonical name",
            ],
            [
                "a non-string name",
                { names: ["web.internal", 5] },
                "names[1]",
                "must be a hostname string, not the number 5",
            ],
            ["a null name", { names: [null] }, "names[0]", "must be a hostname string, not null"],
            [
                "a name with an underscore",
                { names: ["web.internal", "my_host"] },
                "names[1]",
                '"my_host" contains "_"; a hostname may only contain letters, digits, hyphens and dots',
            ],
            ["a name with a space", { names: ["web.internal", "my host"] }, "names[1]", '"my host" contains a space'],
            ["a name with #", { names: ["web.internal", "my#host"] }, "names[1]", 'contains "#"'],
            [
                "a name with a newline",
                { names: ["web.internal", "my\nhost"] },
                "names[1]",
                '"my\\nhost" contains a line break (U+000A)',
            ],
            ["a name with a CR", { names: ["web.internal", "my\rhost"] }, "names[1]", "contains a line break (U+000D)"],
            [
                "a name with a NUL",
                { names: ["web.internal", "my\0host"] },
                "names[1]",
                "contains the control character U+0000",
            ],
            ["a name with a tab", { names: ["web.internal", "my\thost"] }, "names[1]", "contains a tab"],
            [
                "a name with U+2028",
                { names: ["web.internal", "my\u2028host"] },
                "names[1]",
                "contains the control character U+2028",
            ],
            [
                "a name with a zero-width space",
                { names: ["web.internal", "my\u200bhost"] },
                "names[1]",
                "contains the control character U+200B",
            ],
            ["a non-ASCII name", { names: ["web.internal", "caf\u00e9.lab"] }, "names[1]", 'contains "\u00e9"'],
            // glibc reads these as 10.0.0.5, 127.0.0.1, 127.0.0.1 and 10.0.0.5 without looking at the file.
            ...(["0x0a.0.0.5", "0x7f.1", "0x7f.0.0.01", "0xa000005"] as const).map(
                (name): [string, Record<string, unknown>, string, string] => [
                    `a name inet_aton reads as an address (${name})`,
                    { names: [name] },
                    "names[0]",
                    "is read as a numeric address by resolvers (inet_aton accepts it)",
                ],
            ),
            // Invisible characters a comment must not hide: Hangul filler, combining grapheme joiner,
            // variation selector 16, zero-width joiner.
            ...(["\u3164", "\u034f", "\ufe0f", "\u200d"] as const).map(
                (character): [string, Record<string, unknown>, string, string] => [
                    `a comment with the invisible U+${character.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")}`,
                    { comment: `front${character}end` },
                    "comment",
                    `U+${character.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")}`,
                ],
            ),
            ["a Kelvin sign posing as k", { names: ["wor\u212aer.lab"] }, "names[0]", 'contains "\u212a"'],
            [
                "a name with a trailing dot",
                { names: ["web.internal", "host.example."] },
                "names[1]",
                '"host.example." ends with "."; write the name without the trailing dot',
            ],
            ["a lone dot", { names: ["."] }, "names[0]", 'ends with "."'],
            [
                "an empty name",
                { names: ["web.internal", ""] },
                "names[1]",
                "is empty; a hostname needs at least one character",
            ],
            [
                "two dots in a row",
                { names: ["web..internal"] },
                "names[0]",
                '"web..internal" has an empty label (two dots in a row, or a leading dot)',
            ],
            ["a leading dot", { names: [".web"] }, "names[0]", "has an empty label"],
            [
                "a label over 63 characters",
                { names: [longLabel] },
                "names[0]",
                "has a label of 64 characters; a label may have at most 63",
            ],
            [
                "a name over 253 characters",
                { names: [longName] },
                "names[0]",
                "is 254 characters long; a hostname may have at most 253",
            ],
            [
                "a leading hyphen",
                { names: ["web.internal", "-web.internal"] },
                "names[1]",
                'has the label "-web", which starts or ends with a hyphen',
            ],
            [
                "a trailing hyphen",
                { names: ["web-.internal"] },
                "names[0]",
                'has the label "web-", which starts or ends with a hyphen',
            ],
            [
                "an IPv4 address as a name",
                { names: ["web.internal", "10.0.0.1"] },
                "names[1]",
                '"10.0.0.1" is an IP address; put addresses in "address" and hostnames in "names"',
            ],
            ["an IPv6 address as a name", { names: ["::1"] }, "names[0]", "is an IP address"],
            [
                "an all-digit name",
                { names: ["web.internal", "12345"] },
                "names[1]",
                '"12345" is all digits, which resolvers read as a numeric address',
            ],
            ["an all-digit dotted name", { names: ["1.2.3"] }, "names[0]", "is all digits"],
            [
                "names differing only in case",
                { names: ["web.internal", "WEB.Internal"] },
                "names[1]",
                '"WEB.Internal" repeats names[0] (hostnames are case-insensitive)',
            ],
            [
                "a later repeated name",
                { names: ["a.internal", "b.internal", "B.INTERNAL"] },
                "names[2]",
                "repeats names[1]",
            ],
            ["a numeric comment", { comment: 5 }, "comment", "must be a string, not the number 5"],
            [
                "a comment with a newline",
                { comment: "a\nb" },
                "comment",
                "contains a line break (U+000A); a comment must be a single line of printable text",
            ],
            ["a comment with a CR", { comment: "a\rb" }, "comment", "contains a line break (U+000D)"],
            ["a comment with a tab", { comment: "a\tb" }, "comment", "contains a tab"],
            ["a comment with a NUL", { comment: "a\0b" }, "comment", "contains the control character U+0000"],
            ["a comment with U+2028", { comment: "a\u2028b" }, "comment", "contains the control character U+2028"],
            ["a comment with U+2029", { comment: "a\u2029b" }, "comment", "contains the control character U+2029"],
            ["a comment with NEL", { comment: "a\u0085b" }, "comment", "contains the control character U+0085"],
            ["a comment with DEL", { comment: "a\x7fb" }, "comment", "contains the control character U+007F"],
            [
                "a file path with a newline",
                { file: "/etc/hosts\n" },
                "file",
                '"/etc/hosts\\n" contains a line break (U+000A)',
            ],
            ["a file path with a NUL", { file: "/etc/hosts\0" }, "file", "contains the control character U+0000"],
            ["an empty file path", { file: "" }, "file", "must be the path of a hosts file, not an empty string"],
            ["a numeric file", { file: 5 }, "file", "not the number 5"],
            ["adopt as a string", { adopt: "yes" }, "adopt", 'must be true or false, not "yes"'],
            ["adopt as a number", { adopt: 1 }, "adopt", "must be true or false, not the number 1"],
            ["adopt as an object", { adopt: {} }, "adopt", "must be true or false, not an object"],
        ];

        for (const [what, overrides, property, fragment] of table) {
            it(`refuses ${what} at ${property}`, () => {
                const { failures } = check(overrides);
                assert.equal(failures.length, 1, JSON.stringify(failures));
                assert.equal(failures[0]?.property, property);
                assert.ok(
                    failures[0]?.reason.includes(fragment),
                    `${JSON.stringify(failures[0]?.reason)} lacks ${JSON.stringify(fragment)}`,
                );
            });
        }

        it("reports every failure at once, one per bad property", () => {
            const { failures } = check({
                address: "x",
                names: ["ok.internal", "bad_name", "x y"],
                comment: "\n",
                adopt: 0,
            });
            assert.deepEqual(
                failures.map((f) => f.property),
                ["address", "names[1]", "names[2]", "comment", "adopt"],
            );
        });

        it("never shows a raw control, format or line-separator character in a reason, only escapes", () => {
            // describeCharacter calls all of these "control characters"; quote() promises to escape them.
            const nasty = ["\n", "\r", "\0", "\x1b", "\x7f", "\u0085", "\u2028", "\u2029", "\u202e", "\u200b"];
            const shownRaw: string[] = [];
            for (const c of nasty) {
                const { failures } = check({ address: `10.0.0.5${c}`, names: [`a${c}b`], file: `/x${c}` });
                assert.deepEqual(
                    failures.slice(0, 2).map((f) => f.property),
                    ["address", "names[0]"],
                );
                const raw = failures.some(({ reason }) => /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(reason));
                if (raw) shownRaw.push(`U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`);
            }
            assert.deepEqual(shownRaw, [], "these characters appear raw in failure reasons");
        });
    });

    describe("normalizes good input", () => {
        it("keeps a valid entry as it is", () => {
            assert.deepEqual(check(), { inputs: GOOD, failures: [] });
        });

        it("lowercases names", () => {
            assert.deepEqual(check({ names: ["Web.Internal", "WWW", "a-1.B-2"] }).inputs.names, [
                "web.internal",
                "www",
                "a-1.b-2",
            ]);
        });

        it("accepts names at the length limits: 63-character labels, 253 characters in all", () => {
            const label63 = `${"a".repeat(63)}.example`;
            const name253 = `${"abcdefghi.".repeat(25)}abc`;
            assert.equal(name253.length, 253);
            const { inputs, failures } = check({ names: [label63, name253, "3f4e5d6c7b8a", "x", "0-0"] });
            assert.deepEqual(failures, []);
            assert.deepEqual(inputs.names, [label63, name253, "3f4e5d6c7b8a", "x", "0-0"]);
        });

        const addresses: [string, string][] = [
            ["10.0.0.5", "10.0.0.5"],
            ["255.255.255.255", "255.255.255.255"],
            ["FE80::0:1", "fe80::1"],
            ["::FFFF:a00:5", "::ffff:10.0.0.5"],
            ["0:0:0:0:0:FFFF:10.0.0.5", "::ffff:10.0.0.5"],
            ["2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
            ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
            ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"],
            ["2001:db8::0:1:1:1:1", "2001:db8::1:1:1:1"],
            ["0:0:0:0:0:0:0:1", "::1"],
            ["1:0:0:0:0:0:0:0", "1::"],
            ["0:0:0:0:0:0:0:0", "::"],
            ["1::2:3:4:5:6:7", "1:0:2:3:4:5:6:7"],
            ["1:0:0:2:0:0:0:3", "1:0:0:2::3"],
            ["FE80::1%eth0", "fe80::1%eth0"],
        ];
        for (const [written, canonical] of addresses) {
            it(`writes the address ${written} as ${canonical}`, () => {
                const { inputs, failures } = check({ address: written });
                assert.deepEqual(failures, []);
                assert.equal(inputs.address, canonical);
            });
        }

        it("trims the comment and drops an empty or blank one", () => {
            assert.equal(check({ comment: "  the app server  " }).inputs.comment, "the app server");
            for (const comment of ["", "   ", "\u00a0", undefined, null]) {
                const { inputs, failures } = check({ comment });
                assert.deepEqual(failures, []);
                assert.ok(!("comment" in inputs), `comment ${JSON.stringify(comment)} should be dropped`);
            }
        });

        it("keeps # and non-ASCII text in a comment", () => {
            assert.equal(check({ comment: "ticket #42, caf\u00e9" }).inputs.comment, "ticket #42, caf\u00e9");
        });

        it("defaults adopt to false and keeps true", () => {
            assert.equal(check({ adopt: undefined }).inputs.adopt, false);
            assert.equal(check({ adopt: null }).inputs.adopt, false);
            assert.equal(check({ adopt: true }).inputs.adopt, true);
        });

        it("takes the file from the callback only when none is given", () => {
            let calls = 0;
            const defaultFile = () => {
                calls++;
                return "C:\\Windows\\System32\\drivers\\etc\\hosts";
            };
            assert.equal(check({}, defaultFile).inputs.file, "/tmp/test.hosts");
            assert.equal(calls, 0);
            assert.equal(
                check({ file: undefined }, defaultFile).inputs.file,
                "C:\\Windows\\System32\\drivers\\etc\\hosts",
            );
            assert.equal(calls, 1);
            assert.deepEqual(check({ file: undefined }, () => "").failures, [
                { property: "file", reason: "must be the path of a hosts file, not an empty string" },
            ]);
        });

        it("keeps only the inputs it knows", () => {
            const { inputs } = check({ line: 3, __provider: "x", extra: true });
            assert.deepEqual(Object.keys(inputs).sort(), ["address", "adopt", "comment", "file", "names"]);
        });
    });

    describe("unknown preview values", () => {
        for (const field of ["address", "names", "comment", "file", "adopt"]) {
            it(`passes an unknown ${field} through untouched`, () => {
                let called = false;
                const { inputs, failures } = check({ [field]: UNKNOWN }, () => {
                    called = true;
                    return DEFAULT_FILE;
                });
                assert.deepEqual(failures, []);
                assert.equal((inputs as unknown as Record<string, unknown>)[field], UNKNOWN);
                assert.equal(called, false);
            });
        }

        it("passes unknown names inside the list through, checking the known ones", () => {
            const { inputs, failures } = check({ names: ["Web.Internal", UNKNOWN, "bad_name"] });
            assert.deepEqual(inputs.names, ["web.internal", UNKNOWN, "bad_name"]);
            assert.deepEqual(
                failures.map((f) => f.property),
                ["names[2]"],
            );
        });

        it("passes every field unknown at once", () => {
            const all = { address: UNKNOWN, names: UNKNOWN, comment: UNKNOWN, file: UNKNOWN, adopt: UNKNOWN };
            assert.deepEqual(check(all), { inputs: all, failures: [] });
        });
    });

    describe("over seeded random input", () => {
        const SEED_ADDRESSES = ["10.0.0.5", "192.168.1.10", "::1", "fe80::1%eth0", "2001:db8::1", "::ffff:10.0.0.5"];
        const SEED_NAMES = ["web.internal", "a", "x-1.example.com", "3f4e5d6c7b8a", "ip6-localhost"];

        /** A random character: mostly ones a hostname or address may hold, often ones it must not. */
        function character(random: () => number): string {
            return random() < 0.6 ? pick(random, SAFE) : pick(random, NASTY);
        }

        /** A random string, or a valid seed with a random character inserted or substituted. */
        function candidate(random: () => number, seeds: readonly string[]): string {
            if (random() < 0.3) {
                let text = "";
                const length = Math.floor(random() * 12);
                for (let i = 0; i < length; i++) text += character(random);
                return text;
            }
            const seed = pick(random, seeds);
            const at = Math.floor(random() * (seed.length + 1));
            const replaced = random() < 0.5 ? 1 : 0;
            return seed.slice(0, at) + character(random) + seed.slice(at + replaced);
        }

        it("never accepts an address or name holding whitespace, # or a control character", () => {
            const random = seededRandom(0x5eed);
            let acceptedAddresses = 0;
            let acceptedNames = 0;
            for (let i = 0; i < 20_000; i++) {
                const address = candidate(random, SEED_ADDRESSES);
                const names = [candidate(random, SEED_NAMES), candidate(random, SEED_NAMES)];
                const { inputs, failures } = check({ address, names });
                const failed = new Set(failures.map((f) => f.property));
                if (!failed.has("address")) {
                    acceptedAddresses++;
                    assert.doesNotMatch(inputs.address, FORBIDDEN_IN_FILE, JSON.stringify(address));
                    assert.notEqual(isIP(inputs.address), 0, JSON.stringify(address));
                }
                inputs.names.forEach((name, index) => {
                    if (failed.has(`names[${index}]`)) return;
                    acceptedNames++;
                    assert.match(name, /^[a-z0-9.-]+$/, JSON.stringify(names[index]));
                    assert.doesNotMatch(name, FORBIDDEN_IN_FILE);
                });
            }
            assert.ok(acceptedAddresses > 1000 && acceptedNames > 5000, `${acceptedAddresses} / ${acceptedNames}`);
        });

        it("writes every accepted entry as a line that reads back as the same entry", () => {
            const random = seededRandom(0xc0ffee);
            const printable = [...SAFE, " ", " ", "#", "\u00a0", "\u00fc", "\u200b", "\u4e2d", "\ufeff", "\u{1f600}"];
            let accepted = 0;
            for (let i = 0; i < 30_000; i++) {
                let comment = "";
                const length = Math.floor(random() * 16);
                for (let j = 0; j < length; j++) comment += pick(random, random() < 0.03 ? NASTY : printable);
                const { inputs, failures } = check({
                    address: candidate(random, SEED_ADDRESSES),
                    names: [candidate(random, SEED_NAMES)],
                    comment,
                });
                if (failures.length > 0) continue;
                accepted++;
                const line = fromUtf8(renderLine(inputs));
                assert.ok(!line.includes("\n") && !line.includes("\r"), JSON.stringify(line));
                const parsed = parseEntry(line);
                assert.ok(parsed, JSON.stringify(line));
                assert.deepEqual(
                    { address: parsed.address, names: parsed.names, comment: parsed.comment },
                    { address: inputs.address, names: inputs.names, comment: inputs.comment },
                );
            }
            assert.ok(accepted > 1000, `${accepted}`);
        });

        it("writes random IPv6 addresses in RFC 5952 form, equal to what was written", () => {
            const random = seededRandom(6);
            for (let i = 0; i < 5_000; i++) {
                const written = randomIpv6(random);
                assert.ok(isIPv6(written), `generator produced ${written}`);
                const { inputs, failures } = check({ address: written });
                assert.deepEqual(failures, [], written);
                const canonical = inputs.address;
                assertRfc5952(canonical, written);
                const same = new BlockList();
                same.addAddress(written, "ipv6");
                assert.ok(same.check(canonical, "ipv6"), `${canonical} is not ${written}`);
                assert.equal(check({ address: canonical }).inputs.address, canonical, "canonical form is stable");
            }
        });
    });
});

/** A random IPv6 address in any valid spelling: case, leading zeros, `::` anywhere, dotted tails. */
function randomIpv6(random: () => number): string {
    const mapped = random() < 0.15;
    const groups = Array.from({ length: 8 }, () => (random() < 0.45 ? 0 : Math.floor(random() * 0x10000)));
    if (mapped) groups.splice(0, 6, 0, 0, 0, 0, 0, 0xffff);
    const dottedTail = mapped ? random() < 0.7 : random() < 0.1;
    const spell = (g: number) => {
        const hex = g.toString(16).padStart(Math.floor(random() * 5), "0");
        return random() < 0.5 ? hex.toUpperCase() : hex;
    };
    const words = groups.map(spell);
    if (dottedTail) {
        const [hi, lo] = [groups[6] ?? 0, groups[7] ?? 0];
        words.splice(6, 2, `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`);
    }
    // Compress one run of zero groups (possibly a single group) into "::", if any.
    const runs: [number, number][] = [];
    for (let start = 0; start < words.length; start++) {
        for (let end = start; end < words.length && groups[end] === 0 && !(dottedTail && end >= 6); end++) {
            runs.push([start, end + 1]);
        }
    }
    if (runs.length === 0 || random() < 0.2) return words.join(":");
    const [from, to] = pick(random, runs);
    return `${words.slice(0, from).join(":")}::${words.slice(to).join(":")}`;
}

/** Asserts that `text` is the RFC 5952 spelling (section 4) of an address without zone. */
function assertRfc5952(text: string, written: string): void {
    const context = `${written} -> ${text}`;
    assert.equal(text, text.toLowerCase(), context);
    if (text.startsWith("::ffff:") && text.includes(".")) {
        assert.match(text, /^::ffff:(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/, context);
        return;
    }
    assert.ok(!text.includes("."), `only IPv4-mapped addresses use dotted notation: ${context}`);
    const parts = text.split("::");
    assert.ok(parts.length <= 2, context);
    const groupsOf = (part: string | undefined) => (part ? part.split(":") : []);
    const head = groupsOf(parts[0]);
    const tail = groupsOf(parts[1]);
    for (const group of [...head, ...tail]) assert.match(group, /^(0|[1-9a-f][0-9a-f]{0,3})$/, context);
    const longestRun = (groups: string[]) => {
        let best = 0;
        let run = 0;
        for (const g of groups) {
            run = g === "0" ? run + 1 : 0;
            best = Math.max(best, run);
        }
        return best;
    };
    if (parts.length === 1) {
        assert.equal(head.length, 8, context);
        assert.ok(longestRun(head) < 2, `a run of zero groups must be compressed: ${context}`);
        return;
    }
    const compressed = 8 - head.length - tail.length;
    assert.ok(compressed >= 2, `"::" must stand for two or more groups: ${context}`);
    assert.ok(longestRun(head) < compressed, `the first longest run must be compressed: ${context}`);
    assert.ok(longestRun(tail) <= compressed, `the longest run must be compressed: ${context}`);
    const groups = [...head, ...Array<string>(compressed).fill("0"), ...tail];
    assert.ok(!(groups.slice(0, 5).every((g) => g === "0") && groups[5] === "ffff"), `mapped needs dots: ${context}`);
}
