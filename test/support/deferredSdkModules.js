// Loaded into the test processes themselves (.mocharc.json), and (NODE_OPTIONS=--require,
// test/support/sdkDeferral.ts) into the Node.js processes the tests' Pulumi CLI starts (the programs, the
// dynamic-provider processes and the helpers they run) and the dynamic-provider processes the harness
// and the suites start themselves (ProviderServer). @pulumi/pulumi loads, as it is imported,
// modules for code paths our resources never run: TypeScript and npm's arborist and
// normalize-package-data for closure serialization and its code paths (see docs/architecture.md on how
// the provider is stored in state), execa for the Automation API, js-yaml for a package.yaml, and the
// OpenTelemetry SDK and exporters its program runner starts only under `--tracing`. Here each is loaded
// on first use instead: a process that serializes a closure, runs the CLI, reads YAML or traces still
// gets the real modules, the moment it touches them. TypeScript and arborist were about 320 ms of every
// such process; the rest, about 0.3 CPU-s of an operation that runs a program and its provider (2.1
// CPU-s with only those two deferred, 1.8 with all). Nothing else is deferred but the program runner's
// inspector session (v8HooksOpenedOnFirstUse, below), and nothing of ours is:
// the processes of the suites that test the package as a user installs it (test/compat/,
// test/packaging.test.ts) and the benches run without this. In the quick loop, deferring them in the
// harness's providers saved about 20 CPU-s of 266, and in the test processes about 10 more.

const Module = require("node:module");

const load = Module._load;

/**
 * The files of @pulumi/pulumi under `path` (a directory ending in "/", "" for all of them), or that one
 * file, with either path separator.
 */
function sdkFiles(path) {
    const within = `@pulumi/pulumi/${path}`.replaceAll(".", "\\.").replaceAll("/", "[/\\\\]");
    return new RegExp(`[/\\\\]${within}${path.endsWith(".js") ? "$" : ""}`);
}

/**
 * What is deferred: a request from a file of @pulumi/pulumi's that `from` matches. `destructured`: that
 * file takes the module's exports apart as it loads (`const { A } = require(...)`), so each export is
 * handed out as a stand-in that loads the module when it is called, constructed or read.
 */
const DEFERRED = [
    { request: /^@npmcli\/arborist$/, from: sdkFiles("") },
    { request: /(^|[/\\])typescript-shim$/, from: sdkFiles("") },
    { request: /^normalize-package-data$/, from: sdkFiles("runtime/closure/") },
    { request: /^execa$/, from: sdkFiles("automation/") },
    { request: /^js-yaml$/, from: sdkFiles("") },
    { request: /^@opentelemetry\/(?!api$)/, from: sdkFiles("cmd/run/tracing.js"), destructured: true },
];

/** Requests from @pulumi/pulumi's files for its inspector hooks (runtime/closure/v8Hooks.js). */
const V8_HOOKS = { request: /(^|[/\\])v8Hooks$/, from: sdkFiles("") };

let lazyV8Hooks;

/**
 * What the SDK's runtime/closure/v8Hooks.js offers (its three functions, the flag it sets as it loads),
 * with its inspector session opened on first use instead of as every program starts. The program runner
 * opens it (`isInitializedAsync`) so that a function's file is known should the program serialize one;
 * with the debugger on, every script parsed from then on is reported to it: 0.2-0.7 CPU-s of each
 * program's process here, whose programs serialize nothing. Opened here when a function is first
 * serialized, its listener attached before the debugger is enabled hears every script parsed until then
 * (V8 reports each one as the debugger is enabled), so it knows every file the SDK's would, and more.
 * Written against the SDK this repository pins; deferredSdkModules.test.ts serializes a function
 * through it, so an SDK whose closure code wants more of the module fails there.
 */
function v8HooksOpenedOnFirstUse() {
    if (lazyV8Hooks) return lazyV8Hooks;
    require("node:v8").setFlagsFromString("--allow-natives-syntax");
    const urls = new Map();
    let session;
    const getSessionAsync = () => {
        session ??= new Promise((resolve, reject) => {
            const opened = new (require("node:inspector").Session)();
            opened.connect();
            opened.on("Debugger.scriptParsed", ({ params }) => urls.set(params.scriptId, params.url));
            opened.post("Debugger.enable", (error) => (error ? reject(error) : resolve(opened)));
        });
        return session;
    };
    lazyV8Hooks = {
        __esModule: true,
        getSessionAsync,
        isInitializedAsync: async () => undefined,
        getScriptUrl: (id) => urls.get(id),
    };
    return lazyV8Hooks;
}

Module._load = function deferSdkModule(request, parent, ...rest) {
    if (parent?.filename && V8_HOOKS.request.test(request) && V8_HOOKS.from.test(parent.filename))
        return v8HooksOpenedOnFirstUse();
    const deferred = parent?.filename && DEFERRED.find((d) => d.request.test(request) && d.from.test(parent.filename));
    if (!deferred) return load.call(this, request, parent, ...rest);
    let real;
    const module = () => {
        real ??= load.call(this, request, parent, ...rest);
        return real;
    };
    // What TypeScript's `__importDefault` and `__importStar` read as `default`: a CommonJS module is itself.
    const exported = (key) => (key === "default" && !module().__esModule ? module() : module()[key]);
    const standIns = new Map();
    const standIn = (key) => {
        if (!standIns.has(key)) {
            standIns.set(
                key,
                new Proxy(function deferredExport() {}, {
                    apply: (_, self, args) => Reflect.apply(exported(key), self, args),
                    construct: (_, args) => Reflect.construct(exported(key), args),
                    get: (_, name) => exported(key)[name],
                }),
            );
        }
        return standIns.get(key);
    };
    return new Proxy(
        {},
        {
            // `__importStar` and `__importDefault` return a module that says it is one as it is.
            get: (_, key) => {
                if (key === "__esModule") return true;
                return deferred.destructured ? standIn(key) : exported(key);
            },
            has: (_, key) => key in module(),
            ownKeys: () => Reflect.ownKeys(module()),
            getOwnPropertyDescriptor: (_, key) => {
                const descriptor = Object.getOwnPropertyDescriptor(module(), key);
                return descriptor && { ...descriptor, configurable: true };
            },
        },
    );
};
