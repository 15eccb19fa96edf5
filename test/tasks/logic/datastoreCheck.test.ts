// Guards the validation and normalization of tasks.Datastore inputs (provider/tasks/datastoreCheck.ts, the
// provider's check): UUIDs lower-cased, the API's name alphabet and length, whole sizes of at least 1 GiB
// that never shrink in place, datastore types upper-cased, a create token that can be sent as a header
// (printable ASCII without spaces, 1-240 characters, leaving room for the "~n" of later creates), timeouts with known keys and parseable durations,
// adopt and untaint booleans, every failure named by its property, and the engine's unknown sentinel
// passed through untouched during preview. Pure tables.

import { strict as assert } from "node:assert";
import type { DatastoreInputs } from "../../../provider/tasks/datastoreSchema";
import { checkDatastore } from "../../../provider/tasks/logic/datastoreCheck";
import { CLUSTER, datastoreInputs, GIB, HCI, OTHER_UUID, UNKNOWN } from "../client/support";

/** Valid raw inputs: what a program sends for `new tasks.Datastore("ds19", { ... })`. */
const raw = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    name: "ds19",
    hciClusterUuid: HCI,
    clusterId: CLUSTER,
    sizeInBytes: 16 * GIB,
    datastoreType: "VMFS",
    ...overrides,
});

/** Checks `news` against `olds` and asserts there is no failure; resolves with the inputs. */
function accept(news: Record<string, unknown>, olds?: Partial<DatastoreInputs>): DatastoreInputs {
    const { inputs, failures } = checkDatastore(olds, news);
    assert.deepEqual(failures, [], `refused ${JSON.stringify(news)}`);
    return inputs;
}

/** Asserts checking `news` fails exactly once, on `property`, for a reason matching `reason`. */
function refuse(
    news: Record<string, unknown>,
    property: string,
    reason: RegExp,
    olds?: Partial<DatastoreInputs>,
): void {
    const { failures } = checkDatastore(olds, news);
    assert.equal(failures.length, 1, `expected one failure, got ${JSON.stringify(failures)}`);
    assert.equal(failures[0]?.property, property);
    assert.match(failures[0]?.reason ?? "", reason);
}

describe("checkDatastore", () => {
    it("keeps the customTimeouts the resource class recorded (create, update, delete strings), drops the rest", () => {
        const recorded = { create: "5m", update: "", delete: "1h", read: "1m", extra: 3 };
        const { inputs, failures } = checkDatastore(undefined, {
            ...datastoreInputs(),
            customTimeouts: recorded,
        } as never);
        assert.deepEqual(failures, []);
        assert.deepEqual(inputs.customTimeouts, { create: "5m", delete: "1h" });
        const none = checkDatastore(undefined, { ...datastoreInputs(), customTimeouts: "5m" } as never);
        assert.equal(none.inputs.customTimeouts, undefined);
    });

    describe("valid inputs", () => {
        it("are returned with adopt and untaint false, and without createToken or timeouts", () => {
            const inputs = accept(raw());
            assert.deepEqual(inputs, datastoreInputs());
            assert.ok(!("createToken" in inputs));
            assert.ok(!("timeouts" in inputs));
        });

        it("keep every optional property given", () => {
            const inputs = accept(
                raw({
                    createToken: "tok-1",
                    timeouts: { create: "30m", update: "1h", delete: "45s" },
                    adopt: true,
                    untaint: true,
                }),
            );
            assert.deepEqual(
                inputs,
                datastoreInputs({
                    createToken: "tok-1",
                    timeouts: { create: "30m", update: "1h", delete: "45s" },
                    adopt: true,
                    untaint: true,
                }),
            );
        });

        it("pass on the SDK's own properties, and what the state adds (as `pulumi import` passes it back)", () => {
            const inputs = accept(raw({ __provider: "x", datastoreId: "ds-1", tainted: false, stateVersion: 1 }));
            assert.deepEqual(inputs, datastoreInputs());
        });

        it("do not change the object given", () => {
            const news = raw({ hciClusterUuid: HCI.toUpperCase(), datastoreType: "nfs" });
            const copy = structuredClone(news);
            accept(news);
            assert.deepEqual(news, copy);
        });
    });

    describe("hciClusterUuid and clusterId", () => {
        for (const property of ["hciClusterUuid", "clusterId"]) {
            it(`${property}: lower-cases a UUID in any case`, () => {
                assert.equal(
                    accept(raw({ [property]: OTHER_UUID.toUpperCase() }))[property as "clusterId"],
                    OTHER_UUID,
                );
                assert.equal(
                    accept(raw({ [property]: "C0FFee00-0000-4000-8000-00000000ABCD" }))[property as "clusterId"],
                    "c0ffee00-0000-4000-8000-00000000abcd",
                );
            });

            const bad: [value: unknown, why: string][] = [
                ["not-a-uuid", "a word"],
                ["", "an empty string"],
                ["a1b2c3d4-0000-4000-8000-00000000000", "one digit short"],
                ["a1b2c3d4-0000-4000-8000-0000000000011", "one digit long"],
                ["a1b2c3d400004000800000000000000001", "no dashes"],
                ["{a1b2c3d4-0000-4000-8000-000000000001}", "braces"],
                ["g1b2c3d4-0000-4000-8000-000000000001", "a letter beyond f"],
                [" a1b2c3d4-0000-4000-8000-000000000001", "a leading blank"],
                ["a1b2c3d4-0000-4000-8000-000000000001\n", "a trailing line break"],
                [12345, "a number"],
                [undefined, "nothing"],
                [null, "null"],
            ];
            for (const [value, why] of bad) {
                it(`${property}: refuses ${why}`, () => {
                    refuse(raw({ [property]: value }), property, /is not a UUID \(8-4-4-4-12 hexadecimal digits\)$/);
                });
            }
        }

        it("says what it got", () => {
            refuse(raw({ clusterId: "cluster-7" }), "clusterId", /^"cluster-7" is not a UUID/);
            refuse(raw({ clusterId: undefined }), "clusterId", /^nothing \(it is required\) is not a UUID/);
            refuse(raw({ clusterId: 7 }), "clusterId", /^the number 7 is not a UUID/);
        });
    });

    describe("name", () => {
        const good = ["a", "ds19", "DS-19", "ds_19.backup", "a".repeat(80), "0", "...", "-_-"];
        for (const name of good) {
            it(`accepts ${JSON.stringify(name.length > 20 ? `${name.slice(0, 10)}... (${name.length})` : name)}`, () => {
                assert.equal(accept(raw({ name })).name, name);
            });
        }

        const bad: [value: unknown, reason: RegExp][] = [
            ["", /^"" has 0 characters; a name has 1 to 80$/],
            ["a".repeat(81), /has 81 characters; a name has 1 to 80$/],
            ["ds 19", /^"ds 19" contains a space; use letters, digits, "\.", "_" and "-"$/],
            ["ds/19", /contains "\/"/],
            ["ds:19", /contains ":"/],
            ["dś19", /contains "ś"/],
            ["ds\t19", /contains a tab/],
            ["ds\n19", /^"ds\\n19" contains a line break \(U\+000A\)/],
            ["ds\u202e19", /^"ds\\u202e19" contains the control character U\+202E/],
            [19, /^must be a string, not the number 19$/],
            [undefined, /^must be a string, not nothing \(it is required\)$/],
            [["ds19"], /^must be a string, not a list$/],
        ];
        for (const [value, reason] of bad) {
            it(`refuses ${JSON.stringify(value) ?? "undefined"}`, () => {
                refuse(raw({ name: value }), "name", reason);
            });
        }
    });

    describe("sizeInBytes", () => {
        const good = [GIB, 16 * GIB, GIB + 1, 1024 * GIB, Number.MAX_SAFE_INTEGER];
        for (const size of good) {
            it(`accepts ${size}`, () => {
                assert.equal(accept(raw({ sizeInBytes: size })).sizeInBytes, size);
            });
        }

        const bad: [value: unknown, shown: string][] = [
            [GIB - 1, `the number ${GIB - 1}`],
            [0, "the number 0"],
            [-16 * GIB, `the number ${-16 * GIB}`],
            [1.5 * GIB + 0.5, `the number ${1.5 * GIB + 0.5}`],
            [Number.NaN, "the number NaN"],
            [Number.POSITIVE_INFINITY, "the number Infinity"],
            [2 ** 53, `the number ${2 ** 53}`],
            [String(16 * GIB), `"${16 * GIB}"`],
            [undefined, "nothing (it is required)"],
            [null, "null"],
        ];
        for (const [value, shown] of bad) {
            it(`refuses ${shown}`, () => {
                refuse(
                    raw({ sizeInBytes: value }),
                    "sizeInBytes",
                    new RegExp(
                        `^${escapeRegExp(shown)} is not a whole number of bytes of at least 1073741824 \\(1 GiB\\)$`,
                    ),
                );
            });
        }

        describe("against the previous inputs", () => {
            it("refuses to shrink in place, naming both sizes", () => {
                refuse(
                    raw({ sizeInBytes: 16 * GIB }),
                    "sizeInBytes",
                    /^17179869184 is smaller than the current 34359738368: a datastore cannot shrink in place\. Keep the size, or replace the datastore \(a new name\)/,
                    datastoreInputs({ sizeInBytes: 32 * GIB }),
                );
            });

            it("refuses to shrink by one byte", () => {
                refuse(raw({ sizeInBytes: 16 * GIB - 1 }), "sizeInBytes", /cannot shrink/, datastoreInputs());
            });

            it("accepts the same size and growth", () => {
                assert.equal(accept(raw({ sizeInBytes: 16 * GIB }), datastoreInputs()).sizeInBytes, 16 * GIB);
                assert.equal(accept(raw({ sizeInBytes: 64 * GIB }), datastoreInputs()).sizeInBytes, 64 * GIB);
            });

            it("accepts any size on create (no previous inputs) and when the previous size is unknown", () => {
                accept(raw({ sizeInBytes: GIB }));
                accept(raw({ sizeInBytes: GIB }), {});
                accept(raw({ sizeInBytes: GIB }), datastoreInputs({ sizeInBytes: UNKNOWN as unknown as number }));
            });

            it("reports a size that is both invalid and smaller once, as invalid", () => {
                refuse(raw({ sizeInBytes: 1.5 }), "sizeInBytes", /is not a whole number/, datastoreInputs());
            });

            // A new name, cluster or type replaces the datastore: the new one may be any size. The failure's
            // own advice ("or replace the datastore (a new name)") must therefore pass check.
            const replacements: [what: string, change: Record<string, unknown>][] = [
                ["a new name", { name: "ds19-small" }],
                ["another cluster", { clusterId: OTHER_UUID }],
                ["another HCI cluster", { hciClusterUuid: OTHER_UUID }],
                ["another datastore type", { datastoreType: "NFS" }],
            ];
            for (const [what, change] of replacements) {
                it(`accepts a smaller size with ${what} (a replacement, not a shrink in place)`, () => {
                    accept(raw({ sizeInBytes: 8 * GIB, ...change }), datastoreInputs({ sizeInBytes: 32 * GIB }));
                });
            }
        });
    });

    describe("datastoreType", () => {
        const good: [value: string, type: string][] = [
            ["VMFS", "VMFS"],
            ["vmfs", "VMFS"],
            ["Nfs", "NFS"],
            ["nfs", "NFS"],
            ["vVol", "VVOL"],
        ];
        for (const [value, type] of good) {
            it(`reads ${JSON.stringify(value)} as ${type}`, () => {
                assert.equal(accept(raw({ datastoreType: value })).datastoreType, type);
            });
        }

        const bad: [value: unknown, shown: string][] = [
            ["ext4", '"ext4"'],
            ["", "an empty string"],
            [" VMFS", '" VMFS"'],
            ["NFS3", '"NFS3"'],
            [1, "the number 1"],
            [undefined, "nothing (it is required)"],
        ];
        for (const [value, shown] of bad) {
            it(`refuses ${shown}`, () => {
                refuse(
                    raw({ datastoreType: value }),
                    "datastoreType",
                    new RegExp(`^${escapeRegExp(shown)} is not one of VMFS, NFS, VVOL$`),
                );
            });
        }
    });

    describe("createToken", () => {
        const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join("");
        const good: [token: string, why: string][] = [
            ["t", "one character"],
            ["x".repeat(240), "240 characters"],
            [printable, "every printable ASCII character"],
            ["3f2a7c1e-0b9d-4e55-8a61-2f0c9b7d4e10", "a UUID"],
        ];
        for (const [token, why] of good) {
            it(`accepts ${why}`, () => {
                assert.equal(accept(raw({ createToken: token })).createToken, token);
            });
        }

        it("is absent when not given, undefined or null", () => {
            for (const createToken of [undefined, null]) {
                const inputs = accept(raw({ createToken }));
                assert.equal(inputs.createToken, undefined);
                assert.ok(!("createToken" in inputs));
            }
        });

        const bad: [value: unknown, reason: RegExp][] = [
            ["", /^an empty string is not a token of 1 to 240 characters$/],
            ["x".repeat(241), /is not a token of 1 to 240 characters$/],
            [42, /^the number 42 is not a token of 1 to 240 characters$/],
            [true, /^the boolean true is not a token/],
            [{}, /^an object is not a token/],
            ["my token", /^contains a space; a token is printable ASCII without spaces \(it is sent as a header\)$/],
            ["tok\tx", /^contains a tab;/],
            ["tok\r\nX-Injected: 1", /^contains a line break \(U\+000D\);/],
            ["tok\u007f", /^contains the control character U\+007F;/],
            ["tok\u0000", /^contains the control character U\+0000;/],
            ["tokén", /^contains "é";/],
            ["tok\u00a0x", /^contains the whitespace character U\+00A0;/],
            ["tok😀", /^contains "😀";/],
        ];
        for (const [value, reason] of bad) {
            it(`refuses ${JSON.stringify(value)}`, () => {
                const { inputs, failures } = checkDatastore(undefined, raw({ createToken: value }));
                assert.equal(failures.length, 1, JSON.stringify(failures));
                assert.equal(failures[0]?.property, "createToken");
                assert.match(failures[0]?.reason ?? "", reason);
                assert.ok(!("createToken" in inputs));
            });
        }
    });

    describe("timeouts", () => {
        it("keeps the durations as written", () => {
            assert.deepEqual(accept(raw({ timeouts: { create: "1h30m", delete: "500ms" } })).timeouts, {
                create: "1h30m",
                delete: "500ms",
            });
        });

        it("takes a read timeout (refresh, get, import) like the others", () => {
            assert.deepEqual(accept(raw({ timeouts: { read: "2m" } })).timeouts, { read: "2m" });
        });

        it("is absent when not given or null, and empty when empty", () => {
            assert.ok(!("timeouts" in accept(raw({ timeouts: undefined }))));
            assert.ok(!("timeouts" in accept(raw({ timeouts: null }))));
            assert.deepEqual(accept(raw({ timeouts: {} })).timeouts, {});
        });

        it("skips keys whose duration is undefined", () => {
            assert.deepEqual(accept(raw({ timeouts: { create: undefined, update: "5m" } })).timeouts, { update: "5m" });
        });

        const bad: [timeouts: unknown, property: string, reason: RegExp][] = [
            ["30m", "timeouts", /^must be an object such as \{ create: "30m" \}, not "30m"$/],
            [["30m"], "timeouts", /, not a list$/],
            [30, "timeouts", /, not the number 30$/],
            [
                { destroy: "5m" },
                "timeouts.destroy",
                /^is not an operation with a timeout; use create, read, update, delete$/,
            ],
            [{ refresh: "5m" }, "timeouts.refresh", /use create, read, update, delete/],
            [{ read: "0s" }, "timeouts.read", /^"0s" is not a positive duration$/],
            [{ create: "soon" }, "timeouts.create", /^"soon" is not a duration/],
            [{ update: "0s" }, "timeouts.update", /^"0s" is not a positive duration$/],
            [{ delete: "" }, "timeouts.delete", /is empty/],
            [{ create: "30" }, "timeouts.create", /use h, m, s or ms/],
            [{ create: 1800 }, "timeouts.create", /^must be a duration string such as "30m", not the number 1800$/],
            [{ create: null }, "timeouts.create", /, not null$/],
        ];
        for (const [timeouts, property, reason] of bad) {
            it(`refuses ${JSON.stringify(timeouts)} on ${property}`, () => {
                refuse(raw({ timeouts }), property, reason);
            });
        }

        it("reports every bad key and keeps the good ones", () => {
            const { inputs, failures } = checkDatastore(
                undefined,
                raw({ timeouts: { create: "nope", update: "10m", destroy: "1m" } }),
            );
            assert.deepEqual(
                failures.map((failure) => failure.property),
                ["timeouts.create", "timeouts.destroy"],
            );
            assert.deepEqual(inputs.timeouts, { update: "10m" });
        });
    });

    describe("properties it does not take", () => {
        // Ignored, a misspelt createToken would create without a key, and a retried create make a second one.
        it("refuses a misspelt input, naming the one meant and every input a user sets", () => {
            const { createToken: _, ...rest } = raw({ createToken: "tok-1" });
            refuse(
                { ...rest, createTokn: "tok-1" },
                "createTokn",
                /^Datastore has no input `createTokn`\. Did you mean `createToken`\? Its inputs are hciClusterUuid, clusterId, name, sizeInBytes, datastoreType, createToken, timeouts, adopt, untaint; correct or remove `createTokn`\.$/,
            );
        });

        it("refuses a property like no input without guessing", () => {
            refuse(raw({ colour: "red" }), "colour", /^Datastore has no input `colour`\. Its inputs are /);
        });
    });

    describe("adopt and untaint", () => {
        for (const property of ["adopt", "untaint"] as const) {
            it(`${property}: true and false are kept; undefined and null are false`, () => {
                assert.equal(accept(raw({ [property]: true }))[property], true);
                assert.equal(accept(raw({ [property]: false }))[property], false);
                assert.equal(accept(raw({ [property]: undefined }))[property], false);
                assert.equal(accept(raw({ [property]: null }))[property], false);
            });

            for (const [value, shown] of [
                ["true", '"true"'],
                ["yes", '"yes"'],
                [1, "the number 1"],
                [0, "the number 0"],
                [{}, "an object"],
            ] as const) {
                it(`${property}: refuses ${shown}, and reads it as false`, () => {
                    const { inputs, failures } = checkDatastore(undefined, raw({ [property]: value }));
                    assert.deepEqual(failures, [{ property, reason: `must be true or false, not ${shown}` }]);
                    assert.equal(inputs[property], false);
                });
            }
        }
    });

    describe("several failures", () => {
        it("are all reported, each under its property, in the order of the properties", () => {
            const { failures } = checkDatastore(datastoreInputs({ sizeInBytes: 32 * GIB }), {
                hciClusterUuid: "x",
                clusterId: "y",
                name: "",
                sizeInBytes: 3,
                datastoreType: "zfs",
                adopt: "no",
                untaint: 0,
                createToken: "a b",
                timeouts: { create: "never" },
            });
            assert.deepEqual(
                failures.map((failure) => failure.property),
                [
                    "hciClusterUuid",
                    "clusterId",
                    "name",
                    "sizeInBytes",
                    "datastoreType",
                    "adopt",
                    "untaint",
                    "createToken",
                    "timeouts.create",
                ],
            );
        });

        it("are reported for an empty object, once per required property", () => {
            const { failures } = checkDatastore(undefined, {});
            assert.deepEqual(
                failures.map((failure) => failure.property),
                ["hciClusterUuid", "clusterId", "name", "sizeInBytes", "datastoreType"],
            );
        });
    });

    describe("unknown values (preview)", () => {
        const properties = [
            "hciClusterUuid",
            "clusterId",
            "name",
            "sizeInBytes",
            "datastoreType",
            "createToken",
            "timeouts",
            "adopt",
            "untaint",
        ];
        for (const property of properties) {
            it(`passes an unknown ${property} through unvalidated`, () => {
                const inputs = accept(raw({ [property]: UNKNOWN }), datastoreInputs());
                assert.equal((inputs as unknown as Record<string, unknown>)[property], UNKNOWN);
            });
        }

        it("skips an unknown duration inside timeouts", () => {
            assert.deepEqual(accept(raw({ timeouts: { create: UNKNOWN, delete: "5m" } })).timeouts, { delete: "5m" });
        });

        it("accepts everything unknown at once", () => {
            const news = Object.fromEntries(properties.map((property) => [property, UNKNOWN]));
            accept(news, datastoreInputs());
        });
    });
});

function escapeRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
