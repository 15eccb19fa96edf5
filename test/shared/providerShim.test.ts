// Guards the `__provider` text every resource class writes (provider/shared/providerShim.ts): it is byte
// for byte what the SDK's closure serializer writes for `pulumi.dynamic.Resource` with a shim installed
// under node_modules (so a stack written by an earlier version, whose state holds the serializer's text,
// does not change on upgrade); and the dynamic-provider process's loader (require-from-string, as the
// SDK's dynamic-provider runs it) answers the shim from it, resolving the package by name from the
// project. That the resource classes record it: test/hosts/program.test.ts.

import { strict as assert } from "node:assert";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as serializeClosure from "@pulumi/pulumi/runtime/closure/serializeClosure";
import { providerText } from "../../provider/shared/providerShim";

/** The loader the SDK's dynamic-provider process runs `__provider` with. */
const requireFromString = require("require-from-string") as (code: string) => { handler: () => unknown };

describe("the __provider text of a shim", () => {
    let project: string;
    before(() => {
        // A project with a package whose module exports a provider object, as this package's shims are.
        project = mkdtempSync(join(tmpdir(), "provider-text-"));
        const home = join(project, "node_modules", "shim-package");
        mkdirSync(home, { recursive: true });
        writeFileSync(join(home, "package.json"), JSON.stringify({ name: "shim-package", main: "shim.js" }));
        writeFileSync(join(home, "shim.js"), "module.exports = { kind: 'the shim', create: async () => ({}) };\n");
        // The SDK's own words (dynamic/index.js, serializeFunctionMaybeSecret), in a file of plain JavaScript.
        writeFileSync(
            join(project, "serialize.js"),
            "module.exports = (sc, provider) => sc.serializeFunction(() => provider, { allowSecrets: true });\n",
        );
    });
    after(() => rmSync(project, { recursive: true, force: true }));

    it("is what the SDK's serializer writes for the shim installed under node_modules", async () => {
        const shim = require(join(project, "node_modules", "shim-package", "shim.js"));
        const serialize = require(join(project, "serialize.js")) as (
            sc: unknown,
            provider: unknown,
        ) => Promise<{ text: string }>;
        const { text } = await serialize(serializeClosure, shim);
        // The SDK names the module by the subpath it can resolve (here the file's path in the package).
        const subpath = /require\("([^"]+)"\)/.exec(text)?.[1];
        assert.equal(subpath, "shim-package/shim.js", text);
        assert.equal(providerText("shim-package/shim.js"), text);
    });

    it("answers the shim in the dynamic-provider process, resolving the package from the project", () => {
        const cwd = process.cwd();
        process.chdir(project);
        try {
            const { handler } = requireFromString(providerText("shim-package"));
            assert.equal((handler() as { kind?: string }).kind, "the shim");
        } finally {
            process.chdir(cwd);
        }
    });
});
