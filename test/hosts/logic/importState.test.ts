// Guards how `hosts import --stack` adds entries to a stack's exported state: as the provider's create
// records them (inputs with `__provider`, outputs with the line, the stack as parent, the default
// pulumi-nodejs provider, protection), the provider and stack resources reused or added, everything
// else kept; and the refusals that leave the state as it was.

import { strict as assert } from "node:assert";
import { ImportRefusedError } from "../../../provider/hosts/errors/importRefusedError";
import { HostsDocument } from "../../../provider/hosts/logic/hostsDocument";
import { planImport } from "../../../provider/hosts/logic/importer";
import { addEntriesToState, type Deployment } from "../../../provider/hosts/logic/importState";

const FILE = "/etc/hosts";
const PLAN = planImport(HostsDocument.parse(Buffer.from("127.0.0.1 localhost\n10.0.0.5 web.internal web # front\n")), {
    file: FILE,
});
const OPTIONS = { project: "site", stack: "dev", providerCode: "exports.handler = ...", protect: true };
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
            __provider: OPTIONS.providerCode,
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
});
