// Guards the filter grammar of the task API's datastore list: `<field> eq <value>` clauses joined by
// `and`, quoted or bare values, case-insensitive keywords, and a 1-based position plus what was expected
// in every syntax error; the server parses and applies it (filterParser.ts), a client only formats it
// (tasks/protocol/filter.ts). Pure: no server.

import { strict as assert } from "node:assert";
import { matchesFilter, parseFilter } from "../../provider/taskApiServer/filterParser";
import { FilterSyntaxError } from "../../provider/taskApiServer/filterSyntaxError";
import { formatFilter, quoteValue } from "../../provider/tasks/protocol/filter";
import type { DatastoreRecord } from "../../provider/tasks/protocol/wire";

const DATASTORE: DatastoreRecord = {
    id: "0b9e5a52-6a0e-4a47-8f55-2d7f3e1c1a01",
    type: "virtualization/datastore",
    name: "ds19",
    displayName: "ds19",
    resourceUri: "/virtualization/v1beta1/datastores/0b9e5a52-6a0e-4a47-8f55-2d7f3e1c1a01",
    hciClusterUuid: "a1b2c3d4-0000-4000-8000-000000000001",
    clusterInfo: {
        id: "c0ffee00-0000-4000-8000-000000000002",
        name: "cluster-1",
        displayName: "cluster-1",
        type: "virtualization/hypervisor-cluster",
        resourceUri: "/virtualization/v1beta1/hypervisor-clusters/c0ffee00-0000-4000-8000-000000000002",
    },
    datacentersInfo: [{ id: "7d8051ab-4224-5075-93be-c1c0fa645e7d", name: "datacenter-1" }],
    capacityInBytes: 17179869184,
    datastoreType: "VMFS",
    state: "OK",
    status: "OK",
    createdAt: "2030-01-01T00:00:00.000Z",
    updatedAt: "2030-01-01T00:00:00.000Z",
    generation: 1,
};

/** Asserts `text` fails to parse at `position`, with a message matching `pattern`. */
function assertSyntaxError(text: string, position: number, pattern: RegExp): void {
    assert.throws(
        () => parseFilter(text),
        (error: unknown) => {
            assert.ok(error instanceof FilterSyntaxError, String(error));
            assert.equal(error.position, position, error.message);
            assert.match(error.message, pattern);
            assert.match(error.message, new RegExp(`at position ${position}\\b`));
            return true;
        },
    );
}

describe("task API filter", () => {
    describe("parsing", () => {
        it("reads one clause with a quoted value", () => {
            assert.deepEqual(parseFilter("name eq 'ds19'"), [{ field: "name", value: "ds19" }]);
        });

        it("reads a bare value", () => {
            assert.deepEqual(parseFilter("id eq 0b9e5a52-6a0e-4a47-8f55-2d7f3e1c1a01"), [
                { field: "id", value: "0b9e5a52-6a0e-4a47-8f55-2d7f3e1c1a01" },
            ]);
        });

        it("joins clauses with and, for every field", () => {
            assert.deepEqual(parseFilter("hciClusterUuid eq 'h' and clusterInfo/id eq c and name eq 'n' and id eq i"), [
                { field: "hciClusterUuid", value: "h" },
                { field: "clusterInfo/id", value: "c" },
                { field: "name", value: "n" },
                { field: "id", value: "i" },
            ]);
        });

        it("reads keywords in any case and tolerates extra whitespace", () => {
            assert.deepEqual(parseFilter("  name EQ 'a'   AnD\tid Eq b  "), [
                { field: "name", value: "a" },
                { field: "id", value: "b" },
            ]);
        });

        it("reads '' inside a quoted value as one quote, and keeps spaces and keywords in quotes", () => {
            assert.deepEqual(parseFilter("name eq 'O''Brien and eq x'"), [
                { field: "name", value: "O'Brien and eq x" },
            ]);
            assert.deepEqual(parseFilter("name eq ''''"), [{ field: "name", value: "'" }]);
            assert.deepEqual(parseFilter("name eq ''"), [{ field: "name", value: "" }]);
        });

        it("round-trips any value through formatFilter", () => {
            for (const value of ["ds19", "it's", "''", "a and b", " ", "x eq y"]) {
                assert.deepEqual(parseFilter(formatFilter([{ field: "name", value }])), [{ field: "name", value }]);
            }
            assert.equal(quoteValue("it's"), "'it''s'");
            assert.equal(
                formatFilter([
                    { field: "name", value: "a" },
                    { field: "id", value: "b" },
                ]),
                "name eq 'a' and id eq 'b'",
            );
        });
    });

    describe("syntax errors name the position and what was expected", () => {
        it("an empty filter", () => assertSyntaxError("", 1, /expected a field name .* found the end of the filter/));
        it("an unknown field", () =>
            assertSyntaxError("size eq 1", 1, /expected a field name \(hciClusterUuid, name, clusterInfo\/id, id\)/));
        it("a field in the wrong case", () =>
            assertSyntaxError("Name eq 'x'", 1, /found "Name"; field names are case-sensitive: write name/));
        it("another operator", () => assertSyntaxError("name ne 'x'", 6, /expected "eq" at position 6, found "ne"/));
        it("a missing operator", () => assertSyntaxError("name", 5, /expected a space after name .* the end/));
        it("a missing value", () => assertSyntaxError("name eq", 8, /expected a space after "eq"/));
        it("a missing value after the space", () => assertSyntaxError("name eq ", 9, /expected a value/));
        it("an unterminated quote", () =>
            assertSyntaxError("name eq 'ds19", 14, /expected "'" closing the value that starts at position 9/));
        it("text glued to a quoted value", () =>
            assertSyntaxError("name eq 'a'b", 12, /expected a space or the end of the filter after the quoted value/));
        it("a quote inside a bare value", () =>
            assertSyntaxError("name eq O'Brien", 10, /must be quoted, with the quote doubled: 'O''Brien'/));
        it("something other than and", () =>
            assertSyntaxError("name eq a or id eq b", 11, /expected "and" or the end of the filter .* found "or"/));
        it("a dangling and", () => assertSyntaxError("name eq a and", 14, /expected a space after "and"/));
        it("and without a clause", () => assertSyntaxError("name eq a and ", 15, /expected a field name/));
        it("control characters are escaped in the message", () => {
            assert.throws(() => parseFilter("na\u0007me eq x"), /"na\\u0007me"/);
        });
    });

    describe("matching", () => {
        it("matches when every clause holds", () => {
            const filter = parseFilter(
                `hciClusterUuid eq '${DATASTORE.hciClusterUuid}' and clusterInfo/id eq ${DATASTORE.clusterInfo.id} and name eq 'ds19'`,
            );
            assert.equal(matchesFilter(filter, DATASTORE), true);
            assert.equal(matchesFilter(parseFilter(`id eq ${DATASTORE.id}`), DATASTORE), true);
        });

        it("does not match when one clause fails", () => {
            assert.equal(matchesFilter(parseFilter("name eq 'ds19' and id eq nope"), DATASTORE), false);
            assert.equal(matchesFilter(parseFilter("name eq 'ds1'"), DATASTORE), false);
        });

        it("compares names exactly and ids case-insensitively", () => {
            assert.equal(matchesFilter(parseFilter("name eq 'DS19'"), DATASTORE), false);
            assert.equal(matchesFilter(parseFilter(`id eq ${DATASTORE.id.toUpperCase()}`), DATASTORE), true);
            assert.equal(
                matchesFilter(parseFilter(`hciClusterUuid eq ${DATASTORE.hciClusterUuid.toUpperCase()}`), DATASTORE),
                true,
            );
        });
    });
});
