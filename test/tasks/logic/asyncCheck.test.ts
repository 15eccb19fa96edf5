// Guards the check of a tasks.AsyncResource (provider/tasks/logic/asyncCheck.ts), written from what a user
// of issue 19 expects (section 4: "bad input gets check failures naming the field"; section 3: the token
// never in state, requests never leave the API's path): every failure names its property and says what is
// wrong and what to do; path templates and path values that could move a request elsewhere are refused or
// encoded as one segment; selectors and locators that do not parse are refused at check time, never in
// the middle of an operation; the body is a JSON object (or a JSON string of one) the API can take; and
// values the engine does not know yet during preview (the unknown sentinel) never fail the check. Pure
// tables.

import { strict as assert } from "node:assert";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { UNKNOWN } from "../../../provider/shared/unknown";
import type { AsyncResourceInputs } from "../../../provider/tasks/asyncResourceSchema";
import { checkAsyncResource } from "../../../provider/tasks/logic/asyncCheck";
import { specOf } from "../../../provider/tasks/logic/asyncSpec";

type Raw = Record<string, unknown>;

const URL_BASE = "https://api.example.com";

/** A generic widget as a program declares it: the API chooses the id, found by name. */
function generic(overrides: Raw = {}, api: Raw = {}): Raw {
    return {
        api: { url: URL_BASE, dialect: "generic", tokenEnv: "WIDGETS_TOKEN", ...api },
        collectionPath: "/v1/projects/{project}/widgets",
        itemPath: "/v1/projects/{project}/widgets/{id}",
        pathParameters: { project: "p1" },
        naturalKey: "name",
        idField: "id",
        lookup: { query: "name={key}" },
        body: { name: "w1", size: 1 },
        ...overrides,
    };
}

/** An Azure Resource Manager widget: the name is in the URL (given as key), the body does not carry it. */
function azureArm(overrides: Raw = {}, api: Raw = {}): Raw {
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

/** A Google AIP widget: the id is set up front by widgetId. */
function google(overrides: Raw = {}, api: Raw = {}): Raw {
    return {
        api: { url: "https://widgets.example.googleapis.com", dialect: "google", idParameter: "widgetId", ...api },
        collectionPath: "/v1/projects/{project}/locations/{location}/widgets",
        itemPath: "/v1/projects/{project}/locations/{location}/widgets/{id}",
        pathParameters: { project: "p1", location: "us-central1" },
        naturalKey: "displayName",
        body: { displayName: "w1", size: 1 },
        ...overrides,
    };
}

/** An AWS Cloud Control resource: addressed by its primary identifier. */
function cloudControl(overrides: Raw = {}, api: Raw = {}): Raw {
    return {
        api: {
            url: "https://cloudcontrolapi.us-east-1.amazonaws.com",
            dialect: "aws-cloudcontrol",
            typeName: "AWS::Logs::LogGroup",
            region: "us-east-1",
            ...api,
        },
        collectionPath: "/",
        itemPath: "/{id}",
        naturalKey: "LogGroupName",
        body: { LogGroupName: "w1", RetentionInDays: 7 },
        ...overrides,
    };
}

/** `raw` without `name`. */
function without(raw: Raw, name: string): Raw {
    const { [name]: _, ...rest } = raw;
    return rest;
}

/** `raw` with its api without `name`. */
function withoutApi(raw: Raw, name: string): Raw {
    return { ...raw, api: without(raw.api as Raw, name) };
}

function failuresOf(news: Raw): dynamic.CheckFailure[] {
    return checkAsyncResource(news).failures;
}

/** Checks `news`, asserts no failure, and returns the inputs. */
function accept(news: Raw): AsyncResourceInputs {
    const { inputs, failures } = checkAsyncResource(news);
    assert.deepEqual(failures, [], `refused ${JSON.stringify(news)}`);
    return inputs;
}

/**
 * Asserts that checking `news` fails exactly once, on `property`, with a reason matching every pattern
 * given (what is wrong, and what to do).
 */
function refuse(news: Raw, property: string, ...reasons: RegExp[]): string {
    const failures = failuresOf(news);
    assert.equal(failures.length, 1, `expected one failure on ${property}, got ${JSON.stringify(failures)}`);
    assert.equal(failures[0]?.property, property, JSON.stringify(failures));
    const reason = failures[0]?.reason ?? "";
    for (const pattern of reasons) assert.match(reason, pattern);
    return reason;
}

/** Asserts that some failure names `property`, with a reason matching every pattern given. */
function refuseAmong(news: Raw, property: string, ...reasons: RegExp[]): string {
    const failures = failuresOf(news);
    const found = failures.find((failure) => failure.property === property);
    assert.ok(found, `expected a failure on ${property}, got ${JSON.stringify(failures)}`);
    for (const pattern of reasons) assert.match(found.reason ?? "", pattern);
    return found.reason ?? "";
}

/** An object nested `levels` objects deep: {a: {a: ... {a: 1}}}. */
function nested(levels: number): Raw {
    let value: unknown = 1;
    for (let level = 0; level < levels; level++) value = { a: value };
    return value as Raw;
}

describe("checkAsyncResource", () => {
    it("refuses a property it does not take, naming the input meant; passes on what the state adds", () => {
        refuse(
            generic({ replaceOnChange: ["size"] }),
            "replaceOnChange",
            /^AsyncResource has no input `replaceOnChange`\. Did you mean `replaceOnChanges`\? Its inputs are api, collectionPath, /,
            /, adopt, untaint; correct or remove `replaceOnChange`\.$/,
        );
        accept(generic({ resourceId: "w-1", tainted: false, stateVersion: 1, customTimeouts: { create: "1m" } }));
    });

    describe("valid inputs of each dialect", () => {
        for (const [name, raw] of [
            ["generic", generic()],
            ["azure-arm", azureArm()],
            ["google", google()],
            ["aws-cloudcontrol", cloudControl()],
            ["azure", azureArm({}, { dialect: "azure", tokenConfig: undefined, tokenEnv: "WIDGETS_TOKEN" })],
            [
                "generic with PUT to the item path (no idField)",
                without(generic({}, { generic: { createMethod: "PUT" } }), "idField"),
            ],
        ] as const) {
            it(`${name}: accepted as given, adopt and untaint false`, () => {
                const inputs = accept(raw);
                assert.equal(inputs.adopt, false);
                assert.equal(inputs.untaint, false);
                assert.deepEqual(inputs.body, raw.body);
                assert.equal(inputs.collectionPath, raw.collectionPath);
                assert.deepEqual(inputs.replaceOnChanges, []);
            });
        }

        it("keep every optional setting given", () => {
            const inputs = accept(
                generic({
                    replaceOnChanges: ["size"],
                    createToken: "tok-1",
                    timeouts: { create: "30m", delete: "5m" },
                    adopt: true,
                    untaint: true,
                    lookup: { query: "filter=name eq '{key}'", items: "result.widgets" },
                }),
            );
            assert.deepEqual(inputs.replaceOnChanges, ["size"]);
            assert.equal(inputs.createToken, "tok-1");
            assert.deepEqual(inputs.timeouts, { create: "30m", delete: "5m" });
            assert.equal(inputs.adopt, true);
            assert.equal(inputs.untaint, true);
            assert.deepEqual(inputs.lookup, { query: "filter=name eq '{key}'", items: "result.widgets" });
        });

        it("do not change the object given", () => {
            const news = generic({ body: JSON.stringify({ name: "w1", size: 1 }) });
            const copy = structuredClone(news);
            accept(news);
            assert.deepEqual(news, copy);
        });

        it("nothing at all is refused field by field, without throwing", () => {
            const failures = failuresOf({});
            const properties = failures.map((failure) => failure.property);
            for (const required of ["api", "collectionPath", "itemPath", "body", "naturalKey"])
                assert.ok(properties.includes(required), `no failure on ${required}: ${JSON.stringify(failures)}`);
        });
    });

    describe("path templates", () => {
        for (const property of ["collectionPath", "itemPath"] as const) {
            it(`${property}: an unknown placeholder is refused, saying to give it in pathParameters`, () => {
                const raw = generic();
                const template = (raw[property] as string).replace("{project}", "{projet}");
                const reason = refuse(
                    generic({ [property]: template }),
                    property,
                    /\{projet\}/,
                    /pathParameters\.projet/,
                );
                assert.match(reason, /unknown placeholder/);
            });

            for (const segment of ["..", "."]) {
                it(`${property}: a "${segment}" segment is refused`, () => {
                    const template = (generic()[property] as string).replace("/widgets", `/${segment}/admin`);
                    refuse(generic({ [property]: template }), property, /"\." or "\.\."/);
                });
            }

            it(`${property}: a ".." segment at the end is refused`, () => {
                refuse(generic({ [property]: `${generic()[property] as string}/..` }), property, /"\.\."/);
            });

            // WHATWG URL parsing (fetch's) resolves %2e%2e as a ".." segment: /a/%2e%2e/b is requested as /b.
            for (const segment of ["%2e%2e", "%2E%2e", ".%2e", "%2e"]) {
                it(`${property}: an encoded dot segment "${segment}" is refused like the plain one`, () => {
                    const template = (generic()[property] as string).replace("/widgets", `/${segment}/admin`);
                    refuse(generic({ [property]: template }), property, /\.\.|dot/);
                });
            }

            it(`${property}: not starting with "/" is refused`, () => {
                const template = (generic()[property] as string).slice(1);
                refuse(generic({ [property]: template }), property, /must start with "\/"/);
            });

            it(`${property}: a full URL is refused (the API's URL is api.url)`, () => {
                refuse(
                    generic({ [property]: `https://evil.example.com${generic()[property] as string}` }),
                    property,
                    /"\/"/,
                );
            });

            it(`${property}: starting with "//" (another host) is refused`, () => {
                refuse(generic({ [property]: `/${generic()[property] as string}` }), property, /"\/\/"/, /host/);
            });

            it(`${property}: an empty or missing template is refused`, () => {
                refuse(generic({ [property]: "" }), property, /non-empty/);
                refuse(without(generic(), property), property, /required/);
            });
        }

        it("itemPath without {id} is refused, saying to name it", () => {
            refuse(generic({ itemPath: "/v1/projects/{project}/widgets/current" }), "itemPath", /\{id\}/);
        });

        it("collectionPath with {id} is refused, saying it belongs in itemPath", () => {
            refuse(
                generic({ collectionPath: "/v1/projects/{project}/widgets/{id}" }),
                "collectionPath",
                /\{id\}/,
                /itemPath/,
            );
        });

        it("a query after the path (api-version) is accepted", () => {
            accept(azureArm());
        });
    });

    describe("the natural key", () => {
        it("missing from the body is refused, naming the selector and saying to give key instead", () => {
            const failures = failuresOf(generic({ body: { size: 1 } }));
            assert.equal(failures.length, 1, JSON.stringify(failures));
            assert.ok(
                ["body", "body.name", "naturalKey"].includes(failures[0]?.property ?? ""),
                JSON.stringify(failures),
            );
            assert.match(failures[0]?.reason ?? "", /name/);
            assert.match(failures[0]?.reason ?? "", /missing/);
            assert.match(failures[0]?.reason ?? "", /\bkey\b/);
        });

        it("missing from the body is accepted when key is given", () => {
            const inputs = accept(generic({ body: { size: 1 }, key: "w1" }));
            assert.equal(inputs.key, "w1");
            assert.equal(specOf(inputs).key, "w1");
        });

        it("nested in the body is found by its selector", () => {
            const inputs = accept(generic({ naturalKey: "metadata.name", body: { metadata: { name: "w9" } } }));
            assert.equal(specOf(inputs).key, "w9");
        });

        for (const [what, value] of [
            ["empty", ""],
            ["a number", 7],
            ["an object", { first: "w" }],
        ] as const) {
            it(`in the body but ${what} is refused`, () => {
                const failures = failuresOf(generic({ body: { name: value, size: 1 } }));
                assert.equal(failures.length, 1, JSON.stringify(failures));
                assert.ok(
                    ["body", "body.name", "naturalKey"].includes(failures[0]?.property ?? ""),
                    JSON.stringify(failures),
                );
                assert.match(failures[0]?.reason ?? "", /name/);
            });
        }

        // Where the natural key is the API's id it becomes a path segment: ".." would address the collection.
        for (const value of ["..", "."]) {
            it(`${JSON.stringify(value)} in the body is refused where the natural key is the id (google)`, () => {
                const failures = failuresOf(google({ body: { displayName: value, size: 1 } }));
                assert.equal(failures.length, 1, JSON.stringify(failures));
                assert.ok(
                    ["body", "body.displayName", "naturalKey"].includes(failures[0]?.property ?? ""),
                    JSON.stringify(failures),
                );
                assert.match(failures[0]?.reason ?? "", /displayName/);
            });
        }

        // With key given, the API's records still carry the body's value (a POST makes it): the lookup by
        // key would never find the resource, and every interrupted create would leave a duplicate.
        it("a key that contradicts the natural key the body carries is refused", () => {
            refuseAmong(generic({ key: "w2" }), "key", /w2/, /w1/);
        });
    });

    describe("key and path parameters", () => {
        for (const value of ["..", ".", ""]) {
            it(`key ${JSON.stringify(value)} is refused`, () => {
                refuse(azureArm({ key: value }), "key", value === "" ? /empty/ : /leave its place/);
            });

            it(`pathParameters.group ${JSON.stringify(value)} is refused`, () => {
                refuse(
                    azureArm({ pathParameters: { subscription: "0000-sub", group: value } }),
                    "pathParameters.group",
                    value === "" ? /empty/ : /leave its place/,
                );
            });
        }

        it("a key or path parameter that is not a string is refused", () => {
            refuse(azureArm({ key: 7 }), "key", /not a string/);
            refuse(
                azureArm({ pathParameters: { subscription: "0000-sub", group: 7 } }),
                "pathParameters.group",
                /not a string/,
            );
        });

        it('a "/" in a path parameter is encoded, never a new segment', () => {
            const inputs = accept(generic({ pathParameters: { project: "../admin/x" } }));
            const { target } = specOf(inputs);
            assert.equal(target.itemPath("x"), "/v1/projects/..%2Fadmin%2Fx/widgets/x");
            assert.equal(target.collectionPath, "/v1/projects/..%2Fadmin%2Fx/widgets");
        });

        it('a "%2F" in a path parameter stays a literal percent sign: it is encoded, never decoded into a "/"', () => {
            const inputs = accept(generic({ pathParameters: { project: "a%2F..%2Fb" } }));
            assert.equal(specOf(inputs).target.itemPath("x"), "/v1/projects/a%252F..%252Fb/widgets/x");
        });

        it('a "/" in key is one segment of the item path', () => {
            const inputs = accept(azureArm({ key: "a/../b" }));
            const { target, key } = specOf(inputs);
            assert.equal(key, "a/../b");
            assert.equal(target.createId, "a/../b");
            assert.equal(
                target.itemPath(key),
                "/subscriptions/0000-sub/resourceGroups/rg1/providers/Test.Widgets/widgets/a%2F..%2Fb?api-version=2024-01-01",
            );
        });

        it('a "?" or "#" in a path parameter cannot start a query or a fragment', () => {
            const inputs = accept(generic({ pathParameters: { project: "p?x=1#f" } }));
            assert.equal(specOf(inputs).target.itemPath("x"), "/v1/projects/p%3Fx%3D1%23f/widgets/x");
        });

        it("pathParameters that are not an object are refused", () => {
            refuse(generic({ pathParameters: ["p1"] }), "pathParameters", /object/);
        });
    });

    describe("dialects", () => {
        it("an unknown dialect is refused, listing the dialects", () => {
            refuse(
                generic({}, { dialect: "soap" }),
                "api.dialect",
                /"soap"/,
                /generic/,
                /azure-arm/,
                /google/,
                /aws-cloudcontrol/,
            );
        });

        it("a missing dialect is refused", () => {
            refuse(withoutApi(generic(), "dialect"), "api.dialect", /generic/);
        });

        it("google without idParameter is accepted: the server names the resource, found by its natural key", () => {
            assert.equal(accept(withoutApi(google(), "idParameter")).api.idParameter, undefined);
        });

        it("google without idParameter (the server names it) takes no idField: the id is the last segment of `name`", () => {
            refuse(
                withoutApi(google({ idField: "name" }), "idParameter"),
                "idField",
                /last segment of its name \(AIP-122\)/,
            );
        });

        it("aws-cloudcontrol without typeName is refused, with an example", () => {
            refuse(withoutApi(cloudControl(), "typeName"), "api.typeName", /AWS::/);
        });

        it("a typeName that is not Service::Family::Type is refused", () => {
            refuse(cloudControl({}, { typeName: "LogGroup" }), "api.typeName", /AWS::Logs::LogGroup/);
        });

        for (const [name, raw] of [
            ["azure-arm", azureArm({ idField: "id" })],
            ["azure", azureArm({ idField: "id" }, { dialect: "azure" })],
            ["google", google({ idField: "name" })],
            ["aws-cloudcontrol", cloudControl({ idField: "Arn" })],
            ["generic with createMethod PUT", generic({}, { generic: { createMethod: "PUT" } })],
        ] as const) {
            it(`${name} with idField is refused: the natural key is the id`, () => {
                refuse(raw, "idField", /remove idField/);
            });
        }

        it("generic POST without idField is refused, saying where the id is", () => {
            refuse(without(generic(), "idField"), "idField", /\bid\b/);
        });
    });

    describe("selectors", () => {
        for (const [property, raw] of [
            ["naturalKey", (value: string) => generic({ naturalKey: value, key: "w1" })],
            ["idField", (value: string) => generic({ idField: value })],
            ["lookup.items", (value: string) => generic({ lookup: { query: "name={key}", items: value } })],
        ] as const) {
            for (const bad of ["a..b", "items.", "[0]", "a b", "a[x]"]) {
                it(`${property} ${JSON.stringify(bad)} is refused with the position`, () => {
                    refuse(raw(bad), property, new RegExp(JSON.stringify(bad).replace(/[[\].]/g, "\\$&")), /position/);
                });
            }
        }

        it('selectors with indices and quoted names parse: items[0].name, metadata["odata.id"]', () => {
            accept(generic({ idField: 'metadata["odata.id"]', lookup: { items: "result[0].widgets" } }));
        });
    });

    describe("generic dialect options", () => {
        it('monitor "nonsense" is refused, naming the locator forms', () => {
            refuse(
                generic({}, { generic: { monitor: "nonsense" } }),
                "api.generic.monitor",
                /header\.<Name>/,
                /body\.<path>/,
            );
        });

        it('status "code" is accepted (the HTTP code is the status)', () => {
            accept(generic({}, { generic: { status: "code" } }));
        });

        it('monitor "code" is refused: a code is no URL', () => {
            refuse(generic({}, { generic: { monitor: "code" } }), "api.generic.monitor", /code/);
        });

        it('resource "code" is refused', () => {
            refuse(generic({}, { generic: { resource: "code" } }), "api.generic.resource", /code/);
        });

        it("a body locator whose selector does not parse is refused", () => {
            refuse(generic({}, { generic: { status: "body.a..b" } }), "api.generic.status", /selector/);
        });

        it("header and body locators are accepted", () => {
            accept(
                generic(
                    {},
                    {
                        generic: {
                            monitor: "body.links.monitor",
                            status: "header.X-Status",
                            resource: "body.resource.href",
                        },
                    },
                ),
            );
        });

        for (const header of ["Authorization", "authorization", "AUTHORIZATION"]) {
            it(`idempotencyHeader ${JSON.stringify(header)} is refused`, () => {
                refuse(
                    generic({}, { generic: { idempotencyHeader: header } }),
                    "api.generic.idempotencyHeader",
                    /Authorization/i,
                );
            });
        }

        it("an idempotencyHeader that is no header name (a line break) is refused", () => {
            refuse(
                generic({}, { generic: { idempotencyHeader: "X-Key\r\nX-Evil: 1" } }),
                "api.generic.idempotencyHeader",
            );
        });

        it("an unknown option is refused, naming it and listing the options", () => {
            refuse(generic({}, { generic: { retries: 3 } }), "api.generic.retries", /monitor/, /idempotencyHeader/);
        });

        it("a createMethod or updateMethod the dialect does not have is refused", () => {
            refuse(generic({}, { generic: { createMethod: "PATCH" } }), "api.generic.createMethod", /POST, PUT/);
            refuse(generic({}, { generic: { updateMethod: "DELETE" } }), "api.generic.updateMethod", /PATCH/);
        });

        it("status words that are not a list of words are refused", () => {
            refuse(generic({}, { generic: { success: "done" } }), "api.generic.success", /list/);
            refuse(generic({}, { generic: { pending: ["running", ""] } }), "api.generic.pending", /list/);
        });
    });

    describe("body", () => {
        it("a JSON string of an object is accepted and parsed", () => {
            const inputs = accept(generic({ body: '{"name":"w1","size":1,"tags":{"a":"b"}}' }));
            assert.deepEqual(inputs.body, { name: "w1", size: 1, tags: { a: "b" } });
            assert.equal(specOf(inputs).key, "w1");
        });

        it("a string that is not JSON is refused, naming body", () => {
            refuse(generic({ body: "{name: w1}" }), "body", /not JSON/);
        });

        for (const [what, body] of [
            ["a list", [{ name: "w1" }]],
            ["a JSON string of a list", '[{"name":"w1"}]'],
            ["a JSON string of a string", '"w1"'],
            ["null as JSON", "null"],
            ["a number", 42],
        ] as const) {
            it(`${what} is refused: the body is a JSON object`, () => {
                refuse(generic({ body, key: "w1" }), "body", /JSON object/);
            });
        }

        it("a body 32 levels deep is accepted; 33 is refused", () => {
            accept(generic({ body: { name: "w1", deep: nested(31) } }));
            refuse(generic({ body: { name: "w1", deep: nested(32) } }), "body", /32/);
            refuse(generic({ body: JSON.stringify({ name: "w1", deep: nested(40) }) }), "body", /32/);
        });

        for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
            it(`${value} anywhere in the body is refused: JSON cannot carry it`, () => {
                refuse(generic({ body: { name: "w1", size: value } }), "body", new RegExp(String(value)), /JSON/);
                refuse(generic({ body: { name: "w1", sizes: [1, { x: value }] } }), "body", /JSON/);
            });
        }
    });

    describe("api", () => {
        it("a token in inputs is refused, saying to use tokenConfig or tokenEnv, and never repeats it", () => {
            const secret = "Sekrit-5d2f.never-print";
            const { inputs, failures } = checkAsyncResource(generic({}, { token: secret }));
            assert.equal(failures.length, 1, JSON.stringify(failures));
            assert.equal(failures[0]?.property, "api.token");
            assert.match(failures[0]?.reason ?? "", /tokenConfig/);
            assert.match(failures[0]?.reason ?? "", /tokenEnv/);
            assert.match(failures[0]?.reason ?? "", /state/);
            assert.ok(!JSON.stringify(failures).includes(secret), "the failure repeats the token");
            assert.ok(!JSON.stringify(inputs).includes(secret), "the checked inputs carry the token");
        });

        it("an unknown API setting is refused, naming it", () => {
            refuse(generic({}, { colour: "red" }), "api.colour");
        });

        it("a URL with credentials is refused and never repeats them", () => {
            for (const url of ["https://admin:hunter2@api.example.com", "https://hunter2@api.example.com"]) {
                const reason = refuse(generic({}, { url }), "api.url", /credentials/, /tokenConfig|tokenEnv/);
                assert.ok(!reason.includes("hunter2"), reason);
            }
        });

        it("a URL that does not parse is refused without repeating the password it carries", () => {
            const reason = refuse(generic({}, { url: "https://admin:hunter2@exa mple.com" }), "api.url");
            assert.ok(!reason.includes("hunter2"), `the failure repeats the password: ${reason}`);
        });

        it("a URL with a query or a fragment is refused", () => {
            refuse(generic({}, { url: `${URL_BASE}/?api-version=1` }), "api.url", /query/);
            refuse(generic({}, { url: `${URL_BASE}/#top` }), "api.url", /fragment/);
        });

        for (const url of [
            "ftp://api.example.com",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "ws://api.example.com",
        ]) {
            it(`a ${url.split(":")[0]}: URL is refused: http or https only`, () => {
                refuse(generic({}, { url }), "api.url", /http/);
            });
        }

        it("a URL that is not one is refused, saying how to write it", () => {
            refuse(generic({}, { url: "api.example.com" }), "api.url", /https:\/\//);
        });

        it("an http URL with a port is accepted, with or without its trailing slash", () => {
            for (const url of ["http://127.0.0.1:8080", "http://127.0.0.1:8080/"])
                assert.equal(accept(generic({}, { url })).api.url, url);
        });

        it("a base path is refused, saying to put it in the path templates (monitors the API names resolve against the origin)", () => {
            refuse(
                generic({}, { url: "http://127.0.0.1:8080/base" }),
                "api.url",
                /origin only/,
                /"\/base" at the start of collectionPath and itemPath/,
            );
        });

        for (const tokenConfig of ["token", ":token", "widgets:", "widgets token", ""]) {
            it(`tokenConfig ${JSON.stringify(tokenConfig)} (not namespace:key) is refused with an example`, () => {
                refuse(generic({}, { tokenConfig }), "api.tokenConfig", /widgets:token/);
            });
        }

        it("tokenConfig namespace:key is accepted", () => {
            assert.equal(accept(generic({}, { tokenConfig: "widgets:token" })).api.tokenConfig, "widgets:token");
        });

        it("a tokenEnv that is no environment variable name is refused", () => {
            refuse(generic({}, { tokenEnv: "1TOKEN" }), "api.tokenEnv", /WIDGETS_TOKEN/);
        });

        it("an api that is not an object is refused with an example", () => {
            refuse(generic({ api: URL_BASE }), "api", /url/, /dialect/);
        });
    });

    describe("other settings", () => {
        it("replaceOnChanges that is not a list of names is refused", () => {
            refuse(generic({ replaceOnChanges: "size" }), "replaceOnChanges", /list/);
        });

        it("lookup that is not an object is refused", () => {
            refuse(generic({ lookup: "name={key}" }), "lookup", /object/);
        });

        it("a lookup query with characters a query cannot hold is refused", () => {
            refuse(generic({ lookup: { query: "name={key}\r\nX: 1" } }), "lookup.query");
        });

        it("a timeout that does not parse is refused, naming the operation", () => {
            refuse(generic({ timeouts: { create: "soon" } }), "timeouts.create");
        });

        it("a createToken with a space is refused", () => {
            refuse(generic({ createToken: "a b" }), "createToken", /space/);
        });
    });

    describe("unknown values during preview", () => {
        const cases: Array<[string, Raw]> = [
            ["api.url", generic({}, { url: UNKNOWN })],
            ["api.dialect", generic({}, { dialect: UNKNOWN })],
            ["api.tokenConfig", generic({}, { tokenConfig: UNKNOWN })],
            ["api.idParameter", google({}, { idParameter: UNKNOWN })],
            ["api.generic.monitor", generic({}, { generic: { monitor: UNKNOWN } })],
            ["api (the whole object)", generic({ api: UNKNOWN })],
            ["api.generic (the whole object)", generic({}, { generic: UNKNOWN })],
            ["collectionPath", generic({ collectionPath: UNKNOWN })],
            ["itemPath", generic({ itemPath: UNKNOWN })],
            ["pathParameters.project", generic({ pathParameters: { project: UNKNOWN } })],
            ["pathParameters (the whole object)", generic({ pathParameters: UNKNOWN })],
            ["body", generic({ body: UNKNOWN })],
            ["body.name (the natural key)", generic({ body: { name: UNKNOWN, size: 1 } })],
            ["body.size", generic({ body: { name: "w1", size: UNKNOWN } })],
            ["key", azureArm({ key: UNKNOWN })],
            ["naturalKey", generic({ naturalKey: UNKNOWN })],
            ["idField", generic({ idField: UNKNOWN })],
            ["lookup.query", generic({ lookup: { query: UNKNOWN } })],
            ["lookup (the whole object)", generic({ lookup: UNKNOWN })],
            ["replaceOnChanges[0]", generic({ replaceOnChanges: [UNKNOWN] })],
            ["replaceOnChanges (the whole list)", generic({ replaceOnChanges: UNKNOWN })],
            ["createToken", generic({ createToken: UNKNOWN })],
            ["timeouts", generic({ timeouts: UNKNOWN })],
            ["timeouts.create", generic({ timeouts: { create: UNKNOWN } })],
            ["adopt", generic({ adopt: UNKNOWN })],
            ["untaint", generic({ untaint: UNKNOWN })],
        ];
        for (const [where, raw] of cases) {
            it(`an unknown ${where} fails nothing`, () => {
                accept(raw);
            });
        }

        it("an unknown whole object is passed on as unknown, so the diff counts it as a change", () => {
            assert.equal(accept(generic({ pathParameters: UNKNOWN })).pathParameters, UNKNOWN);
            assert.equal(accept(generic({ api: UNKNOWN })).api, UNKNOWN);
            assert.equal(accept(generic({ replaceOnChanges: UNKNOWN })).replaceOnChanges, UNKNOWN);
        });

        it("an unknown timeout is passed on as unknown, not dropped (the diff must see a change)", () => {
            assert.deepEqual(accept(generic({ timeouts: { create: UNKNOWN, delete: "5m" } })).timeouts, {
                create: UNKNOWN,
                delete: "5m",
            });
        });

        it("an unknown body stays unknown, and an unknown natural key stays in the body", () => {
            assert.equal(accept(generic({ body: UNKNOWN })).body, UNKNOWN);
            assert.deepEqual(accept(generic({ body: { name: UNKNOWN, size: 1 } })).body, { name: UNKNOWN, size: 1 });
        });

        it("what is known is still checked", () => {
            refuse(generic({ body: UNKNOWN }, { url: "ftp://api.example.com" }), "api.url", /http/);
            refuse(generic({ body: UNKNOWN, collectionPath: "/a/../b" }), "collectionPath", /"\.\."/);
        });
    });
});
