// Guards how `hosts import --stack` adds entries to a stack's exported state: as the provider's create
// records them (inputs with `__provider`, outputs with the line, the stack as parent, the default
// pulumi-nodejs provider, protection), the provider and stack resources reused or added, everything
// else kept; the refusals that leave the state as it was (a state of another project or stack among
// them); and what counts as the same state when the helper reads it again before importing.

import { strict as assert } from "node:assert";
import { ImportRefusedError } from "../../../provider/hosts/errors/importRefusedError";
import { HostsDocument } from "../../../provider/hosts/logic/hostsDocument";
import { planImport } from "../../../provider/hosts/logic/importer";
import { addEntriesToState, type Deployment, sameState } from "../../../provider/hosts/logic/importState";

const FILE = "/etc/hosts";
const PLAN = planImport(HostsDocument.parse(Buffer.from("127.0.0.1 localhost\n10.0.0.5 web.internal web # front\n")), {
    file: FILE,
});
const OPTIONS = { project: "site", stack: "dev", serializedShim: "exports.handler = ...", protect: true };
const STACK_URN = "urn:pulumi:dev::site::pulumi:pulumi:Stack::site-dev";
const PROVIDER_URN = "urn:pulumi:dev::site::pulumi:providers:pulumi-nodejs::default";

describe("hosts import --stack: the entries in the state", () => {
    it("records an entry as create would, adding the stack and the default provider to an empty stack", () => {
        const { deployment, added } = addEntriesToState({ manifest: { version: "x" } }, PLAN, OPTIONS);
        assert.deepEqual(deployment.manifest, { version: "x" }, "other fields are kept");
        const [stack, provider, entry] = deployment.resources ?? [];
        assert.deepEqual(stack, { urn: STACK_URN, type: "pulumi:pulumi:Stack" });
        assert.equal(provider?.urn, PROVIDER_URN);
        assert.match(String(provider?.id), /^[0-9a-f-]{36}$/);
        const inputs = {
            __provider: OPTIONS.serializedShim,
            address: "10.0.0.5",
            names: ["web.internal", "web"],
            comment: "front",
            file: FILE,
            adopt: true,
        };
        assert.deepEqual(entry, {
            urn: "urn:pulumi:dev::site::pulumi-nodejs:dynamic/hosts:HostEntry::web.internal",
            custom: true,
            id: "ipv4/web.internal",
            type: "pulumi-nodejs:dynamic/hosts:HostEntry",
            inputs,
            outputs: { ...inputs, line: 2 },
            parent: STACK_URN,
            provider: `${PROVIDER_URN}::${provider?.id}`,
            protect: true,
        });
        assert.deepEqual(
            added.map((a) => a.id),
            ["ipv4/web.internal"],
        );
    });

    it("reuses the stack's provider and keeps its resources in order", () => {
        const existing: Deployment = {
            resources: [
                { urn: STACK_URN, type: "pulumi:pulumi:Stack", outputs: { x: 1 } },
                { urn: PROVIDER_URN, type: "pulumi:providers:pulumi-nodejs", custom: true, id: "p-1" },
            ],
        };
        const { deployment } = addEntriesToState(existing, PLAN, { ...OPTIONS, protect: false });
        assert.equal(deployment.resources?.length, 3);
        assert.equal(deployment.resources?.[2]?.provider, `${PROVIDER_URN}::p-1`);
        assert.equal(deployment.resources?.[2]?.protect, undefined);
        assert.equal(existing.resources?.length, 2, "the input is not changed");
    });

    it("refuses an entry already managed, a taken name and pending operations, changing nothing", () => {
        const { deployment } = addEntriesToState({}, PLAN, OPTIONS);
        assert.throws(
            () => addEntriesToState(deployment, PLAN, OPTIONS),
            (error: unknown) => {
                assert.ok(error instanceof ImportRefusedError);
                assert.match(error.message, /line 2 \(ipv4\/web\.internal\) is already managed in stack dev as urn:/);
                return true;
            },
        );
        const renamed = (deployment.resources ?? []).map((r) =>
            r.type.endsWith("HostEntry") ? { ...r, id: "ipv4/other.internal" } : r,
        );
        assert.throws(
            () => addEntriesToState({ resources: renamed }, PLAN, OPTIONS),
            /already has a resource named web\.internal/,
        );
        assert.throws(
            () => addEntriesToState({ pending_operations: [{ type: "creating" }] }, PLAN, OPTIONS),
            /interrupted update left pending\. Run `pulumi refresh`/,
        );
    });

    it("refuses a state holding another project's or another stack's resources, naming both projects", () => {
        const foreignRoot = "urn:pulumi:dev::otherproj::pulumi:pulumi:Stack::otherproj-dev";
        assert.throws(
            () => addEntriesToState({ resources: [{ urn: foreignRoot, type: "pulumi:pulumi:Stack" }] }, PLAN, OPTIONS),
            (error: unknown) => {
                assert.ok(error instanceof ImportRefusedError);
                assert.equal(
                    error.message,
                    `the state of stack dev belongs to project "otherproj" (${foreignRoot}), and this is project "site"; ` +
                        'nothing was imported. Run the command in the directory of project "otherproj", or name a stack of "site"',
                );
                return true;
            },
        );
        const pendingForeign: Deployment = {
            resources: [],
            pending_operations: [{ type: "creating", resource: { urn: "urn:pulumi:dev::otherproj::x:y:Z::a" } }],
        };
        assert.throws(() => addEntriesToState(pendingForeign, PLAN, OPTIONS), /belongs to project "otherproj"/);
        const otherStack: Deployment = {
            resources: [{ urn: "urn:pulumi:prod::site::pulumi:pulumi:Stack::site-prod", type: "pulumi:pulumi:Stack" }],
        };
        assert.throws(() => addEntriesToState(otherStack, PLAN, OPTIONS), /holds a resource of stack "prod"/);
    });

    it("counts two reads as the same state when only the manifest differs, whatever the key order", () => {
        const { deployment } = addEntriesToState({ manifest: { time: "t1" } }, PLAN, OPTIONS);
        const reverse = (value: object) => Object.fromEntries(Object.entries(value).reverse());
        const reordered: Deployment = {
            ...reverse(deployment),
            resources: (deployment.resources ?? []).map(
                (r) => reverse({ ...r, ...(r.inputs ? { inputs: reverse(r.inputs) } : {}) }) as typeof r,
            ),
        };
        assert.ok(sameState(deployment, { ...reordered, manifest: { time: "t2", magic: "m" } }));
        const [stack, provider, entry] = deployment.resources ?? [];
        assert.ok(stack && provider && entry);
        assert.ok(!sameState(deployment, { ...deployment, resources: [stack, provider] }), "a resource gone");
        assert.ok(
            !sameState(deployment, { ...deployment, resources: [stack, provider, { ...entry, outputs: { line: 3 } }] }),
            "an output changed",
        );
        assert.ok(
            !sameState(deployment, { ...deployment, pending_operations: [{ type: "creating" }] }),
            "an operation pending",
        );
    });
});
