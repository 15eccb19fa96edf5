// Guards `hosts import`'s pure core (planImport, renderImportProgram): which lines become declarations,
// the names they get, that each declaration passes `check` unchanged, and that the printed program is
// valid TypeScript declaring exactly the plan, with nothing from the file escaping a literal or comment.

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import ts from "typescript";
import { checkHostEntry } from "../../../provider/hosts/logic/check";
import { HostsDocument } from "../../../provider/hosts/logic/hostsDocument";
import { type ImportPlan, planImport, renderImportProgram } from "../../../provider/hosts/logic/importer";
import { commentsOf, runProgram, syntaxErrors, typeErrors } from "../../support/generatedProgram";
import { fixture } from "../../support/hostsFixtures";
import { REPO_ROOT } from "../../support/projects";

const FILE = "/etc/hosts";

/** The Debian default hosts file (test/hosts/fixtures/debian.hosts; its host is "bookworm"). */
const DEBIAN = fixture("debian");

function docOf(text: string | Buffer): HostsDocument {
    return HostsDocument.parse(typeof text === "string" ? Buffer.from(text, "utf8") : text);
}

/** Every line, the system's included: what most tests here are about. */
function plan(text: string | Buffer, match?: RegExp): ImportPlan {
    return planImport(docOf(text), { file: FILE, includeSystem: true, ...(match ? { match } : {}) });
}

function render(imported: ImportPlan): string {
    return renderImportProgram(imported, { file: FILE, command: `pulumi-lifecycle hosts import --file ${FILE}` });
}

/** What check says about the values of a line, as planImport words a failure. */
function checkReasons(values: { address: string; names: string[]; comment?: string }): string[] {
    return checkHostEntry({ ...values, file: FILE, adopt: true }, () => FILE).failures.map(
        (failure) => `${failure.property} ${failure.reason}`,
    );
}

/**
 * The program is valid, type-checks against the package, declares exactly the plan's entries, and
 * every skipped line is one `//` comment that gives back the line's exact text.
 */
function assertFaithful(imported: ImportPlan, program: string): void {
    assert.deepEqual(syntaxErrors(program), []);
    assert.deepEqual(typeErrors(program), []);
    assert.deepEqual(
        runProgram(program),
        imported.entries.map(({ variableName, resourceName, args }) => ({
            variableName,
            resourceName,
            args,
            options: { protect: true },
        })),
    );
    assert.doesNotMatch(program.replaceAll("\n", ""), /[\p{C}\p{Zl}\p{Zp}]/u, "only \\n may break a line");
    const statements = ts.createSourceFile("program.ts", program, ts.ScriptTarget.ES2022).statements;
    assert.equal(
        statements.length,
        imported.entries.length === 0 ? 1 : imported.entries.length + 3,
        "one import, one per entry, the exported ids and lines (or only `export {}`)",
    );

    const comments = commentsOf(program);
    assert.ok(comments.every((comment) => comment.kind === "line"));
    const notImported = comments.filter((comment) => comment.text.startsWith("// Not imported:"));
    assert.equal(notImported.length, imported.skipped.length);
    notImported.forEach((comment, index) => {
        const skipped = imported.skipped[index];
        const parsed = /^\/\/ Not imported: line (\d+) ("(?:[^"\\]|\\.)*"): (.*)$/.exec(comment.text);
        assert.ok(parsed && skipped, comment.text);
        assert.equal(Number(parsed[1]), skipped.lineNumber);
        assert.equal(JSON.parse(parsed[2] as string), skipped.text);
        assert.ok((parsed[3] as string).length > 0);
    });
    assert.equal(program.split("\n").filter((line) => line.startsWith("// Not imported:")).length, notImported.length);
}

/** Every declaration is what check returns for it: the provider sees exactly these values. */
function assertCheckedUnchanged(imported: ImportPlan): void {
    for (const entry of imported.entries) {
        const { inputs, failures } = checkHostEntry({ ...entry.args }, () => "/unused");
        assert.deepEqual(failures, []);
        assert.deepEqual(inputs, entry.args);
    }
}

describe("hosts import: planImport and renderImportProgram", () => {
    it("type-checks with a check that finds a wrong type and an unknown argument, each time it is asked", () => {
        const program = (args: string) =>
            `import { hosts } from "pulumi-lifecycle";\nnew hosts.HostEntry("a", { names: ["a"], ${args} });\n`;
        for (let round = 0; round < 2; round++) {
            assert.deepEqual(typeErrors(program(`address: "10.0.0.1"`)), []);
            assert.match(typeErrors(program("address: 1")).join("\n"), /'number' is not assignable to type/);
            assert.match(typeErrors(program(`address: "10.0.0.1", nope: 1`)).join("\n"), /'nope' does not exist/);
        }
    });

    it("imports the Debian default file, localhost once per family", () => {
        const imported = plan(DEBIAN);
        assert.deepEqual(imported.skipped, []);
        assert.deepEqual(
            imported.entries.map((e) => [e.lineNumber, e.resourceName, e.variableName]),
            [
                [1, "localhost", "localhost"],
                [2, "bookworm.example.org", "bookwormExampleOrg"],
                [5, "localhost-ipv6", "localhostIpv6"],
                [6, "ip6-allnodes-ipv6", "ip6AllnodesIpv6"],
                [7, "ip6-allrouters-ipv6", "ip6AllroutersIpv6"],
            ],
        );
        assert.deepEqual(imported.entries[1]?.args, {
            address: "127.0.1.1",
            names: ["bookworm.example.org", "bookworm"],
            file: FILE,
            adopt: true,
        });
        assert.deepEqual(imported.entries[2]?.args, {
            address: "::1",
            names: ["localhost", "ip6-localhost", "ip6-loopback"],
            file: FILE,
            adopt: true,
        });
        assertCheckedUnchanged(imported);
        const program = render(imported);
        assertFaithful(imported, program);
        assert.match(program, /^\/\/ Generated by `pulumi-lifecycle hosts import --file \/etc\/hosts`/);
        assert.match(program, /`adopt: true`: the first `pulumi up` takes over the identical line/);
        assert.match(program, /^import \{ hosts \} from "pulumi-lifecycle";$/m);
        assert.ok(
            program.includes(
                "const localhost = new hosts.HostEntry(\n" +
                    '    "localhost",\n' +
                    "    {\n" +
                    '        address: "127.0.0.1",\n' +
                    '        names: ["localhost"],\n' +
                    '        file: "/etc/hosts",\n' +
                    "        adopt: true,\n" +
                    "    },\n" +
                    "    { protect: true },\n" +
                    ");\n",
            ),
            program,
        );
        assert.match(
            program,
            /^export const ids = \{\n {4}localhost: localhost\.id,\n {4}bookwormExampleOrg: bookwormExampleOrg\.id,/m,
        );
        assert.match(program, /^export const lines = \{\n {4}localhost: localhost\.line,/m);
        assert.match(program, /Every entry is protected, as `pulumi import` protects what it imports/);
    });

    it("leaves the operating system's own lines out by default, saying why and how to include them", () => {
        const text =
            `${DEBIAN.toString("utf8")}255.255.255.255\tbroadcasthost\n172.17.0.2\tbuildbox\n` +
            "10.0.0.5\tweb.internal\n10.0.0.9\tbuildbox.example.org\n";
        const imported = planImport(docOf(text), { file: FILE, hostname: "buildbox" });
        assert.deepEqual(
            imported.entries.map((e) => [e.lineNumber, e.resourceName]),
            [[10, "web.internal"]],
        );
        const reasons = new Map(imported.skipped.map((s) => [s.lineNumber, s.reason]));
        assert.match(reasons.get(1) ?? "", /^a loopback line, which belongs to the operating system; pass --all/);
        assert.match(reasons.get(2) ?? "", /^a loopback line/);
        assert.match(reasons.get(5) ?? "", /^an IPv6 loopback, multicast or local-network line/);
        assert.match(reasons.get(6) ?? "", /^an IPv6 loopback, multicast or local-network line/);
        assert.match(reasons.get(8) ?? "", /^the broadcast line/);
        assert.match(reasons.get(9) ?? "", /^a line naming this machine/);
        assert.match(reasons.get(11) ?? "", /^a line naming this machine/, "its full name too");
        assertFaithful(imported, render(imported));
    });

    it("is laid out as Biome lays it out, protected or not, so a formatter leaves it as it is", () => {
        const imported = plan(DEBIAN);
        for (const protect of [true, false]) {
            const program = renderImportProgram(imported, { file: FILE, command: "c", protect });
            const formatted = execFileSync(
                join(REPO_ROOT, "node_modules", ".bin", "biome"),
                ["format", "--stdin-file-path=program.ts"],
                {
                    input: program,
                    encoding: "utf8",
                },
            );
            assert.equal(formatted, program, `protect: ${protect}`);
        }
    });

    it("declares entries without protection when asked", () => {
        const imported = plan("10.0.0.5\tweb.internal\n");
        const program = renderImportProgram(imported, { file: FILE, command: "c", protect: false });
        assert.doesNotMatch(program, /protect/);
        assert.deepEqual(runProgram(program)[0]?.options, undefined);
    });

    it("declares canonical addresses, lowercase names and the comment, as check normalizes them", () => {
        const imported = plan(
            "10.0.0.5  Web.Internal\tAPI.internal   #  web tier  \nFE80:0:0:0:0:0:0:1 Router.LAN\n10.0.0.6 db #\n",
        );
        assert.deepEqual(
            imported.entries.map((e) => e.args),
            [
                {
                    address: "10.0.0.5",
                    names: ["web.internal", "api.internal"],
                    comment: "web tier",
                    file: FILE,
                    adopt: true,
                },
                { address: "fe80::1", names: ["router.lan"], file: FILE, adopt: true },
                { address: "10.0.0.6", names: ["db"], file: FILE, adopt: true },
            ],
        );
        assertCheckedUnchanged(imported);
        assertFaithful(imported, render(imported));
    });

    it("skips every IPv4 line sharing a name, naming the other line, and keeps the IPv6 line", () => {
        const text = [
            "127.0.0.1 localhost",
            "10.0.0.1 web.internal api.internal   # old web server",
            "10.0.0.2 web.internal                # new web server",
            "10.0.0.3 db.internal",
            "fd00::1 web.internal",
        ].join("\n");
        const imported = plan(text);
        assert.deepEqual(
            imported.entries.map((e) => e.resourceName),
            ["localhost", "db.internal", "web.internal-ipv6"],
        );
        assert.deepEqual(
            imported.skipped.map((s) => [s.lineNumber, s.text]),
            [
                [2, "10.0.0.1 web.internal api.internal   # old web server"],
                [3, "10.0.0.2 web.internal                # new web server"],
            ],
        );
        const [second, third] = imported.skipped;
        assert.match(second?.reason ?? "", /"web\.internal" on line 3 "10\.0\.0\.2 web\.internal +# new web server"/);
        assert.match(third?.reason ?? "", /"web\.internal" on line 2 "10\.0\.0\.1 web\.internal api\.internal/);
        for (const skipped of imported.skipped) {
            assert.match(skipped.reason, /^another line carries its IPv4 names .*merge these lines into one first$/);
        }
        assertFaithful(imported, render(imported));
    });

    it("skips a chain of lines sharing names, each reason naming all its partners", () => {
        const imported = plan("10.0.0.1 a b\n10.0.0.2 b c\n10.0.0.3 c d\n10.0.0.4 e\n");
        assert.deepEqual(
            imported.entries.map((e) => e.resourceName),
            ["e"],
        );
        assert.deepEqual(
            imported.skipped.map((s) => s.lineNumber),
            [1, 2, 3],
        );
        assert.match(imported.skipped[1]?.reason ?? "", /"b" on line 1 "10\.0\.0\.1 a b", and "c" on line 3/);
    });

    it("skips lines whose values check refuses, with check's reason, and lines they block", () => {
        const lines = [
            "10.0.0.1 good.internal",
            "10.0.0.2 bad_name.internal",
            "10.0.0.3 12345",
            "10.0.0.4 dup DUP",
            "10.0.0.5 trailing.dot.",
            "10.0.0.6 tabbed # a\tcomment",
            "10.0.0.7 shared bad_alias",
            "10.0.0.8 shared",
        ];
        const imported = plan(lines.join("\n"));
        assert.deepEqual(
            imported.entries.map((e) => e.resourceName),
            ["good.internal"],
        );
        const reasons = new Map(imported.skipped.map((s) => [s.lineNumber, s.reason]));
        assert.equal(reasons.get(2), checkReasons({ address: "10.0.0.2", names: ["bad_name.internal"] }).join("; "));
        assert.match(reasons.get(2) ?? "", /^names\[0\] "bad_name\.internal" contains "_"/);
        assert.equal(reasons.get(3), checkReasons({ address: "10.0.0.3", names: ["12345"] }).join("; "));
        assert.equal(reasons.get(4), checkReasons({ address: "10.0.0.4", names: ["dup", "DUP"] }).join("; "));
        assert.equal(reasons.get(5), checkReasons({ address: "10.0.0.5", names: ["trailing.dot."] }).join("; "));
        assert.equal(
            reasons.get(6),
            checkReasons({ address: "10.0.0.6", names: ["tabbed"], comment: "a\tcomment" }).join("; "),
        );
        // Line 7 is refused by check, and it still makes adopting line 8 impossible (createEntry sees both).
        assert.match(reasons.get(7) ?? "", /"shared" on line 8.*; names\[1\] "bad_alias" contains "_"/);
        assert.match(reasons.get(8) ?? "", /"shared" on line 7 "10\.0\.0\.7 shared bad_alias"/);
        assertFaithful(imported, render(imported));
    });

    it("reports lines resolvers ignore, but not blank lines and comments", () => {
        const imported = plan("# comment\n\n   \nlocalhost 127.0.0.1\n10.0.0.300 web\n10.0.0.1\n10.0.0.2 ok # fine\n");
        assert.deepEqual(
            imported.entries.map((e) => e.lineNumber),
            [7],
        );
        assert.deepEqual(
            imported.skipped.map((s) => [s.lineNumber, s.reason]),
            [
                [4, '"localhost" is not an IPv4 or IPv6 address, so resolvers ignore this line'],
                [5, '"10.0.0.300" is not an IPv4 or IPv6 address, so resolvers ignore this line'],
                [6, "the address has no names, so resolvers ignore this line"],
            ],
        );
    });

    describe("--match", () => {
        const text = [
            "127.0.0.1 localhost",
            "10.0.0.1 web.internal www.internal",
            "10.0.0.2 db.internal",
            "FE80:0:0:0:0:0:0:1 router.lan",
            "10.0.0.3 bad_name.internal",
            "10.0.0.4 api.internal",
            "10.0.0.5 api.internal",
            "10.0.0.6 Mixed.Case",
        ].join("\n");

        it("keeps lines whose canonical name or an alias matches, and reports only matching skipped lines", () => {
            const imported = plan(text, /internal$/);
            assert.deepEqual(
                imported.entries.map((e) => e.resourceName),
                ["web.internal", "db.internal"],
            );
            assert.deepEqual(
                imported.skipped.map((s) => s.lineNumber),
                [5, 6, 7],
            );
            assert.deepEqual(
                plan(text, /^www\./).entries.map((e) => e.resourceName),
                ["web.internal"],
            );
        });

        it("matches the address canonical or as written, and names as written or lowercase", () => {
            assert.deepEqual(
                plan(text, /^fe80::1$/).entries.map((e) => e.resourceName),
                ["router.lan-ipv6"],
            );
            assert.deepEqual(
                plan(text, /^FE80:0:/).entries.map((e) => e.resourceName),
                ["router.lan-ipv6"],
            );
            assert.deepEqual(
                plan(text, /^10\.0\.0\.2$/).entries.map((e) => e.resourceName),
                ["db.internal"],
            );
            assert.deepEqual(
                plan(text, /^Mixed\./).entries.map((e) => e.resourceName),
                ["mixed.case"],
            );
            assert.deepEqual(
                plan(text, /^mixed\./).entries.map((e) => e.resourceName),
                ["mixed.case"],
            );
        });

        it("gives the same answer for every line with a global or sticky pattern", () => {
            const global = /internal/g;
            assert.deepEqual(
                plan(text, global).entries.map((e) => e.resourceName),
                ["web.internal", "db.internal"],
            );
            assert.equal(global.lastIndex, 0, "the caller's pattern is left as it was");
            assert.deepEqual(
                plan(text, /l/y).entries.map((e) => e.resourceName),
                ["localhost"],
            );
        });

        it("still skips a matching line whose name is on a line the pattern leaves out", () => {
            const imported = plan(text, /^10\.0\.0\.4$/);
            assert.deepEqual(imported.entries, []);
            assert.deepEqual(
                imported.skipped.map((s) => s.lineNumber),
                [6],
            );
            assert.match(imported.skipped[0]?.reason ?? "", /"api\.internal" on line 7 "10\.0\.0\.5 api\.internal"/);
            assertFaithful(imported, render(imported));
        });
    });

    it("makes resource and variable names unique, valid and never reserved", () => {
        const text = [
            "10.0.0.1 db-ipv6",
            "fd00::1 db",
            "10.0.0.2 db-ipv6-2",
            "10.0.0.3 web-internal",
            "10.0.0.4 web.internal",
            "10.0.0.5 new",
            "10.0.0.6 new-host",
            "10.0.0.7 hosts",
            "10.0.0.8 require",
            "10.0.0.9 1password.example",
            "10.0.0.10 default",
            "10.0.0.11 undefined",
            "10.0.0.12 eval",
            "10.0.0.13 exports",
            "fd00::2 class",
            "10.0.0.14 3com",
            "10.0.0.15 constructor",
            "10.0.0.16 a--b",
        ].join("\n");
        const imported = plan(text);
        assert.deepEqual(imported.skipped, []);
        assert.deepEqual(
            imported.entries.map((e) => [e.resourceName, e.variableName]),
            [
                ["db-ipv6", "dbIpv6"],
                ["db-ipv6-2", "dbIpv62"],
                ["db-ipv6-2-2", "dbIpv622"],
                ["web-internal", "webInternal"],
                ["web.internal", "webInternal2"],
                ["new", "newHost"],
                ["new-host", "newHost2"],
                ["hosts", "hostsHost"],
                ["require", "requireHost"],
                ["1password.example", "host1passwordExample"],
                ["default", "defaultHost"],
                ["undefined", "undefinedHost"],
                ["eval", "evalHost"],
                ["exports", "exportsHost"],
                ["class-ipv6", "classIpv6"],
                ["3com", "host3com"],
                ["constructor", "constructor"],
                ["a--b", "aB"],
            ],
        );
        assertFaithful(imported, render(imported));
    });

    it("keeps hostile text inside literals and comments", () => {
        // A template placeholder, spelled so that it is one in no source file.
        const placeholder = ["$", "{x}"].join("");
        const quotes = `say "hi" \\ and \\\\ and ${placeholder} and \`tick\` and */ and /* and </script> and \\u2028`;
        const lines = [
            `10.0.0.1 quotes.test # ${quotes}`,
            "10.0.0.2 bidi.test # \u202Ereversed\u202C \u200Bzero-width \uFEFFbom \u00A0nbsp",
            "10.0.0.3 ls.test # line\u2028separator */ alert(1) /*",
            "10.0.0.4 ps.test # paragraph\u2029separator",
            "10.0.0.5 nel.test # next\u0085line",
            "10.0.0.6 bad\u2028name.test",
            '10.0.0.7 bad"name # */ process.exit(1) //',
            "10.0.0.8 bad\\name\rcr.test",
            "\u2028 10.0.0.9 leading.separator",
            "10.0.0.10 cr.test # carriage\rreturn",
            "*/ 10.0.0.11 after.block.end",
            "10.0.0.12 private.test # \uE000 private \u{E0041} tag",
        ];
        const imported = plan(lines.join("\n"));
        assert.deepEqual(
            imported.entries.map((e) => [e.resourceName, e.args.comment]),
            [["quotes.test", quotes]],
        );
        // Bidi overrides and other invisible format characters can make a line read as another one in an
        // editor; check refuses them in comments, so such a line cannot be adopted and is skipped.
        assert.deepEqual(
            imported.skipped.map((s) => s.lineNumber),
            [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        );
        assert.match(imported.skipped[0]?.reason ?? "", /U\+202E/);
        assert.match(imported.skipped[10]?.reason ?? "", /U\+E0041/);
        assert.deepEqual(imported.skipped[6]?.text, lines[7]);
        const program = render(imported);
        assertFaithful(imported, program);
        assert.ok(
            !program.includes("*/ alert") && !program.includes("*/ process"),
            "no block comment ends in the text",
        );
    });

    it("keeps text that is not UTF-8 as resolvers and the provider read it", () => {
        const bytes = Buffer.concat([Buffer.from("10.0.0.1 nas.lan # caf"), Buffer.from([0xe9]), Buffer.from("\n")]);
        const imported = plan(bytes);
        assert.equal(imported.entries[0]?.args.comment, "caf\uFFFD");
        assertFaithful(imported, render(imported));
    });

    it("escapes the header's command and file too", () => {
        const imported = plan(DEBIAN);
        const program = renderImportProgram(imported, {
            file: "/tmp/x\u2028y */ z",
            command: "pulumi-lifecycle hosts import --match '*/\u2029\n'",
        });
        assertFaithful(imported, program);
        assert.match(program, /^\/\/ Generated by `pulumi-lifecycle hosts import --match '\*\\\/\\u2029\\u000a'`/);
        assert.match(program, /from \/tmp\/x\\u2028y \*\\\/ z\.$/m);
    });

    it("prints a valid program when nothing can be imported", () => {
        const imported = plan("# nothing here\n10.0.0.1 a\n10.0.0.2 a\n");
        assert.deepEqual(imported.entries, []);
        const program = render(imported);
        assert.doesNotMatch(program, /^import /m);
        assert.match(program, /^export \{\};$/m);
        assertFaithful(imported, program);
    });

    it("refuses to render a hand-made plan whose variable name is not an identifier", () => {
        const [entry] = plan(DEBIAN).entries;
        assert.ok(entry);
        for (const variableName of ["x = 1; process.exit(1); const y", "new", "1st", "hosts"]) {
            assert.throws(
                () =>
                    renderImportProgram(
                        { entries: [{ ...entry, variableName }], skipped: [] },
                        { file: FILE, command: "c" },
                    ),
                /cannot name a constant of the generated program/,
            );
        }
    });
});
