// Guards the layout of provider/: no import cycles (type-only imports aside, which vanish at run time),
// and dependencies that only point down. Across folders: shared/ imports nothing above it; a feature
// (any other folder but cli/, found on disk, so a new one is covered) imports only itself and shared/,
// except that the task API server may use the API's wire contract (tasks/protocol/); only the composition
// root (runtime.ts, index.ts) and the command line (cli/) import features. Within a feature, layers only
// import downward: logic/ never reaches I/O or the HTTP client, errors/ and protocol/ reach nothing above
// them, the client never reaches logic/ or io/, and a folder never reaches up into its resource's provider
// or resource class. No production file grows past 400 lines, and none reads an error's code by a cast
// (one codeOf). (Reaches into the SDK's internals are guarded beside their one door,
// test/shared/sdkInternals.test.ts.)

import { strict as assert } from "node:assert";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { REPO_ROOT } from "./support/projects";

const PROVIDER = join(REPO_ROOT, "provider");
const SPECIFIER = /(?:from|require\(|import\(|import)\s*["'](\.{1,2}\/[^"']*)["']/g;
/** The longest a production file may be. */
const MAX_LINES = 400;
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

/** The folders of provider/ that hold a feature: every folder but shared/ (below all) and cli/ (above all). */
const FEATURES = readdirSync(PROVIDER, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== "shared" && entry.name !== "cli")
    .map((entry) => entry.name);

/** The top folder of a module ("shared", a feature, "cli"), or "" for the composition root's files. */
function folderOf(module: string): string {
    return module.includes("/") ? (module.split("/")[0] as string) : "";
}

/** Why `module` may not import `target` across folders, or undefined when it may. */
function crossFolderViolation(module: string, target: string): string | undefined {
    const [from, to] = [folderOf(module), folderOf(target)];
    if (from === to || to === "shared") return undefined;
    if (from === "shared") return "shared/ imports nothing above it";
    if (from === "taskApiServer" && target.startsWith("tasks/protocol/")) return undefined;
    if (FEATURES.includes(from)) return `a feature imports only itself and shared/ (${from}/ -> ${to || "the root"})`;
    if (from === "cli" && to === "") return "the command line does not import the composition root";
    return undefined;
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
                    from !== "top" &&
                    to === "top" &&
                    FEATURES.includes(folderOf(target)) &&
                    folderOf(target) !== "taskApiServer" &&
                    !/[sS]chema\.ts$/.test(target);
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

    it("points every dependency across folders down: shared/ below the features, features apart, the root above", () => {
        const violations: string[] = [];
        for (const [module, imports] of graph) {
            for (const target of imports) {
                const why = crossFolderViolation(module, target);
                if (why) violations.push(`${module} -> ${target}: ${why}`);
            }
        }
        assert.deepEqual(violations, []);
    });

    it("keeps the task API server's own code (the filter parser and its error) out of the provider process", () => {
        const loaded = new Set<string>();
        const visit = (module: string) => {
            if (loaded.has(module)) return;
            loaded.add(module);
            for (const next of graph.get(module) ?? []) visit(next);
        };
        visit("runtime.ts");
        visit("index.ts");
        assert.deepEqual(
            [...loaded].filter((module) => module.startsWith("taskApiServer/")),
            [],
        );
        assert.ok(loaded.has("tasks/protocol/filter.ts"), "the client still formats filters");
    });

    it("keeps every production file within 400 lines (a longer one holds more than one job: split it)", () => {
        const long = sources(PROVIDER)
            .map((file) => ({
                file: relative(PROVIDER, file),
                lines: readFileSync(file, "utf8").split("\n").length - 1,
            }))
            .filter(({ lines }) => lines > MAX_LINES)
            .map(({ file, lines }) => `${file}: ${lines} lines`);
        assert.deepEqual(long, []);
    });

    it("reads a system error's code through codeOf only (shared/files/errno.ts), never by a cast or a typed catch", () => {
        const casts = sources(PROVIDER).flatMap((file) =>
            /as NodeJS\.ErrnoException|\(\w+: NodeJS\.ErrnoException\)/.test(readFileSync(file, "utf8"))
                ? [relative(PROVIDER, file)]
                : [],
        );
        assert.deepEqual(casts, []);
    });

    it("has a test folder mirroring every production folder", () => {
        const folders = (dir: string): string[] =>
            readdirSync(dir, { withFileTypes: true })
                .filter((entry) => entry.isDirectory())
                .flatMap((entry) => [join(dir, entry.name), ...folders(join(dir, entry.name))]);
        const unmirrored = folders(PROVIDER)
            .map((folder) => relative(PROVIDER, folder))
            .filter((folder) => !existsSync(join(REPO_ROOT, "test", folder)));
        assert.deepEqual(unmirrored, []);
    });

    it("sees the layers and folders it checks (the check is not vacuous)", () => {
        assert.deepEqual(FEATURES.sort(), ["hosts", "taskApiServer", "tasks"]);
        assert.equal(
            crossFolderViolation("shared/text.ts", "hosts/logic/entries.ts"),
            "shared/ imports nothing above it",
        );
        assert.match(crossFolderViolation("hosts/logic/entries.ts", "tasks/logic/asyncState.ts") ?? "", /a feature/);
        assert.match(crossFolderViolation("taskApiServer/requests.ts", "tasks/io/asyncCreates.ts") ?? "", /a feature/);
        const layers = new Set([...graph.keys()].map(layerOf));
        for (const layer of ["logic", "io", "errors", "client", "protocol"]) assert.ok(layers.has(layer), layer);
    });
});
