// Guards diffHostEntry: which changes replace a HostEntry (file, address family, canonical name) and
// which update it in place (address within the family, aliases, comment, adopt); when a replacement must
// delete first (same real file, same family, a shared name); that `line` and `__provider` never count;
// and that unknown preview values count as changes, in the colliding (delete-first) way.

import { strict as assert } from "node:assert";
import type { HostEntryInputs, HostEntryOutputs } from "../../../provider/hosts/hostEntrySchema";
import { diffHostEntry } from "../../../provider/hosts/logic/diff";
import type { ResourceDiff } from "../../../provider/shared/resourceDiff";
import { UNKNOWN } from "../../../provider/shared/unknown";

const ID = "ipv4/web.internal";

const OLDS: HostEntryOutputs & { __provider: string } = {
    address: "10.0.0.5",
    names: ["web.internal", "www.internal"],
    comment: "app",
    file: "/etc/hosts",
    adopt: false,
    line: 7,
    __provider: "exports.handler = __provider_v1",
};

const NEWS: HostEntryInputs = {
    address: "10.0.0.5",
    names: ["web.internal", "www.internal"],
    comment: "app",
    file: "/etc/hosts",
    adopt: false,
};

const NO_CHANGE: ResourceDiff = { changes: false, replaces: [], deleteBeforeReplace: false };
const UPDATE: ResourceDiff = { changes: true, replaces: [], deleteBeforeReplace: false };

/** Builds a diff: `replaces` in the order the provider reports them. */
function replace(replaces: string[], deleteBeforeReplace: boolean): ResourceDiff {
    return { changes: true, replaces, deleteBeforeReplace };
}

interface Case {
    it: string;
    news?: Partial<Record<keyof HostEntryInputs, unknown>>;
    olds?: Partial<Record<keyof HostEntryOutputs | "__provider", unknown>>;
    sameFile?: boolean | "unknown";
    id?: string;
    expected: ResourceDiff;
}

const CASES: Case[] = [
    // No change.
    { it: "reports no change when nothing changed", expected: NO_CHANGE },
    { it: "ignores a different line number", olds: { line: 99 }, expected: NO_CHANGE },
    { it: "ignores a different __provider (a new package version)", olds: { __provider: "v2" }, expected: NO_CHANGE },
    {
        it: "ignores line and __provider even if they appear in the new inputs",
        news: { line: 1, __provider: "v3" } as Case["news"],
        expected: NO_CHANGE,
    },
    { it: "treats a missing old adopt as false", olds: { adopt: undefined }, expected: NO_CHANGE },
    {
        it: "treats an absent comment and an empty comment as the same",
        olds: { comment: undefined },
        news: { comment: "" },
        expected: NO_CHANGE,
    },

    // Update in place.
    { it: "updates the address within IPv4 in place", news: { address: "10.0.0.6" }, expected: UPDATE },
    {
        it: "updates the address within IPv6 in place",
        id: "ipv6/web.internal",
        olds: { address: "fd00::5" },
        news: { address: "fd00::6" },
        expected: UPDATE,
    },
    {
        it: "updates an added alias in place",
        news: { names: ["web.internal", "www.internal", "api"] },
        expected: UPDATE,
    },
    { it: "updates a removed alias in place", news: { names: ["web.internal"] }, expected: UPDATE },
    {
        it: "updates reordered aliases in place",
        olds: { names: ["web.internal", "a", "b"] },
        news: { names: ["web.internal", "b", "a"] },
        expected: UPDATE,
    },
    { it: "updates a changed comment in place", news: { comment: "api" }, expected: UPDATE },
    { it: "updates a removed comment in place", news: { comment: undefined }, expected: UPDATE },
    { it: "updates a changed adopt in place", news: { adopt: true }, expected: UPDATE },
    {
        it: "updates a new spelling of the same real file (a symlink) in place",
        news: { file: "/etc/../etc/hosts" },
        sameFile: true,
        expected: UPDATE,
    },

    // Replacement.
    {
        it: "replaces, creating first, when the file changes to another real file",
        news: { file: "/tmp/other.hosts" },
        sameFile: false,
        expected: replace(["file"], false),
    },
    {
        it: "replaces, creating first, when the family changes from IPv4 to IPv6 (the names may coexist)",
        news: { address: "fd00::5" },
        expected: replace(["address"], false),
    },
    {
        it: "replaces, creating first, when the family changes from IPv6 to IPv4",
        id: "ipv6/web.internal",
        olds: { address: "fd00::5" },
        news: { address: "10.0.0.5" },
        expected: replace(["address"], false),
    },
    {
        it: "replaces, creating first, when the canonical name changes to a name the old entry did not have",
        news: { names: ["api.internal"] },
        expected: replace(["names"], false),
    },
    {
        it: "replaces, deleting first, when the canonical name changes but an old name stays (same file and family)",
        news: { names: ["www.internal", "web.internal"] },
        expected: replace(["names"], true),
    },
    {
        it: "replaces, deleting first, when a new canonical name keeps an old alias",
        news: { names: ["api.internal", "www.internal"] },
        expected: replace(["names"], true),
    },
    {
        it: "replaces, deleting first, when a new canonical name was an alias of the old entry",
        news: { names: ["www.internal"] },
        expected: replace(["names"], true),
    },
    {
        it: "replaces, creating first, when the canonical name changes and the file is another real file",
        news: { names: ["www.internal"], file: "/tmp/other.hosts" },
        sameFile: false,
        expected: replace(["file", "names"], false),
    },
    {
        it: "replaces, creating first, when name and family both change in the same file",
        news: { address: "fd00::5", names: ["www.internal"] },
        expected: replace(["address", "names"], false),
    },
    {
        it: "replaces, deleting first, when the path changes but names the same real file and the name changes",
        news: { file: "/etc/./hosts", names: ["www.internal", "web.internal"] },
        sameFile: true,
        expected: replace(["names"], true),
    },
    {
        it: "takes the old identity from the id, not from outputs a refresh may have rewritten",
        olds: { names: ["www.internal", "web.internal"] },
        expected: UPDATE,
    },
    {
        it: "falls back to the old outputs for the identity when the id is not one of ours",
        id: "not-an-id",
        news: { names: ["api.internal"] },
        expected: replace(["names"], false),
    },

    // Unknown values (preview) count as changes, in the unsafe (colliding) way.
    {
        it: "replaces, deleting first, when the file is unknown and the names are shared",
        news: { file: UNKNOWN },
        sameFile: "unknown",
        expected: replace(["file"], true),
    },
    {
        it: "replaces, creating first, when the file is unknown but the family changes",
        news: { file: UNKNOWN, address: "fd00::5" },
        sameFile: "unknown",
        expected: replace(["file", "address"], false),
    },
    {
        it: "replaces, deleting first, when the address is unknown (its family may be the same)",
        news: { address: UNKNOWN },
        expected: replace(["address"], true),
    },
    {
        it: "replaces, deleting first, when all names are unknown",
        news: { names: UNKNOWN },
        expected: replace(["names"], true),
    },
    {
        it: "replaces, deleting first, when the canonical name is unknown",
        news: { names: [UNKNOWN, "www.internal"] },
        expected: replace(["names"], true),
    },
    {
        it: "updates in place when only an alias is unknown: the canonical name, the identity, is known",
        news: { names: ["web.internal", UNKNOWN] },
        expected: UPDATE,
    },
    {
        it: "replaces, creating first, when the address is known to change family even if names are unknown",
        news: { address: "fd00::5", names: UNKNOWN },
        expected: replace(["address", "names"], false),
    },
    { it: "counts an unknown comment as an in-place change", news: { comment: UNKNOWN }, expected: UPDATE },
    { it: "counts an unknown adopt as an in-place change", news: { adopt: UNKNOWN }, expected: UPDATE },
];

describe("diffHostEntry", () => {
    for (const c of CASES) {
        it(c.it, () => {
            const olds = { ...OLDS, ...c.olds } as HostEntryOutputs;
            const news = { ...NEWS, ...c.news } as HostEntryInputs;
            const actual = diffHostEntry(c.id ?? ID, olds, news, c.sameFile ?? true);
            assert.deepEqual(actual, c.expected);
        });
    }

    it("returns only changes, replaces and deleteBeforeReplace", () => {
        assert.deepEqual(Object.keys(diffHostEntry(ID, OLDS, NEWS, true)).sort(), [
            "changes",
            "deleteBeforeReplace",
            "replaces",
        ]);
    });

    it("does not modify its arguments", () => {
        const olds = structuredClone(OLDS);
        const news = structuredClone(NEWS);
        diffHostEntry(ID, olds, { ...news, names: ["www.internal"] }, "unknown");
        assert.deepEqual(olds, OLDS);
        assert.deepEqual(news, NEWS);
    });
});
