// Guards the one door into the Pulumi SDK's internals (provider/shared/sdkInternals.ts): no other
// production file reaches past the SDK's public API; each reach still finds what it needs in the
// installed SDK; and a hook into the SDK's provider server that cannot attach is said, once per process,
// naming what the user loses and can do.

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as ts from "typescript";
import type { LogLine } from "../../provider/shared/engineLog";
import { activeHandles, sdkGrpcServerPrototype, sdkIsConfigSecret } from "../../provider/shared/sdkInternals";
import { attachEngineHooks } from "../../provider/tasks/processContext";

const PROVIDER = join(__dirname, "..", "..", "provider");
const DOOR = "shared/sdkInternals.ts";
/** What only the door may say, outside comments. */
const REACHES = ["@pulumi/pulumi/proto", "@pulumi/pulumi/runtime/", "_getActiveHandles", '"@grpc/grpc-js"'];

function sources(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) return sources(path);
        return entry.name.endsWith(".ts") ? [path] : [];
    });
}

/** A source file's code without its comments, as the TypeScript printer gives it. */
function codeOf(path: string): string {
    const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    return ts.createPrinter({ removeComments: true }).printFile(file);
}

/** A hook server whose handler lookup the engine-call hook can wrap: that hook attaches. */
const lookupServer = () => ({ _retrieveHandler: () => null });

describe("the SDK's internals, behind one module", () => {
    it("no production file but the door reaches into the SDK's internals (outside comments)", () => {
        const files = sources(PROVIDER).map((path) => relative(PROVIDER, path).split("\\").join("/"));
        assert.ok(files.includes(DOOR) && files.length > 50, `the scan sees provider/: ${files.length} files`);
        const door = codeOf(join(PROVIDER, DOOR));
        for (const reach of REACHES) assert.ok(door.includes(reach), `the door itself holds ${reach}`);
        const outside = files
            .filter((file) => file !== DOOR)
            .flatMap((file) => {
                const code = codeOf(join(PROVIDER, file));
                return REACHES.filter((reach) => code.includes(reach)).map((reach) => `${file}: ${reach}`);
            });
        assert.deepEqual(outside, [], "reaches into the SDK's internals outside provider/shared/sdkInternals.ts");
    });

    it("each reach finds what it needs in the installed @pulumi/pulumi", () => {
        assert.equal(typeof sdkGrpcServerPrototype()?._retrieveHandler, "function");
        assert.ok(Array.isArray(activeHandles()));
        assert.equal(sdkIsConfigSecret("pulumi-lifecycle:no-such-key"), false);
    });

    it("the Cancel hook that cannot attach (no gRPC server among the handles) is said once, with what is lost", () => {
        const lines: LogLine[] = [];
        const warned = new Set<string>();
        for (let attempt = 0; attempt < 3; attempt++) {
            const attached = attachEngineHooks(
                () => undefined,
                (line) => lines.push(line),
                {
                    handles: [],
                    server: lookupServer(),
                    warned,
                },
            );
            assert.deepEqual(attached, { cancel: false, calls: true });
        }
        assert.equal(lines.length, 1, `once per process:\n${lines.map((l) => l.message).join("\n")}`);
        const [line] = lines;
        assert.equal(line?.severity, "warning");
        assert.match(line?.message ?? "", /cannot hear the engine's Cancel/);
        assert.match(line?.message ?? "", /Ctrl-C will not stop an operation in flight/);
        assert.match(line?.message ?? "", /checked against @pulumi\/pulumi 3\.142\.0 and 3\.270\.0/);
    });

    it("the engine-call hook that cannot attach is said once too, apart from the Cancel hook's", () => {
        const lines: LogLine[] = [];
        const warned = new Set<string>();
        for (let attempt = 0; attempt < 2; attempt++) {
            attachEngineHooks(
                () => undefined,
                (line) => lines.push(line),
                { handles: [], server: {}, warned },
            );
        }
        assert.equal(lines.length, 2, lines.map((l) => l.message).join("\n"));
        assert.match(lines[0]?.message ?? "", /cannot hear the engine's Cancel/);
        assert.match(lines[1]?.message ?? "", /cannot hear the engine's calls/);
    });

    it("says nothing when a gRPC server is among the process's own handles (the default lister)", async () => {
        const server = new grpc.Server();
        await new Promise<number>((resolve, reject) =>
            server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) =>
                error ? reject(error) : resolve(port),
            ),
        );
        try {
            const lines: LogLine[] = [];
            const attached = attachEngineHooks(
                () => undefined,
                (line) => lines.push(line),
                {
                    server: lookupServer(),
                    warned: new Set(),
                },
            );
            assert.deepEqual(attached, { cancel: true, calls: true });
            assert.deepEqual(lines, []);
        } finally {
            server.forceShutdown();
        }
    });
});
