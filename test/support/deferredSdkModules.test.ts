// Guards the hook the tests' CLI processes load (deferredSdkModules.js): importing @pulumi/pulumi loads
// neither TypeScript nor npm's arborist, and what uses them (closure serialization, its code paths) still
// works, loading them then. A hook that broke them would pass every suite of ours and fail a user's
// program that serializes a closure; one that deferred nothing would cost the loop its gain silently.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./projects";

const HOOK = join(__dirname, "deferredSdkModules.js");

/** Runs `code` in a Node.js process with the hook loaded, as the CLI's are; answers what it prints as JSON. */
async function withHook(code: string): Promise<Record<string, unknown>> {
    const { stdout } = await promisify(execFile)(process.execPath, ["--require", HOOK, "-e", code], { cwd: REPO_ROOT });
    return JSON.parse(stdout) as Record<string, unknown>;
}

const LOADED = `const loaded = (part) => Object.keys(require.cache).some((file) => file.includes(part));`;

describe("deferring the SDK's closure modules in the tests' CLI processes", function () {
    this.timeout(60_000);

    it("imports @pulumi/pulumi without loading TypeScript or arborist", async () => {
        const seen = await withHook(`${LOADED}
            require("@pulumi/pulumi");
            require("@pulumi/pulumi/dynamic");
            process.stdout.write(JSON.stringify({ typescript: loaded("/typescript/"), arborist: loaded("/@npmcli/arborist/") }));`);
        assert.deepEqual(seen, { typescript: false, arborist: false });
    });

    it("still serializes a closure and computes its code paths, loading them on first use", async () => {
        const seen = await withHook(`${LOADED}
            const pulumi = require("@pulumi/pulumi");
            (async () => {
                const serialized = await pulumi.runtime.serializeFunction(() => 40 + 2);
                const module = { exports: {} };
                new Function("exports", serialized.text)(module.exports);
                const paths = await pulumi.runtime.computeCodePaths();
                process.stdout.write(JSON.stringify({
                    result: module.exports[serialized.exportName](),
                    codePaths: paths.size > 0,
                    typescript: loaded("/typescript/"),
                    arborist: loaded("/@npmcli/arborist/"),
                }));
            })();`);
        assert.deepEqual(seen, { result: 42, codePaths: true, typescript: true, arborist: true });
    });
});
