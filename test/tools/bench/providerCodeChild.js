// Run by providerCode.ts in a fresh Node.js process, in a Pulumi project, with a stack's checkpoint:
// builds the provider its resources' `__provider` text names, as the dynamic-provider process does
// (require-from-string from the project's @pulumi/pulumi, then `handler()`, then `configure`), and calls
// its Read and then its Diff for every resource, as many at once as the replay sends (ENGINE_PARALLEL),
// directly: no gRPC, no protobuf. Prints the CPU seconds of each pass as JSON, the first one including
// building the provider (for ours, loading the package's runtime). Plain JavaScript, so nothing but
// Node.js loads before the measurement.
//
//   node providerCodeChild.js <checkpoint.json> <warm passes> <in flight>

const { readFileSync } = require("node:fs");
const { dirname } = require("node:path");

const [checkpoint, warmArgument, parallelArgument] = process.argv.slice(2);
const warmPasses = Number(warmArgument);
const parallel = Number(parallelArgument);
// A missing count would make no worker at all, and the pass would measure nothing without a word.
if (!checkpoint || !Number.isInteger(warmPasses) || warmPasses < 0 || !Number.isInteger(parallel) || parallel < 1) {
    process.stderr.write(
        "usage: node providerCodeChild.js <checkpoint.json> <warm passes, 0 or more> <in flight, 1 or more>\n",
    );
    process.exit(2);
}
const resources = JSON.parse(readFileSync(checkpoint, "utf8")).checkpoint.latest.resources.filter(
    (resource) => resource.custom && resource.id !== undefined && !resource.type.startsWith("pulumi:providers:"),
);
const sdk = dirname(require.resolve("@pulumi/pulumi/package.json", { paths: [process.cwd()] }));
const requireFromString = require(require.resolve("require-from-string", { paths: [sdk] }));

const cpuSeconds = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
};

/** Each resource's stored state, copied outside the measured time: the SDK hands every call objects of its own. */
const prepared = () =>
    resources.map(({ id, inputs, outputs }) => ({
        id,
        inputs: structuredClone(inputs),
        outputs: structuredClone(outputs),
    }));

async function pass(provider, calls) {
    let next = 0;
    const worker = async () => {
        for (let at = next++; at < calls.length; at = next++) {
            const { id, inputs, outputs } = calls[at];
            const read = provider.read ? await provider.read(id, outputs) : { props: outputs };
            if (provider.diff) await provider.diff(id, read.props, read.inputs ?? inputs);
        }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
}

(async () => {
    const passes = [];
    let calls = prepared();
    let started = cpuSeconds();
    const provider = requireFromString(resources[0].outputs.__provider).handler();
    await provider.configure?.({ config: { get: () => undefined } });
    for (let at = 0; at <= warmPasses; at++) {
        if (at > 0) {
            calls = prepared();
            started = cpuSeconds();
        }
        await pass(provider, calls);
        passes.push(cpuSeconds() - started);
    }
    process.stdout.write(JSON.stringify(passes), () => process.exit(0));
})().catch((error) => {
    process.stderr.write(`${error?.stack ?? error}\n`, () => process.exit(1));
});
