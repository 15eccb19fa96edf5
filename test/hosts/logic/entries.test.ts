// Guards the entry operations on a HostsDocument: the row-4 conflict (and its message), adopt and its
// mismatch report, one name per address family, in-place update and its conflicts, idempotent delete,
// which line is the entry's line, and the resource id format.

import { strict as assert } from "node:assert";
import { AdoptMismatchError } from "../../../provider/hosts/errors/adoptMismatchError";
import { EntryConflictError } from "../../../provider/hosts/errors/entryConflictError";
import { EntryMissingError } from "../../../provider/hosts/errors/entryMissingError";
import {
    createEntry,
    type DesiredEntry,
    deleteEntry,
    differencesFrom,
    type EntryIdentity,
    findEntryLine,
    formatId,
    identityOf,
    parseId,
    readEntry,
    renderLine,
    updateEntry,
} from "../../../provider/hosts/logic/entries";
import { parseEntry } from "../../../provider/hosts/logic/hostsDocument";
import { parseText } from "../../support/hostsFixtures";

const FILE = "/tmp/test.hosts";
const WEB: DesiredEntry = { address: "10.0.0.5", names: ["web.internal", "www.internal"], comment: "app" };
const WEB_ID: EntryIdentity = { family: "ipv4", name: "web.internal" };
const CREATE = { adopt: false, file: FILE };
const ADOPT = { adopt: true, file: FILE };

/** Runs `action`, asserts it throws an instance of `type`, and returns the error for further checks. */
function thrown<T extends Error>(type: new (...args: never[]) => T, action: () => unknown): T {
    try {
        action();
    } catch (error) {
        assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
        return error;
    }
    assert.fail(`expected ${type.name}, but nothing was thrown`);
}

describe("hosts entries", () => {
    describe("createEntry", () => {
        it("appends the entry as address, a tab, the names and an inline comment", () => {
            const doc = parseText("127.0.0.1 localhost\n");
            const { line, adopted } = createEntry(doc, WEB, CREATE);
            assert.equal(adopted, false);
            assert.equal(line.text, "10.0.0.5\tweb.internal www.internal # app");
            assert.equal(doc.toBuffer().toString(), "127.0.0.1 localhost\n10.0.0.5\tweb.internal www.internal # app\n");
            assert.equal(renderLine({ address: "::1", names: ["a"] }), "::1\ta");
            assert.equal(renderLine({ address: "::1", names: ["a"], comment: "" }), "::1\ta");
        });

        it("refuses a name already on a line of its family, saying the file, line number and text, and suggesting adopt: true", () => {
            const doc = parseText(
                "# header\n127.0.0.1 localhost\n10.0.0.9\tother.internal  WWW.internal # hand-made\n",
            );
            const error = thrown(EntryConflictError, () => createEntry(doc, WEB, CREATE));
            assert.equal(error.name, "EntryConflictError");
            assert.equal(error.file, FILE);
            assert.equal(error.operation, "create");
            assert.deepEqual(error.conflicts, [
                { lineNumber: 3, text: "10.0.0.9\tother.internal  WWW.internal # hand-made", names: ["www.internal"] },
            ]);
            assert.ok(error.message.startsWith('hosts entry "web.internal" (IPv4) cannot be created: /tmp/test.hosts'));
            assert.ok(
                error.message.includes(
                    '"www.internal" at line 3: "10.0.0.9\\tother.internal  WWW.internal # hand-made"',
                ),
                error.message,
            );
            assert.ok(error.message.includes("set `adopt: true`"), error.message);
            assert.ok(error.message.includes("hosts import --file /tmp/test.hosts"), error.message);
            assert.equal(doc.revision, 0, "a refused create edits nothing");
        });

        it("lists every conflicting line in file order, with the names each one carries", () => {
            const doc = parseText("10.0.0.8 www.internal\n10.0.0.7 web.internal\n");
            const error = thrown(EntryConflictError, () => createEntry(doc, WEB, CREATE));
            assert.deepEqual(
                error.conflicts.map((c) => [c.lineNumber, c.names]),
                [
                    [1, ["www.internal"]],
                    [2, ["web.internal"]],
                ],
            );
        });

        it("adopts an identical existing line without editing the document", () => {
            const text = "127.0.0.1 localhost\n  10.0.0.5   Web.Internal\twww.internal   #   app  \n";
            const doc = parseText(text);
            const { line, adopted } = createEntry(doc, WEB, ADOPT);
            assert.equal(adopted, true);
            assert.equal(doc.lineNumber(line), 2);
            assert.equal(doc.revision, 0);
            assert.equal(doc.toBuffer().toString(), text);
        });

        it("adopts an IPv6 line written in a different but equal spelling", () => {
            const doc = parseText("2001:DB8:0:0:0:0:0:1 v6.internal\n");
            const { adopted } = createEntry(doc, { address: "2001:db8::1", names: ["v6.internal"] }, ADOPT);
            assert.equal(adopted, true);
            assert.equal(doc.revision, 0);
        });

        it("refuses to adopt a differing line, naming each difference", () => {
            const doc = parseText("10.0.0.9 web.internal old.internal # old\n");
            const desired = { address: "10.0.0.5", names: ["web.internal", "api.internal"], comment: "new" };
            const error = thrown(AdoptMismatchError, () => createEntry(doc, desired, ADOPT));
            assert.deepEqual(error.differences, [
                { field: "address", inFile: "10.0.0.9", inProgram: "10.0.0.5" },
                {
                    field: "names",
                    inFile: ["web.internal", "old.internal"],
                    inProgram: ["web.internal", "api.internal"],
                },
                { field: "comment", inFile: "old", inProgram: "new" },
            ]);
            for (const fragment of [
                'the line 1 "10.0.0.9 web.internal old.internal # old" differs from the program',
                'address: the file has "10.0.0.9", the program has "10.0.0.5"',
                "names: the file has [web.internal, old.internal], the program has [web.internal, api.internal]",
                'comment: the file has "old", the program has "new"',
            ]) {
                assert.ok(error.message.includes(fragment), `${fragment} missing from: ${error.message}`);
            }
            assert.equal(doc.revision, 0);
        });

        it("refuses to adopt when only the comment differs, showing a missing comment as none", () => {
            const doc = parseText("10.0.0.5 web.internal www.internal\n");
            const error = thrown(AdoptMismatchError, () => createEntry(doc, WEB, ADOPT));
            assert.deepEqual(error.differences, [{ field: "comment", inFile: undefined, inProgram: "app" }]);
            assert.ok(error.message.includes('comment: the file has none, the program has "app"'), error.message);
        });

        it("refuses to adopt names spread over two lines, listing both", () => {
            const doc = parseText("10.0.0.5 web.internal # app\n# between\n10.0.0.5 www.internal # app\n");
            const error = thrown(AdoptMismatchError, () => createEntry(doc, WEB, ADOPT));
            assert.deepEqual(
                error.lines.map((l) => [l.lineNumber, l.text]),
                [
                    [1, "10.0.0.5 web.internal # app"],
                    [3, "10.0.0.5 www.internal # app"],
                ],
            );
            assert.ok(error.message.includes("its names are on 2 lines"), error.message);
            assert.ok(error.message.includes('line 1: "10.0.0.5 web.internal # app"'), error.message);
            assert.ok(error.message.includes('line 3: "10.0.0.5 www.internal # app"'), error.message);
            assert.equal(doc.revision, 0);
        });

        it("appends as usual when adopt finds nothing to adopt", () => {
            const doc = parseText("127.0.0.1 localhost\n");
            const { adopted } = createEntry(doc, WEB, ADOPT);
            assert.equal(adopted, false);
            assert.equal(doc.revision, 1);
        });

        it("lets the same name exist once for IPv4 and once for IPv6", () => {
            const doc = parseText("10.0.0.5 web.internal\n");
            const { line } = createEntry(doc, { address: "fd00::5", names: ["web.internal"] }, CREATE);
            assert.equal(doc.lineNumber(line), 2);
            assert.equal(readEntry(doc, { family: "ipv4", name: "web.internal" })?.address, "10.0.0.5");
            assert.equal(readEntry(doc, { family: "ipv6", name: "web.internal" })?.address, "fd00::5");
            thrown(EntryConflictError, () => createEntry(doc, { address: "fd00::6", names: ["web.internal"] }, CREATE));
        });

        it("treats an IPv4-mapped IPv6 address as IPv6, beside the same name on IPv4", () => {
            const doc = parseText("10.0.0.5 web.internal\n");
            createEntry(doc, { address: "::ffff:10.0.0.5", names: ["web.internal"] }, CREATE);
            assert.equal(readEntry(doc, { family: "ipv6", name: "web.internal" })?.address, "::ffff:10.0.0.5");
        });

        it("compares names ASCII-case-insensitively only, as resolvers do: a Kelvin sign (U+212A) is not a k", () => {
            // glibc and the Windows resolver fold ASCII case only, so "wor\u212Aer.lab" does not resolve
            // "worker.lab": the line is neither the entry nor a conflict with it.
            const doc = parseText("10.0.0.9 wor\u212Aer.lab\n");
            assert.equal(readEntry(doc, { family: "ipv4", name: "worker.lab" }), undefined);
            const { adopted } = createEntry(doc, { address: "10.0.0.9", names: ["worker.lab"] }, ADOPT);
            assert.equal(adopted, false, "the look-alike line must not be adopted");
        });
    });

    describe("updateEntry", () => {
        it("rewrites the entry's line in place with the new address, aliases and comment", () => {
            const doc = parseText("# top\n10.0.0.5\tweb.internal www.internal # app\n127.0.0.1 localhost\n");
            const desired = { address: "10.0.0.6", names: ["web.internal", "api.internal"], comment: "moved" };
            const { line, changed } = updateEntry(doc, WEB_ID, desired, { file: FILE });
            assert.equal(changed, true);
            assert.equal(doc.lineNumber(line), 2);
            assert.equal(
                doc.toBuffer().toString(),
                "# top\n10.0.0.6\tweb.internal api.internal # moved\n127.0.0.1 localhost\n",
            );
        });

        it("fails with EntryMissingError when the line was removed outside Pulumi", () => {
            const doc = parseText("127.0.0.1 localhost\n# 10.0.0.5 web.internal www.internal # app\n");
            const error = thrown(EntryMissingError, () => updateEntry(doc, WEB_ID, WEB, { file: FILE }));
            assert.equal(error.name, "EntryMissingError");
            assert.equal(error.file, FILE);
            assert.ok(error.message.includes('hosts entry "web.internal" (IPv4) is no longer in /tmp/test.hosts'));
            assert.ok(error.message.includes("pulumi refresh"), error.message);
            assert.equal(doc.revision, 0);
        });

        it("fails with EntryMissingError when the name is only on a line of the other family", () => {
            const doc = parseText("fd00::5 web.internal\n");
            thrown(EntryMissingError, () => updateEntry(doc, WEB_ID, WEB, { file: FILE }));
        });

        it("refuses an alias that is already on another line of the family, naming that line", () => {
            const doc = parseText("10.0.0.5 web.internal\n10.0.0.7 api.internal\n");
            const desired = { address: "10.0.0.5", names: ["web.internal", "api.internal"] };
            const error = thrown(EntryConflictError, () => updateEntry(doc, WEB_ID, desired, { file: FILE }));
            assert.equal(error.operation, "update");
            assert.deepEqual(error.conflicts, [
                { lineNumber: 2, text: "10.0.0.7 api.internal", names: ["api.internal"] },
            ]);
            assert.ok(error.message.includes("cannot be updated"), error.message);
            assert.ok(error.message.includes('"api.internal" at line 2: "10.0.0.7 api.internal"'), error.message);
            assert.ok(error.message.includes("Remove the name from that line"), error.message);
            assert.equal(doc.revision, 0);
        });

        it("allows an alias that exists only for the other address family", () => {
            const doc = parseText("10.0.0.5 web.internal\nfd00::7 api.internal\n");
            const desired = { address: "10.0.0.5", names: ["web.internal", "api.internal"] };
            assert.equal(updateEntry(doc, WEB_ID, desired, { file: FILE }).changed, true);
        });

        it("reports no change and edits nothing when the line already says the same", () => {
            const text = "10.0.0.5   WEB.internal\twww.internal #  app \n";
            const doc = parseText(text);
            const { changed } = updateEntry(doc, WEB_ID, WEB, { file: FILE });
            assert.equal(changed, false);
            assert.equal(doc.revision, 0);
            assert.equal(doc.toBuffer().toString(), text);
        });
    });

    describe("deleteEntry", () => {
        it("returns false and edits nothing when the line is already gone", () => {
            const doc = parseText("127.0.0.1 localhost\nfd00::5 web.internal\n");
            assert.equal(deleteEntry(doc, WEB_ID), false);
            assert.equal(doc.revision, 0);
        });

        it("removes only the entry's line", () => {
            const doc = parseText("127.0.0.1 localhost\n10.0.0.5 web.internal\nfd00::5 web.internal\n");
            assert.equal(deleteEntry(doc, WEB_ID), true);
            assert.equal(doc.toBuffer().toString(), "127.0.0.1 localhost\nfd00::5 web.internal\n");
            assert.equal(deleteEntry(doc, WEB_ID), false);
        });
    });

    describe("finding and reading an entry", () => {
        it("prefers the line whose first name is the canonical name over an earlier alias", () => {
            const doc = parseText("10.0.0.1 other.internal web.internal\n10.0.0.5 Web.Internal\n");
            const line = findEntryLine(doc, WEB_ID);
            assert.ok(line);
            assert.equal(doc.lineNumber(line), 2);
        });

        it("falls back to the first line carrying the name as an alias", () => {
            const doc = parseText("10.0.0.1 other.internal web.internal\n10.0.0.2 more.internal web.internal\n");
            const line = findEntryLine(doc, WEB_ID);
            assert.ok(line);
            assert.equal(doc.lineNumber(line), 1);
        });

        it("reads the entry with lowercased names, canonical address, comment and line number", () => {
            const doc = parseText("# one\n\n2001:DB8::0:5   WEB.Internal\tWww.Internal   # Mixed Case \n");
            assert.deepEqual(readEntry(doc, { family: "ipv6", name: "web.internal" }), {
                address: "2001:db8::5",
                family: "ipv6",
                names: ["web.internal", "www.internal"],
                comment: "Mixed Case",
                lineNumber: 3,
            });
            assert.equal(readEntry(doc, WEB_ID), undefined);
        });
    });

    describe("differencesFrom", () => {
        it("finds no difference between an entry and its own rendered line, comment or not", () => {
            for (const entry of [
                WEB,
                { address: "fe80::1%eth0", names: ["a"] },
                { address: "::1", names: ["b"], comment: "caf\u00e9 #1" },
            ]) {
                const parsed = parseEntry(Buffer.from(renderLine(entry), "utf8").toString("latin1"));
                assert.ok(parsed);
                assert.deepEqual(differencesFrom(parsed, entry), []);
            }
        });

        it("treats an empty comment and no comment as the same", () => {
            const parsed = parseEntry("10.0.0.5 web.internal #   ");
            assert.ok(parsed);
            assert.deepEqual(
                differencesFrom(parsed, { address: "10.0.0.5", names: ["web.internal"], comment: "" }),
                [],
            );
        });

        it("counts a different order of names as a difference", () => {
            const parsed = parseEntry("10.0.0.5 www.internal web.internal # app");
            assert.ok(parsed);
            assert.deepEqual(
                differencesFrom(parsed, WEB).map((d) => d.field),
                ["names"],
            );
        });
    });

    describe("identity and ids", () => {
        it("takes the identity from the address family and the first name", () => {
            assert.deepEqual(identityOf(WEB), WEB_ID);
            assert.deepEqual(identityOf({ address: "::ffff:10.0.0.5", names: ["Web.Internal"] }), {
                family: "ipv6",
                name: "web.internal",
            });
            assert.throws(() => identityOf({ address: "web.internal", names: ["x"] }), /checked entry/);
            assert.throws(() => identityOf({ address: "10.0.0.1", names: [] }), /checked entry/);
        });

        it("formats ids as family/name and parses them back", () => {
            for (const identity of [WEB_ID, { family: "ipv6", name: "a-b.c1" }] as EntryIdentity[]) {
                const id = formatId(identity);
                assert.equal(id, `${identity.family}/${identity.name}`);
                assert.deepEqual(parseId(id), identity);
            }
            assert.equal(formatId(WEB_ID), "ipv4/web.internal");
            assert.deepEqual(parseId("ipv6/Web.Internal"), { family: "ipv6", name: "web.internal" });
        });

        it("rejects ids that are not family/name", () => {
            for (const id of [
                "",
                "web.internal",
                "ipv4",
                "ipv4/",
                "/web.internal",
                "ipv5/web.internal",
                "IPV4/web.internal",
                "ipv4/web/internal",
                "ipv4/web internal",
                "ipv4/web.internal\n",
                " ipv4/web.internal",
                "ipv4//web.internal",
            ]) {
                assert.equal(parseId(id), undefined, JSON.stringify(id));
            }
        });
    });
});
