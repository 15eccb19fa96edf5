// Guards the hook the tests' CLI and provider processes load (deferredSdkModules.js): importing
// @pulumi/pulumi and its program runner's tracing loads none of the modules it defers, and what uses
// them (closure serialization and its code paths, the Automation API's commands, tracing) still works,
// loading them then; the provider processes the tests start load it, those of an installed package not.
// A hook that broke them would pass every suite of ours and fail a user's program that serializes a
// closure or traces; one that deferred nothing would cost the loop its gain silently.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./projects";
import { providerProcessEnv } from "./providerServer";

const HOOK = join(__dirname, "deferredSdkModules.js");

/** Runs `code` in a Node.js process with the hook loaded, as the CLI's are; answers what it prints as JSON. */
async function withHook(code: string): Promise<Record<string, unknown>> {
    const { stdout } = await promisify(execFile)(process.execPath, ["--require", HOOK, "-e", code], { cwd: REPO_ROOT });
    return JSON.parse(stdout) as Record<string, unknown>;
}

const LOADED = `const loaded = (part) => Object.keys(require.cache).some((file) => file.includes(part));`;

describe("deferring the SDK's modules for code paths our resources never run, in the tests' CLI processes", function () {
    this.timeout(60_000);

    it("imports @pulumi/pulumi and its program runner's tracing without loading what the hook defers", async () => {
        const seen = await withHook(`${LOADED}
            require("@pulumi/pulumi");
            require("@pulumi/pulumi/dynamic");
            require("@pulumi/pulumi/cmd/run/tracing");
            process.stdout.write(JSON.stringify({
                typescript: loaded("/typescript/"),
                arborist: loaded("/@npmcli/arborist/"),
                normalizePackageData: loaded("/normalize-package-data/"),
                execa: loaded("/execa/"),
                yaml: loaded("/js-yaml/"),
                tracingSdk: loaded("/@opentelemetry/sdk-trace-node/"),
                zipkin: loaded("/@opentelemetry/exporter-zipkin/"),
            }));`);
        assert.deepEqual(seen, {
            typescript: false,
            arborist: false,
            normalizePackageData: false,
            execa: false,
            yaml: false,
            tracingSdk: false,
            zipkin: false,
        });
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

    it("opens the inspector session when a function is first serialized, not as the program runner starts, knowing every file", async () => {
        const seen = await withHook(`
            const inspector = require("node:inspector");
            let sessions = 0;
            const connect = inspector.Session.prototype.connect;
            inspector.Session.prototype.connect = function () { sessions++; return connect.call(this); };
            const { mkdtempSync, rmSync, writeFileSync } = require("node:fs");
            const { join } = require("node:path");
            const dir = mkdtempSync(join(require("node:os").tmpdir(), "deferred-v8hooks-"));
            writeFileSync(join(dir, "earlier.js"), "const k = 41;\\nexports.f = function f() { return k + 1; };\\n");
            const pulumi = require("@pulumi/pulumi");
            // As the program runner (cmd/run/index.js) asks for its hooks before it runs the program.
            const runner = require("node:module").createRequire(require.resolve("@pulumi/pulumi/cmd/run/index.js"));
            (async () => {
                await runner("../../runtime/closure/v8Hooks").isInitializedAsync();
                const atStart = sessions;
                const { f } = require(join(dir, "earlier.js"));
                const serialized = await pulumi.runtime.serializeFunction(f);
                const module = { exports: {} };
                new Function("exports", "require", serialized.text)(module.exports, require);
                const location = await require("@pulumi/pulumi/runtime/closure/v8").getFunctionLocationAsync(f);
                rmSync(dir, { recursive: true });
                process.stdout.write(JSON.stringify({
                    atStart,
                    afterSerializing: sessions,
                    result: module.exports[serialized.exportName](),
                    file: location.file === require("node:url").pathToFileURL(join(dir, "earlier.js")).href,
                }));
            })();`);
        assert.deepEqual(seen, { atStart: 0, afterSerializing: 1, result: 42, file: true });
    });

    it("still runs a command through the Automation API, loading execa then", async () => {
        const seen = await withHook(`${LOADED}
            const { PulumiCommand } = require("@pulumi/pulumi/automation");
            new PulumiCommand("/bin/echo", null).run(["deferred"], process.cwd(), {}).then((result) =>
                process.stdout.write(JSON.stringify({ stdout: result.stdout.trim(), execa: loaded("/execa/") })));`);
        assert.deepEqual(seen, { stdout: "deferred --non-interactive", execa: true });
    });

    it("still reads a package.yaml, loading js-yaml then", async () => {
        const seen = await withHook(`${LOADED}
            const { mkdtempSync, writeFileSync } = require("node:fs");
            const { join } = require("node:path");
            const dir = mkdtempSync(join(require("node:os").tmpdir(), "deferred-yaml-"));
            writeFileSync(join(dir, "package.yaml"), "name: deferred\\nversion: 1.2.3\\n");
            const { data } = require("@pulumi/pulumi/runtime/manifest").readPackageManifest(dir);
            require("node:fs").rmSync(dir, { recursive: true });
            process.stdout.write(JSON.stringify({ ...data, yaml: loaded("/js-yaml/") }));`);
        assert.deepEqual(seen, { name: "deferred", version: "1.2.3", yaml: true });
    });

    it("still starts tracing (spans get a trace id), loading the OpenTelemetry SDK then", async () => {
        const seen = await withHook(`${LOADED}
            const tracing = require("@pulumi/pulumi/cmd/run/tracing");
            const api = require("@opentelemetry/api");
            const before = api.trace.getTracer("test").startSpan("before").spanContext().traceId;
            tracing.start("http://127.0.0.1:9/api/v2/spans");
            const span = api.trace.getTracer("test").startSpan("after");
            const traceId = span.spanContext().traceId;
            process.stdout.write(JSON.stringify({
                before: /^0+$/.test(before),
                traced: /^[0-9a-f]{32}$/.test(traceId) && !/^0+$/.test(traceId),
                tracingSdk: loaded("/@opentelemetry/sdk-trace-node/"),
            }));
            process.exit(0);`);
        assert.deepEqual(seen, { before: true, traced: true, tracingSdk: true });
    });

    it("is loaded by the provider processes the tests start, but not by those of an installed package", () => {
        const loadsHook = (asInstalled: boolean) =>
            providerProcessEnv({ projectDir: REPO_ROOT, asInstalled }).NODE_OPTIONS?.includes(JSON.stringify(HOOK)) ??
            false;
        assert.equal(loadsHook(false), true);
        assert.equal(loadsHook(true), false);
    });
});
