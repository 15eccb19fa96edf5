// Guards the state of a tasks.AsyncResource (provider/tasks/logic/asyncState.ts) and its resolved spec
// (logic/asyncSpec.ts), written from what a user of issue 19 expects: the natural key (in the body or
// given as key), the API's URL and dialect, the paths, their parameters and idField replace; so do the
// body properties named in replaceOnChanges; every other body change updates in place; object key order
// is no change; settings only the state knows (timeouts, adopt, untaint, createToken) change state
// without a replacement; a tainted resource is replaced unless untaint; a replacement deletes first
// exactly when the natural key and the URL stay (the key is unique at the API); values unknown during
// preview count as changes (an unknown key or URL as kept, the delete-first case, as for the Datastore).
// Partial state carries `__provider` and no undefined value, under the natural key; a pending create is
// resumed with the body and token it was sent with; the spec's lookup fills `{key}` url-encoded and
// finds the list's items where the API keeps them. Pure tables.

import { strict as assert } from "node:assert";
import { UNKNOWN } from "../../../provider/shared/unknown";
import type {
    AsyncResourceInputs,
    AsyncResourceOutputs,
    PendingOperation,
} from "../../../provider/tasks/asyncResourceSchema";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { checkAsyncResource } from "../../../provider/tasks/logic/asyncCheck";
import { resolve, type SpecProblem, specOf } from "../../../provider/tasks/logic/asyncSpec";
import {
    bodyChanged,
    diffAsyncResource,
    differs,
    heldByAnother,
    heldPartial,
    isPendingCreate,
    outputsOf,
    partialState,
    type RawAsyncInputs,
    resumedInputs,
} from "../../../provider/tasks/logic/asyncState";

type Raw = Record<string, unknown>;

const PROVIDER = "PULUMI_LIFECYCLE_PROVIDER_CODE";
const API_ID = "3f6c2a80-0000-4000-8000-000000000001";
const OPERATION: PendingOperation = { write: "create", kind: "monitor", ref: "/operations/op-1" };

/** A generic widget as a program declares it (raw, before check). */
function genericRaw(overrides: Raw = {}, api: Raw = {}): Raw {
    return {
        api: { url: "https://api.example.com", dialect: "generic", tokenEnv: "WIDGETS_TOKEN", ...api },
        collectionPath: "/v1/projects/{project}/widgets",
        itemPath: "/v1/projects/{project}/widgets/{id}",
        pathParameters: { project: "p1" },
        naturalKey: "name",
        idField: "id",
        lookup: { query: "name={key}" },
        body: { name: "w1", size: 1, tags: { team: "a", tier: "gold" } },
        ...overrides,
    };
}

/** An Azure Resource Manager widget, its name given as key (raw, before check). */
function armRaw(overrides: Raw = {}, api: Raw = {}): Raw {
    return {
        api: { url: "https://management.example.com", dialect: "azure-arm", tokenConfig: "widgets:token", ...api },
        collectionPath:
            "/subscriptions/{subscription}/resourceGroups/{group}/providers/Test.Widgets/widgets?api-version=2024-01-01",
        itemPath:
            "/subscriptions/{subscription}/resourceGroups/{group}/providers/Test.Widgets/widgets/{id}?api-version=2024-01-01",
        pathParameters: { subscription: "0000-sub", group: "rg1" },
        naturalKey: "name",
        key: "w1",
        body: { location: "westus", properties: { size: 1 } },
        ...overrides,
    };
}

/** Checked inputs, as check returns them (asserted valid). */
function checked(raw: Raw): AsyncResourceInputs {
    const { inputs, failures } = checkAsyncResource(raw);
    assert.deepEqual(failures, [], `refused ${JSON.stringify(raw)}`);
    return inputs;
}

/** Checked inputs that may hold unknown values (check leaves those for later). */
function checkedPreview(raw: Raw): AsyncResourceInputs {
    return checkAsyncResource(raw).inputs;
}

const news = (overrides: Raw = {}, api: Raw = {}) => checked(genericRaw(overrides, api));
const armNews = (overrides: Raw = {}, api: Raw = {}) => checked(armRaw(overrides, api));

/** Stored outputs of a resource created from `inputs`. */
function stored(inputs: AsyncResourceInputs, extra: Partial<AsyncResourceOutputs> = {}): AsyncResourceOutputs {
    return {
        ...outputsOf(inputs, { resourceId: API_ID, resource: { id: API_ID, ...inputs.body }, tainted: false }),
        ...extra,
    };
}

const olds = (extra: Partial<AsyncResourceOutputs> = {}) => stored(news(), extra);
const armOlds = (extra: Partial<AsyncResourceOutputs> = {}) => stored(armNews(), extra);

const NO_CHANGE = { changes: false, replaces: [], deleteBeforeReplace: false };
const IN_PLACE = { changes: true, replaces: [], deleteBeforeReplace: false };

describe("diffAsyncResource", () => {
    describe("no change", () => {
        it("when the inputs are those stored", () => {
            assert.deepEqual(diffAsyncResource(olds(), news()), NO_CHANGE);
            assert.deepEqual(diffAsyncResource(armOlds(), armNews()), NO_CHANGE);
        });

        it("when every optional setting is equal too", () => {
            const optional = {
                createToken: "tok-1",
                timeouts: { create: "30m", delete: "5m" },
                adopt: true,
                untaint: true,
                replaceOnChanges: ["size"],
            };
            assert.deepEqual(diffAsyncResource(stored(news(optional)), news(optional)), NO_CHANGE);
        });

        it("when the body's keys come in another order, at any depth", () => {
            const reordered = news({ body: { tags: { tier: "gold", team: "a" }, size: 1, name: "w1" } });
            assert.deepEqual(diffAsyncResource(olds(), reordered), NO_CHANGE);
        });

        it("when the body was a JSON string with the same object", () => {
            const asString = news({ body: JSON.stringify({ size: 1, name: "w1", tags: { tier: "gold", team: "a" } }) });
            assert.deepEqual(diffAsyncResource(olds(), asString), NO_CHANGE);
        });

        it("when api, pathParameters, lookup and timeouts come in another order", () => {
            const before = stored(
                checked(
                    armRaw({
                        timeouts: { create: "30m", delete: "5m" },
                        pathParameters: { subscription: "0000-sub", group: "rg1" },
                    }),
                ),
            );
            const after = checked({
                ...armRaw({
                    timeouts: { delete: "5m", create: "30m" },
                    pathParameters: { group: "rg1", subscription: "0000-sub" },
                }),
                api: { tokenConfig: "widgets:token", dialect: "azure-arm", url: "https://management.example.com" },
            });
            assert.deepEqual(diffAsyncResource(before, after), NO_CHANGE);
            const lookupBefore = stored(news({ lookup: { query: "name={key}", items: "items" } }));
            assert.deepEqual(
                diffAsyncResource(lookupBefore, news({ lookup: { items: "items", query: "name={key}" } })),
                NO_CHANGE,
            );
        });

        it("when timeouts go from absent to empty", () => {
            assert.deepEqual(diffAsyncResource(olds(), news({ timeouts: {} })), NO_CHANGE);
        });

        it("when the API's record (resource, resourceId) is all that differs from the inputs", () => {
            assert.deepEqual(
                diffAsyncResource(olds({ resource: { id: API_ID, name: "w1", size: 99, status: "ready" } }), news()),
                NO_CHANGE,
            );
        });
    });

    describe("replacements", () => {
        it("a natural key changed in the body replaces it, creating first (the new key is free)", () => {
            const diff = diffAsyncResource(
                olds(),
                news({ body: { name: "w2", size: 1, tags: { team: "a", tier: "gold" } } }),
            );
            assert.equal(diff.changes, true);
            assert.deepEqual(diff.replaces, ["body.name"]);
            assert.equal(diff.deleteBeforeReplace, false);
        });

        it("a nested natural key changed in the body replaces it", () => {
            const before = stored(news({ naturalKey: "metadata.name", body: { metadata: { name: "w1" } } }));
            const diff = diffAsyncResource(
                before,
                news({ naturalKey: "metadata.name", body: { metadata: { name: "w2" } } }),
            );
            assert.ok(diff.replaces.length > 0, JSON.stringify(diff));
            assert.equal(diff.deleteBeforeReplace, false);
        });

        it("a natural key given as key replaces it when changed, naming key, creating first", () => {
            const diff = diffAsyncResource(armOlds(), armNews({ key: "w2" }));
            assert.equal(diff.changes, true);
            assert.deepEqual(diff.replaces, ["key"]);
            assert.equal(diff.deleteBeforeReplace, false);
        });

        it("another API URL replaces it, creating first (another API)", () => {
            assert.deepEqual(diffAsyncResource(olds(), news({}, { url: "https://api2.example.com" })), {
                changes: true,
                replaces: ["api.url"],
                deleteBeforeReplace: false,
            });
        });

        it("another dialect replaces it, deleting first (same key at the same API)", () => {
            const google = checked({
                ...genericRaw({}, { dialect: "google", idParameter: "widgetId" }),
                idField: undefined,
                lookup: undefined,
            });
            assert.deepEqual(diffAsyncResource(olds(), google), {
                changes: true,
                replaces: ["api.dialect", "idField"],
                deleteBeforeReplace: true,
            });
        });

        it("an option of the generic dialect changes in place", () => {
            assert.deepEqual(diffAsyncResource(olds(), news({}, { generic: { status: "body.state" } })), IN_PLACE);
        });

        for (const [property, change] of [
            ["collectionPath", { collectionPath: "/v2/projects/{project}/widgets" }],
            ["itemPath", { itemPath: "/v2/projects/{project}/widgets/{id}" }],
            ["pathParameters", { pathParameters: { project: "p2" } }],
            ["idField", { idField: "uid" }],
        ] as const) {
            it(`another ${property} replaces it, deleting first (same key at the same API)`, () => {
                assert.deepEqual(diffAsyncResource(olds(), news(change)), {
                    changes: true,
                    replaces: [property],
                    deleteBeforeReplace: true,
                });
            });
        }

        it("a path parameter added or removed replaces it", () => {
            const before = stored(news({ pathParameters: { project: "p1", extra: "x" } }));
            assert.deepEqual(diffAsyncResource(before, news()).replaces, ["pathParameters"]);
        });

        it("another naturalKey selector replaces it, even when it selects the same value", () => {
            const body = { name: "w1", displayName: "w1" };
            const diff = diffAsyncResource(stored(news({ body })), news({ body, naturalKey: "displayName" }));
            assert.deepEqual(diff, { changes: true, replaces: ["naturalKey"], deleteBeforeReplace: true });
        });

        it("a body property named in replaceOnChanges replaces it, deleting first", () => {
            const before = stored(news({ replaceOnChanges: ["size"] }));
            const after = news({
                replaceOnChanges: ["size"],
                body: { name: "w1", size: 2, tags: { team: "a", tier: "gold" } },
            });
            assert.deepEqual(diffAsyncResource(before, after), {
                changes: true,
                replaces: ["body.size"],
                deleteBeforeReplace: true,
            });
        });

        it("an object named in replaceOnChanges replaces on a nested change, not on a reordering", () => {
            const before = stored(news({ replaceOnChanges: ["tags"] }));
            const reordered = news({
                replaceOnChanges: ["tags"],
                body: { name: "w1", size: 1, tags: { tier: "gold", team: "a" } },
            });
            assert.deepEqual(diffAsyncResource(before, reordered), NO_CHANGE);
            const changed = news({
                replaceOnChanges: ["tags"],
                body: { name: "w1", size: 1, tags: { team: "b", tier: "gold" } },
            });
            assert.deepEqual(diffAsyncResource(before, changed).replaces, ["body.tags"]);
        });

        it("a body property named in replaceOnChanges that appears or disappears replaces it", () => {
            const before = stored(news({ replaceOnChanges: ["zone"] }));
            const after = news({
                replaceOnChanges: ["zone"],
                body: { name: "w1", size: 1, tags: { team: "a", tier: "gold" }, zone: "z1" },
            });
            assert.deepEqual(diffAsyncResource(before, after).replaces, ["body.zone"]);
        });

        it("the natural key and the URL changed together: creating first", () => {
            const diff = diffAsyncResource(
                olds(),
                news(
                    { body: { name: "w2", size: 1, tags: { team: "a", tier: "gold" } } },
                    { url: "https://api2.example.com" },
                ),
            );
            assert.equal(diff.deleteBeforeReplace, false);
            assert.ok(diff.replaces.includes("api.url") && diff.replaces.includes("body.name"), JSON.stringify(diff));
        });

        it("a path change with another URL: creating first", () => {
            const diff = diffAsyncResource(
                olds(),
                news({ pathParameters: { project: "p2" } }, { url: "https://api2.example.com" }),
            );
            assert.deepEqual(diff, {
                changes: true,
                replaces: ["api.url", "pathParameters"],
                deleteBeforeReplace: false,
            });
        });
    });

    describe("updates in place", () => {
        it("a body change not named in replaceOnChanges updates in place", () => {
            assert.deepEqual(
                diffAsyncResource(olds(), news({ body: { name: "w1", size: 2, tags: { team: "a", tier: "gold" } } })),
                IN_PLACE,
            );
        });

        it("a nested body change, an added and a removed property update in place", () => {
            for (const body of [
                { name: "w1", size: 1, tags: { team: "b", tier: "gold" } },
                { name: "w1", size: 1, tags: { team: "a", tier: "gold" }, colour: "red" },
                { name: "w1", tags: { team: "a", tier: "gold" } },
                { name: "w1", size: [1], tags: { team: "a", tier: "gold" } },
            ]) {
                assert.deepEqual(diffAsyncResource(olds(), news({ body })), IN_PLACE, JSON.stringify(body));
            }
        });

        it("a body change while replaceOnChanges names other properties updates in place", () => {
            const before = stored(news({ replaceOnChanges: ["tags"] }));
            const after = news({
                replaceOnChanges: ["tags"],
                body: { name: "w1", size: 2, tags: { team: "a", tier: "gold" } },
            });
            assert.deepEqual(diffAsyncResource(before, after), IN_PLACE);
        });

        it("a body change of a resource keyed by key updates in place", () => {
            assert.deepEqual(
                diffAsyncResource(armOlds(), armNews({ body: { location: "westus", properties: { size: 2 } } })),
                IN_PLACE,
            );
        });

        for (const [what, change] of [
            ["a createToken set", { createToken: "tok-1" }],
            ["timeouts set", { timeouts: { create: "1h" } }],
            ["adopt set", { adopt: true }],
            ["untaint set", { untaint: true }],
            ["replaceOnChanges set", { replaceOnChanges: ["size"] }],
            ["another lookup", { lookup: { query: "filter=name eq '{key}'" } }],
        ] as const) {
            it(`${what}: a change of state only, no replacement`, () => {
                assert.deepEqual(diffAsyncResource(olds(), news(change)), IN_PLACE);
            });
        }

        for (const [what, before, after] of [
            ["a createToken removed", { createToken: "tok-1" }, {}],
            ["a createToken changed", { createToken: "tok-0" }, { createToken: "tok-1" }],
            ["timeouts changed", { timeouts: { create: "30m" } }, { timeouts: { create: "45m" } }],
            ["timeouts removed", { timeouts: { create: "30m" } }, {}],
            ["adopt cleared", { adopt: true }, {}],
            ["untaint cleared", { untaint: true }, {}],
        ] as const) {
            it(`${what}: a change of state only, no replacement`, () => {
                assert.deepEqual(diffAsyncResource(stored(news(before)), news(after)), IN_PLACE);
            });
        }

        it("where the token is read from (tokenConfig, tokenEnv) changes in place", () => {
            assert.deepEqual(diffAsyncResource(olds(), news({}, { tokenEnv: "OTHER_TOKEN" })), IN_PLACE);
            assert.deepEqual(diffAsyncResource(olds(), news({}, { tokenConfig: "widgets:token" })), IN_PLACE);
        });
    });

    describe("taint", () => {
        it("a tainted resource is replaced, deleting first (same key, same API)", () => {
            const diff = diffAsyncResource(olds({ tainted: true, taintReason: "its create failed" }), news());
            assert.equal(diff.changes, true);
            assert.equal(diff.replaces.length, 1, JSON.stringify(diff));
            assert.equal(diff.deleteBeforeReplace, true);
        });

        it("a tainted resource with untaint is kept: a change without replacement", () => {
            assert.deepEqual(diffAsyncResource(olds({ tainted: true }), news({ untaint: true })), IN_PLACE);
        });

        it("a tainted resource with untaint already on record is still updated (the taint is cleared)", () => {
            assert.deepEqual(
                diffAsyncResource(stored(news({ untaint: true }), { tainted: true }), news({ untaint: true })),
                IN_PLACE,
            );
        });

        it("a tainted resource whose natural key changes is replaced creating first", () => {
            const diff = diffAsyncResource(
                olds({ tainted: true }),
                news({ body: { name: "w2", size: 1, tags: { team: "a", tier: "gold" } } }),
            );
            assert.ok(diff.replaces.includes("body.name"), JSON.stringify(diff));
            assert.equal(diff.deleteBeforeReplace, false);
        });
    });

    describe("deleteBeforeReplace, exactly when the natural key and the URL stay", () => {
        const body2 = { name: "w2", size: 1, tags: { team: "a", tier: "gold" } };
        const table: Array<[string, AsyncResourceOutputs, AsyncResourceInputs, boolean]> = [
            ["path changed", olds(), news({ collectionPath: "/v2/projects/{project}/widgets" }), true],
            ["parameters changed", olds(), news({ pathParameters: { project: "p9" } }), true],
            ["tainted", olds({ tainted: true }), news(), true],
            [
                "replaceOnChanges",
                stored(news({ replaceOnChanges: ["size"] })),
                news({ replaceOnChanges: ["size"], body: { ...body2, name: "w1", size: 5 } }),
                true,
            ],
            ["key changed", olds(), news({ body: body2 }), false],
            ["key given changed", armOlds(), armNews({ key: "w9" }), false],
            ["URL changed", olds(), news({}, { url: "https://other.example.com" }), false],
            [
                "path and key changed",
                olds(),
                news({ body: body2, collectionPath: "/v2/projects/{project}/widgets" }),
                false,
            ],
            ["nothing replaced", olds(), news({ adopt: true }), false],
        ];
        for (const [what, before, after, expected] of table) {
            it(`${what}: ${expected}`, () => {
                assert.equal(diffAsyncResource(before, after).deleteBeforeReplace, expected);
            });
        }
    });

    describe("unknown values (preview)", () => {
        // Built without check, so each case is about the diff alone (check leaves unknowns as they are).
        const preview = (overrides: Raw = {}, api: Raw = {}) =>
            ({ ...news(), ...overrides, api: { ...news().api, ...api } }) as AsyncResourceInputs;

        it("an unknown body is a change; its natural key may change: replaced, deleting first (it may be kept)", () => {
            assert.deepEqual(diffAsyncResource(olds(), preview({ body: UNKNOWN })), {
                changes: true,
                replaces: ["body.name"],
                deleteBeforeReplace: true,
            });
        });

        it("an unknown natural key replaces, deleting first (the key may be unchanged)", () => {
            assert.deepEqual(
                diffAsyncResource(
                    olds(),
                    preview({ body: { name: UNKNOWN, size: 1, tags: { team: "a", tier: "gold" } } }),
                ),
                { changes: true, replaces: ["body.name"], deleteBeforeReplace: true },
            );
        });

        it("an unknown key given as key replaces, deleting first", () => {
            const diff = diffAsyncResource(armOlds(), { ...armNews(), key: UNKNOWN });
            assert.equal(diff.changes, true);
            assert.ok(diff.replaces.length > 0, JSON.stringify(diff));
            assert.equal(diff.deleteBeforeReplace, true);
        });

        it("an unknown body of a resource keyed by key is an in-place change", () => {
            assert.deepEqual(
                diffAsyncResource(armOlds(), { ...armNews(), body: UNKNOWN as unknown as Record<string, unknown> }),
                IN_PLACE,
            );
        });

        it("an unknown body property is an in-place change, a replacement when replaceOnChanges names it", () => {
            const body = { name: "w1", size: UNKNOWN, tags: { team: "a", tier: "gold" } };
            assert.deepEqual(diffAsyncResource(olds(), preview({ body })), IN_PLACE);
            assert.deepEqual(
                diffAsyncResource(
                    stored(news({ replaceOnChanges: ["size"] })),
                    preview({ body, replaceOnChanges: ["size"] }),
                ),
                { changes: true, replaces: ["body.size"], deleteBeforeReplace: true },
            );
        });

        it("an unknown URL replaces, deleting first (it may be the same API)", () => {
            assert.deepEqual(diffAsyncResource(olds(), preview({}, { url: UNKNOWN })), {
                changes: true,
                replaces: ["api.url"],
                deleteBeforeReplace: true,
            });
        });

        it("an unknown path parameter replaces, deleting first", () => {
            assert.deepEqual(diffAsyncResource(olds(), preview({ pathParameters: { project: UNKNOWN } })), {
                changes: true,
                replaces: ["pathParameters"],
                deleteBeforeReplace: true,
            });
        });

        for (const [what, change] of [
            ["createToken", { createToken: UNKNOWN }],
            ["timeouts", { timeouts: UNKNOWN }],
            ["timeouts.create", { timeouts: { create: UNKNOWN } }],
            ["adopt", { adopt: UNKNOWN }],
            ["untaint", { untaint: UNKNOWN }],
            ["lookup.query", { lookup: { query: UNKNOWN } }],
        ] as const) {
            it(`an unknown ${what} is an in-place change`, () => {
                assert.deepEqual(diffAsyncResource(olds(), preview(change)), IN_PLACE);
            });
        }

        it("an unknown untaint on a tainted resource replaces it (it may not be set)", () => {
            const diff = diffAsyncResource(olds({ tainted: true }), preview({ untaint: UNKNOWN }));
            assert.equal(diff.changes, true);
            assert.equal(diff.replaces.length, 1, JSON.stringify(diff));
            assert.equal(diff.deleteBeforeReplace, true);
        });

        it("an unknown stored body is still a change when the new body is unknown too", () => {
            assert.equal(
                diffAsyncResource(
                    stored(news(), { body: UNKNOWN as unknown as Record<string, unknown> }),
                    preview({ body: UNKNOWN }),
                ).changes,
                true,
            );
        });
    });
});

describe("bodyChanged", () => {
    it("is false for the same body, whatever the order of its keys", () => {
        assert.equal(bodyChanged(olds(), news()), false);
        assert.equal(
            bodyChanged(olds(), news({ body: { tags: { tier: "gold", team: "a" }, size: 1, name: "w1" } })),
            false,
        );
    });

    it("is true for a changed, added or removed value, at any depth", () => {
        assert.equal(
            bodyChanged(olds(), news({ body: { name: "w1", size: 2, tags: { team: "a", tier: "gold" } } })),
            true,
        );
        assert.equal(bodyChanged(olds(), news({ body: { name: "w1", size: 1, tags: { team: "a" } } })), true);
        assert.equal(
            bodyChanged(olds(), news({ body: { name: "w1", size: 1, tags: { team: "a", tier: "gold" }, x: null } })),
            true,
        );
    });

    it("is true when the new body is unknown", () => {
        assert.equal(bodyChanged(olds(), checkedPreview(genericRaw({ body: UNKNOWN }))), true);
    });

    it("is true when nothing was sent before", () => {
        const { body: _, ...withoutBody } = olds();
        assert.equal(bodyChanged(withoutBody, news()), true);
    });
});

describe("differs", () => {
    const same: Array<[string, unknown, unknown]> = [
        ["equal scalars", 1, 1],
        ["equal strings", "a", "a"],
        ["null and null", null, null],
        ["objects in another key order", { a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 }],
        ["an undefined property and its absence", { a: 1, b: undefined }, { a: 1 }],
        ["equal lists of objects in another key order", [{ a: 1, b: 2 }], [{ b: 2, a: 1 }]],
        ["undefined and undefined", undefined, undefined],
    ];
    for (const [what, a, b] of same) {
        it(`is false for ${what}`, () => {
            assert.equal(differs(a, b), false);
            assert.equal(differs(b, a), false);
        });
    }

    const different: Array<[string, unknown, unknown]> = [
        ["1 and '1'", 1, "1"],
        ["null and absent", null, undefined],
        ["false and absent", false, undefined],
        ["0 and false", 0, false],
        ["a list in another order", [1, 2], [2, 1]],
        ["a list and an object with the same indices", [1], { 0: 1 }],
        ["a nested change", { a: { b: 1 } }, { a: { b: 2 } }],
        ["an extra property", { a: 1 }, { a: 1, b: 2 }],
        ["the unknown sentinel and anything", UNKNOWN, "x"],
        ["the unknown sentinel and itself", UNKNOWN, UNKNOWN],
    ];
    for (const [what, a, b] of different) {
        it(`is true for ${what}`, () => {
            assert.equal(differs(a, b), true);
            assert.equal(differs(b, a), true);
        });
    }

    it("keys that JSON would quote differently are still told apart", () => {
        assert.equal(differs({ 'a","b': 1 }, { a: 1, b: 1 }), true);
    });
});

describe("outputsOf", () => {
    it("is the inputs and what the API said, without __provider", () => {
        const inputs = { ...news(), __provider: PROVIDER } as RawAsyncInputs;
        const outputs = outputsOf(inputs, {
            resourceId: API_ID,
            resource: { id: API_ID, name: "w1" },
            operation: OPERATION,
            tainted: true,
            taintReason: "its create failed",
        });
        assert.ok(!("__provider" in outputs), "outputs carry __provider");
        assert.deepEqual(outputs, {
            ...news(),
            resourceId: API_ID,
            resource: { id: API_ID, name: "w1" },
            operation: OPERATION,
            tainted: true,
            taintReason: "its create failed",
        });
    });

    it("leaves out what is not known (no undefined values)", () => {
        const outputs = outputsOf(news(), {
            resourceId: undefined,
            resource: undefined,
            operation: undefined,
            tainted: false,
            taintReason: undefined,
        });
        for (const name of ["resourceId", "resource", "operation", "taintReason"])
            assert.ok(!(name in outputs), `${name} is present`);
        assert.equal(outputs.tainted, false);
    });

    it("does not change the inputs given", () => {
        const inputs = news();
        const copy = structuredClone(inputs);
        outputsOf(inputs, { resourceId: API_ID, tainted: false });
        assert.deepEqual(inputs, copy);
    });
});

describe("isPendingCreate", () => {
    it("is true for a create whose end was not seen: no API id, not tainted", () => {
        assert.equal(isPendingCreate(outputsOf(news(), { tainted: false })), true);
        assert.equal(isPendingCreate(outputsOf(news(), { tainted: false, operation: OPERATION })), true);
    });

    it("is false once the API's id is known", () => {
        assert.equal(isPendingCreate(olds()), false);
    });

    it("is false for a tainted resource (it is replaced, not resumed)", () => {
        assert.equal(isPendingCreate(outputsOf(news(), { tainted: true, taintReason: "failed" })), false);
    });
});

describe("heldByAnother and heldPartial (a create sent while someone else held the key)", () => {
    const pending = () => ({ ...outputsOf(news(), { tainted: false, operation: OPERATION }), keyHeldBy: "w1" });

    it("is what held the key, while the create is not seen to make it", () => {
        assert.equal(heldByAnother(pending(), { id: "w1" }), true);
        assert.equal(heldByAnother(pending(), { id: "w1" }, true), false, "its operation succeeded: ours");
        assert.equal(heldByAnother(pending(), { id: "w2" }), false, "another id: not what held it");
        assert.equal(heldByAnother(pending(), undefined), false);
        assert.equal(heldByAnother(outputsOf(news(), { tainted: false }), { id: "w1" }), false, "nothing held it");
        assert.equal(heldByAnother({ ...pending(), resourceId: "w1" }, { id: "w1" }), false, "recorded as ours");
    });

    it("names the holder in a partial state without an id, and leaves one with an id as it is", () => {
        const inputs = { ...news(), __provider: PROVIDER } as RawAsyncInputs;
        const spec = specOf(inputs);
        const partialOf = (known: Parameters<typeof outputsOf>[1]) =>
            partialState(inputs, spec.key, spec.label, outputsOf(inputs, known), "interrupted");
        const held = heldPartial(partialOf({ tainted: false, operation: OPERATION }), "w1");
        assert.equal(held.properties.keyHeldBy, "w1");
        assert.equal(held.message, partialOf({ tainted: false }).message);
        const named = partialOf({ tainted: true, resourceId: "w9" });
        assert.equal(heldPartial(named, "w1"), named);
    });
});

describe("partialState", () => {
    function partial(
        inputs: RawAsyncInputs,
        outputs = outputsOf(inputs, { tainted: false, operation: OPERATION }),
    ): PartialStateError {
        const spec = specOf(inputs);
        return partialState(inputs, spec.key, spec.label, outputs, "the create's outcome is unknown");
    }

    it("is a PartialStateError under the natural key, carrying __provider", () => {
        const inputs = { ...news(), __provider: PROVIDER } as RawAsyncInputs;
        const error = partial(inputs);
        assert.ok(error instanceof PartialStateError);
        assert.equal(error.id, "w1");
        assert.equal(error.properties.__provider, PROVIDER);
        assert.deepEqual(error.properties.operation, OPERATION);
        assert.equal(error.properties.tainted, false);
        assert.deepEqual(error.properties.body, news().body);
    });

    it("is under the key given when the body does not carry it", () => {
        const inputs = { ...armNews({ key: "w7" }), __provider: PROVIDER } as RawAsyncInputs;
        const error = partial(inputs);
        assert.equal(error.id, "w7");
        assert.equal(error.properties.__provider, PROVIDER);
    });

    it("has no undefined value (the SDK server cannot encode one)", () => {
        const inputs = {
            ...news(),
            createToken: undefined,
            timeouts: undefined,
            __provider: PROVIDER,
        } as RawAsyncInputs;
        const outputs = { ...outputsOf(inputs, { tainted: false }), resourceId: undefined, taintReason: undefined };
        const error = partial(inputs, outputs);
        for (const [name, value] of Object.entries(error.properties))
            assert.notEqual(value, undefined, `${name} is undefined`);
        for (const name of ["createToken", "timeouts", "resourceId", "taintReason"])
            assert.ok(!(name in error.properties), `${name} is present`);
    });

    it("names the resource and the reason in its message and its reasons", () => {
        const error = partial({ ...news(), __provider: PROVIDER } as RawAsyncInputs);
        assert.match(error.message, /"w1"/);
        assert.match(error.message, /\/v1\/projects\/p1\/widgets/);
        assert.match(error.message, /the create's outcome is unknown/);
        assert.deepEqual(error.reasons, [error.message]);
    });

    it("records what is known over the inputs (a taint)", () => {
        const inputs = { ...news(), __provider: PROVIDER } as RawAsyncInputs;
        const error = partial(inputs, outputsOf(inputs, { tainted: true, taintReason: "its operation failed" }));
        assert.equal(error.properties.tainted, true);
        assert.equal(error.properties.taintReason, "its operation failed");
    });
});

describe("resumedInputs", () => {
    const sentBody = { name: "w1", size: 1, tags: { team: "a", tier: "gold" } };
    const newBody = { name: "w1", size: 2, tags: { team: "a", tier: "gold" } };

    it("replays the body and the token the pending create was sent with; the program's settings otherwise", () => {
        const pending = outputsOf(news({ createToken: "tok-sent", body: sentBody }), {
            tainted: false,
            operation: OPERATION,
        });
        const program = {
            ...news({ createToken: "tok-new", body: newBody, timeouts: { create: "1h" }, untaint: true }),
            __provider: PROVIDER,
        } as RawAsyncInputs;
        const resumed = resumedInputs(pending, program);
        assert.equal(resumed.createToken, "tok-sent");
        assert.deepEqual(resumed.body, sentBody);
        assert.deepEqual(resumed.timeouts, { create: "1h" });
        assert.equal(resumed.untaint, true);
        assert.equal(resumed.__provider, PROVIDER);
        assert.equal(bodyChanged(resumed, program), true, "the update after the resumption sends the program's body");
    });

    it("keeps the token sent even when the program no longer sets one", () => {
        const pending = outputsOf(news({ createToken: "tok-sent", body: sentBody }), { tainted: false });
        const resumed = resumedInputs(pending, news({ body: newBody }) as RawAsyncInputs);
        assert.equal(resumed.createToken, "tok-sent");
        assert.deepEqual(resumed.body, sentBody);
    });

    // Resumed with the program's body, a create found by its natural key is recorded as holding that body
    // while the API holds the body it was sent with, and the update that follows sees no change to send.
    it("replays the body a pending create was sent with even without a token", () => {
        const pending = outputsOf(news({ body: sentBody }), { tainted: false });
        const program = news({ body: newBody }) as RawAsyncInputs;
        const resumed = resumedInputs(pending, program);
        assert.deepEqual(resumed.body, sentBody);
        assert.equal(bodyChanged(resumed, program), true, "the update after the resumption sends the program's body");
    });

    it("does not change what it is given", () => {
        const pending = outputsOf(news({ createToken: "tok-sent", body: sentBody }), { tainted: false });
        const program = news({ createToken: "tok-new", body: newBody }) as RawAsyncInputs;
        const copies = structuredClone([pending, program]);
        resumedInputs(pending, program);
        assert.deepEqual([pending, program], copies);
    });
});

describe("specOf and resolve", () => {
    describe("where the resource lives", () => {
        it("fills the path parameters, with the item's id as one segment", () => {
            const spec = specOf(news());
            assert.equal(spec.target.collectionPath, "/v1/projects/p1/widgets");
            assert.equal(spec.target.itemPath(API_ID), `/v1/projects/p1/widgets/${API_ID}`);
            assert.equal(spec.target.itemPath("a/b c"), "/v1/projects/p1/widgets/a%2Fb%20c");
        });

        it("generic POST: the API chooses the id, read at idField", () => {
            const spec = specOf(news());
            assert.equal(spec.keyIsId, false);
            assert.equal(spec.target.createId, undefined);
            assert.equal(spec.idOf({ id: "abc", name: "w1" }), "abc");
            assert.equal(spec.idOf({ id: 42 }), "42");
            assert.equal(spec.idOf({ name: "w1" }), undefined);
            assert.equal(spec.idOf({ id: "" }), undefined);
            assert.equal(spec.idOf({ id: { nested: true } }), undefined);
            assert.equal(spec.keyOf({ id: "abc", name: "w1" }), "w1");
        });

        it("a nested idField and naturalKey read nested values", () => {
            const spec = specOf(
                news({ idField: "metadata.uid", naturalKey: "metadata.name", body: { metadata: { name: "w1" } } }),
            );
            assert.equal(spec.key, "w1");
            assert.equal(spec.idOf({ metadata: { uid: "u-1", name: "w1" } }), "u-1");
            assert.equal(spec.keyOf({ metadata: { uid: "u-1", name: "w1" } }), "w1");
        });

        it("where the natural key is the id: created and read at the item path of the key", () => {
            const spec = specOf(armNews());
            assert.equal(spec.keyIsId, true);
            assert.equal(spec.key, "w1");
            assert.equal(spec.target.createId, "w1");
            assert.equal(spec.idOf({ name: "w1", id: "/subscriptions/0000-sub/…/w1" }), "w1");
            assert.equal(
                spec.target.itemPath(spec.key),
                "/subscriptions/0000-sub/resourceGroups/rg1/providers/Test.Widgets/widgets/w1?api-version=2024-01-01",
            );
        });

        it("google and aws-cloudcontrol address the resource by its natural key; Cloud Control carries the type", () => {
            const google = specOf(
                checked({
                    ...genericRaw({}, { dialect: "google", idParameter: "widgetId" }),
                    idField: undefined,
                    lookup: undefined,
                }),
            );
            assert.equal(google.keyIsId, true);
            assert.equal(google.target.createId, "w1");
            const aws = specOf(
                checked({
                    api: {
                        url: "https://cloudcontrolapi.us-east-1.amazonaws.com",
                        dialect: "aws-cloudcontrol",
                        typeName: "AWS::Logs::LogGroup",
                        region: "us-east-1",
                    },
                    collectionPath: "/",
                    itemPath: "/{id}",
                    naturalKey: "LogGroupName",
                    body: { LogGroupName: "lg-1" },
                }),
            );
            assert.equal(aws.keyIsId, true);
            assert.equal(aws.key, "lg-1");
            assert.equal(aws.target.typeName, "AWS::Logs::LogGroup");
        });

        it("generic PUT: the natural key is the id", () => {
            const spec = specOf(
                checked({ ...genericRaw({}, { generic: { createMethod: "PUT" } }), idField: undefined }),
            );
            assert.equal(spec.keyIsId, true);
            assert.equal(spec.target.createId, "w1");
            assert.equal(spec.dialect.name, "generic");
        });

        it("the label names the natural key and the collection", () => {
            assert.equal(specOf(news()).label, '"w1" at /v1/projects/p1/widgets');
        });
    });

    describe("the lookup by natural key", () => {
        it("fills {key} url-encoded in lookup.query", () => {
            const spec = specOf(news({ body: { name: "a b&c=d/e?f#g%h" } }));
            assert.equal(spec.listPath, "/v1/projects/p1/widgets?name=a%20b%26c%3Dd%2Fe%3Ff%23g%25h");
        });

        it("encodes the query's own spaces (an OData filter)", () => {
            const spec = specOf(news({ lookup: { query: "filter=name eq '{key}'" } }));
            assert.equal(spec.listPath, "/v1/projects/p1/widgets?filter=name%20eq%20'w1'");
        });

        it("fills every {key} of the query", () => {
            const spec = specOf(news({ lookup: { query: "name={key}&alias={key}" }, body: { name: "x y" } }));
            assert.equal(spec.listPath, "/v1/projects/p1/widgets?name=x%20y&alias=x%20y");
        });

        it("adds the query after the collection's own query with &", () => {
            const spec = specOf(
                news({
                    collectionPath: "/widgets?api-version=2024-01-01",
                    itemPath: "/widgets/{id}?api-version=2024-01-01",
                }),
            );
            assert.equal(spec.listPath, "/widgets?api-version=2024-01-01&name=w1");
        });

        it("is the collection itself without a query", () => {
            assert.equal(specOf(news({ lookup: undefined })).listPath, "/v1/projects/p1/widgets");
        });

        it("uses key when given", () => {
            const spec = specOf(news({ key: "k/1", body: { size: 1 } }));
            assert.equal(spec.key, "k/1");
            assert.equal(spec.listPath, "/v1/projects/p1/widgets?name=k%2F1");
        });

        const record = { id: "abc", name: "w1" };
        const found: Array<[string, unknown]> = [
            ["an array answer", [record]],
            ["items", { items: [record], nextPageToken: "t" }],
            ["value (Azure)", { value: [record], nextLink: null }],
            ["data", { data: [record] }],
        ];
        for (const [where, answer] of found) {
            it(`finds the items in ${where}`, () => {
                assert.deepEqual(specOf(news()).listItems(answer), [record]);
            });
        }

        it("finds no items in an answer without a list where it looks", () => {
            const spec = specOf(news());
            assert.equal(spec.listItems({ widgets: [record] }), undefined);
            assert.equal(spec.listItems({ items: "none" }), undefined);
            assert.equal(spec.listItems(null), undefined);
            assert.equal(spec.listItems("[]"), undefined);
        });

        it("finds the items at the selector given, and only there", () => {
            const spec = specOf(news({ lookup: { query: "name={key}", items: "result.widgets" } }));
            assert.deepEqual(spec.listItems({ result: { widgets: [record] } }), [record]);
            assert.equal(spec.listItems({ items: [record] }), undefined);
            assert.equal(spec.listItems([record]), undefined);
            assert.equal(spec.listItems({ result: { widgets: { 0: record } } }), undefined);
        });

        it("never reads items from an object's prototype", () => {
            const spec = specOf(news({ lookup: { items: "constructor" } }));
            assert.equal(spec.listItems({}), undefined);
        });
    });

    describe("problems", () => {
        it("specOf throws naming the field when the inputs do not resolve", () => {
            const inputs = {
                ...news(),
                api: { url: "https://api.example.com", dialect: "soap" },
            } as unknown as AsyncResourceInputs;
            assert.throws(() => specOf(inputs), /api\.dialect/);
        });

        it("resolve adds every problem it finds and resolves nothing", () => {
            const problems: SpecProblem[] = [];
            const inputs = {
                ...news(),
                api: { url: "https://api.example.com", dialect: "soap" },
                collectionPath: "/a/../b",
                itemPath: "/widgets/current",
                naturalKey: "a..b",
            } as unknown as AsyncResourceInputs;
            assert.equal(resolve(inputs, problems), undefined);
            const properties = problems.map((problem) => problem.property);
            for (const property of ["api.dialect", "collectionPath", "itemPath", "naturalKey"])
                assert.ok(properties.includes(property), `no problem on ${property}: ${JSON.stringify(problems)}`);
        });

        it("resolve adds nothing for valid inputs and keeps the problems already there", () => {
            const problems: SpecProblem[] = [{ property: "earlier", reason: "kept" }];
            assert.ok(resolve(news(), problems));
            assert.deepEqual(problems, [{ property: "earlier", reason: "kept" }]);
        });
    });
});
