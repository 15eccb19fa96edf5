// Selectors and path templates: what a program writes is parsed once, refused with a reason naming the
// position, and never lets a value leave its place in a path.

import { strict as assert } from "node:assert";
import {
    fillPathTemplate,
    type PathTemplate,
    parsePathTemplate,
    placeholdersOf,
} from "../../../provider/tasks/protocol/pathTemplate";
import { assign, isSelectorProblem, parseSelector, select, selector } from "../../../provider/tasks/protocol/selector";

describe("selectors", () => {
    it("parse names, indices and quoted names", () => {
        const parsed = parseSelector('properties.items[2]["odata.type"]');
        assert.ok(!isSelectorProblem(parsed));
        assert.deepEqual(parsed.steps, ["properties", "items", 2, "odata.type"]);
    });

    it("refuse what does not parse, saying where", () => {
        for (const [source, problem] of [
            ["", /empty/],
            ["a..b", /position 3/],
            ["a.", /ends with "\."/],
            ["[0]", /position 1/],
            ["a b", /position 2/],
            [Array(40).fill("a").join("."), /more than 32 steps/],
        ] as const) {
            const parsed = parseSelector(source);
            assert.ok(isSelectorProblem(parsed), source);
            assert.match(parsed.problem, problem);
        }
    });

    it("select own properties only, and undefined for anything missing", () => {
        const value = { a: { b: [{ c: 1 }] } };
        assert.equal(select(value, selector("a.b[0].c")), 1);
        assert.equal(select(value, selector("a.b[1].c")), undefined);
        assert.equal(select(value, selector("a.toString")), undefined);
        assert.equal(select({ a: "text" }, selector("a.length")), undefined);
    });

    it("assign by copying along the path, leaving the original as it was", () => {
        const value = { a: { b: 1, keep: true } };
        assert.deepEqual(assign(value, selector("a.b"), 2), { a: { b: 2, keep: true } });
        assert.deepEqual(value, { a: { b: 1, keep: true } });
    });
});

describe("path templates", () => {
    const parse = (source: string) => parsePathTemplate(source) as PathTemplate;

    it("name their placeholders and fill each as one encoded segment", () => {
        const template = parse("/subscriptions/{subscriptionId}/widgets/{name}?api-version=2024-01-01");
        assert.deepEqual(placeholdersOf(template), ["subscriptionId", "name"]);
        assert.equal(
            fillPathTemplate(template, { subscriptionId: "s 1", name: "a/b?c" }),
            "/subscriptions/s%201/widgets/a%2Fb%3Fc?api-version=2024-01-01",
        );
    });

    it("refuse a value that could leave its place", () => {
        const template = parse("/widgets/{name}");
        for (const value of ["..", ".", "", undefined, 7])
            assert.throws(() => fillPathTemplate(template, { name: value }), /\{name\}/);
    });

    it("refuse templates with dot segments, other hosts, unbalanced braces or odd characters", () => {
        for (const [source, problem] of [
            ["widgets", /start with "\/"/],
            ["//evil.example/x", /another host/],
            ["/a/../admin", /"\." or "\.\."/],
            ["/a/{name", /without a "}"/],
            ["/a/name}", /without a "\{"/],
            ["/a/{na-me}", /not a placeholder name/],
            ["/a b", /characters a path cannot/],
        ] as const) {
            const parsed = parsePathTemplate(source);
            assert.ok("problem" in parsed, source);
            assert.match(parsed.problem, problem);
        }
    });
});
