// Loaded (NODE_OPTIONS=--require) into the Node.js processes the tests' Pulumi CLI starts: the programs,
// the dynamic-provider processes and the helpers they run. @pulumi/pulumi loads TypeScript and npm's
// arborist as it is imported, for closure serialization and its code paths, which our resources never
// run (see docs/architecture.md on how the provider is stored in state); that is about 320 ms of every
// such process, and most of what is left of a test's engine operation on two cores. Here each is
// loaded on first use instead: a process that serializes a closure still gets the real modules, the
// moment it touches them. Nothing else is deferred, and nothing of ours is: the suites that test the
// package as a user installs it (test/compat/) run without this.

const Module = require("node:module");

const load = Module._load;
/** Requests deferred, when they come from @pulumi/pulumi's own files. */
const DEFERRED = [/^@npmcli\/arborist$/, /(^|[/\\])typescript-shim$/];
const FROM_SDK = /[/\\]@pulumi[/\\]pulumi[/\\]/;

Module._load = function deferSdkModule(request, parent, ...rest) {
    if (!parent?.filename || !FROM_SDK.test(parent.filename) || !DEFERRED.some((re) => re.test(request))) {
        return load.call(this, request, parent, ...rest);
    }
    let real;
    const module = () => {
        real ??= load.call(this, request, parent, ...rest);
        return real;
    };
    return new Proxy(
        {},
        {
            // `__importStar` returns a module that says it is one as it is, instead of copying its keys now.
            get: (_, key) => (key === "__esModule" ? true : module()[key]),
            has: (_, key) => key in module(),
            ownKeys: () => Reflect.ownKeys(module()),
            getOwnPropertyDescriptor: (_, key) => {
                const descriptor = Object.getOwnPropertyDescriptor(module(), key);
                return descriptor && { ...descriptor, configurable: true };
            },
        },
    );
};
