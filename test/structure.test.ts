// Guards the layout of provider/: no import cycles (type-only imports aside, which vanish at run time),
// and layers that only import downward: logic/ never reaches I/O or the HTTP client, errors/ and
// protocol/ reach nothing above them, the client never reaches logic/ or io/, a folder never reaches up
// into its resource's provider or resource class, and only the command line loads the task API server.

import { strict as assert } from "node:assert";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { REPO_ROOT } from "./support/projects";

const PROVIDER = join(REPO_ROOT, "provider");
const SPECIFIER = /(?:from|require\(|import\(|import)\s*["'](\.{1,2}\/[^"']*)["']/g;
const TYPE_ONLY = /import type (?:\{[^}]*\}|\* as \w+) from "[^"]*";/g;

function sources(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) return sources(path);
        return entry.name.endsWith(".ts") ? [path] : [];
    });
}

/** Each module (relative to provider/) and the modules it loads at run time. */
function importGraph(): Map<string, string[]> {
    const graph = new Map<string, string[]>();
    for (const file of sources(PROVIDER)) {
        const text = readFileSync(file, "utf8").replace(TYPE_ONLY, "");
        const imports: string[] = [];
        for (const [, specifier] of text.matchAll(SPECIFIER)) {
            const target = normalize(join(dirname(file), specifier as string));
            const resolved = [`${target}.ts`, join(target, "index.ts")].find((path) => existsSync(path));
            if (resolved) imports.push(relative(PROVIDER, resolved));
        }
        graph.set(relative(PROVIDER, file), imports);
    }
    return graph;
}

function layerOf(module: string): string {
    // hosts/remote/ is the I/O of files on other machines: the io layer, in its own folder.
    if (module.includes("/remote/")) return "io";
    return ["logic", "io", "errors", "client", "protocol"].find((layer) => module.includes(`/${layer}/`)) ?? "top";
}

describe("the layout of provider/", () => {
    const graph = importGraph();

    it("has no import cycles", () => {
        const state = new Map<string, "open" | "done">();
        const cycles: string[] = [];
        const visit = (module: string, path: string[]) => {
            state.set(module, "open");
            for (const next of graph.get(module) ?? []) {
                if (state.get(next) === "open") cycles.push([...path.slice(path.indexOf(next)), next].join(" -> "));
                else if (!state.has(next)) visit(next, [...path, next]);
            }
            state.set(module, "done");
        };
        for (const module of graph.keys()) if (!state.has(module)) visit(module, [module]);
        assert.deepEqual(cycles, []);
    });

    it("imports only downward between layers", () => {
        const forbidden: Record<string, string[]> = {
            logic: ["io", "client"],
            errors: ["logic", "io", "client"],
            protocol: ["logic", "io", "client"],
            client: ["logic", "io"],
        };
        const violations: string[] = [];
        for (const [module, imports] of graph) {
            const from = layerOf(module);
            for (const target of imports) {
                const to = layerOf(target);
                const intoResourceTop =
                    from !== "top" && to === "top" && /^(hosts|tasks)\//.test(target) && !/[sS]chema\.ts$/.test(target);
                if (forbidden[from]?.includes(to) || intoResourceTop) violations.push(`${module} -> ${target}`);
                if (target.startsWith("taskApiServer/") && !/^(taskApiServer|cli)\//.test(module)) {
                    violations.push(
                        `${module} -> ${target} (the server is loaded only by its entry point and the CLI)`,
                    );
                }
            }
        }
        assert.deepEqual(violations, []);
    });

    it("sees the layers it checks (the check is not vacuous)", () => {
        const layers = new Set([...graph.keys()].map(layerOf));
        for (const layer of ["logic", "io", "errors", "client", "protocol"]) assert.ok(layers.has(layer), layer);
    });
});
