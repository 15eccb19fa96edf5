// The test files of each test command, in the order their suites start: with parallel workers, the
// longest suites start first so that none of them begins last and keeps the run waiting (figures: wall
// and CPU seconds of each suite in a whole `npm test` on 2 cores, PL_TEST_TIMINGS; see
// docs/development.md, "Running the tests").

const { readdirSync } = require("node:fs");
const { join, relative } = require("node:path");

const ROOT = join(__dirname, "..", "..", "..");

/** The suites that take longest, longest first. Every other suite follows in path order. */
const LONGEST_FIRST = [
    "test/realCli/hostsRows.test.ts", // 268 s, 124 CPU-s
    "test/realCli/asyncResourceDialects.test.ts", // 237 s, 112 CPU-s
    "test/conformance/asyncResourceFlows.test.ts", // 152 s, 72 CPU-s
    "test/realCli/importHelper.test.ts", // 133 s, 68 CPU-s
    "test/compat/pulumiSdk.test.ts", // 129 s, 65 CPU-s
    "test/realCli/datastoreFlows.test.ts", // 105 s, 60 CPU-s
    "test/realCli/interruptedUp.test.ts", // 103 s, 18 CPU-s
    "test/realCli/examples.test.ts", // 103 s, 53 CPU-s
    "test/chaos/chaosTaskApi.test.ts", // 93 s, 56 CPU-s
    "test/realCli/remoteFaults.test.ts", // 91 s, 38 CPU-s
    "test/realCli/engineContract.test.ts", // 88 s, 45 CPU-s
    "test/realCli/resourceLifecycle.test.ts", // 83 s, 40 CPU-s
    "test/realCli/upgrade.test.ts", // 75 s, 43 CPU-s
    "test/realCli/importHelperRaces.test.ts", // 69 s, 43 CPU-s
    "test/chaos/dialects/chaosDialects.test.ts", // 67 s, 28 CPU-s
    "test/realCli/remoteFleet.test.ts", // 66 s, 24 CPU-s
    "test/hosts/io/inPlaceSoak.test.ts", // 60 s, 26 CPU-s
    "test/hosts/faults/multiWriter.test.ts", // 53 s, 27 CPU-s
    "test/conformance/hostsRows.test.ts", // 53 s, 24 CPU-s (test:quick)
    "test/realCli/relativePaths.test.ts", // 49 s, 21 CPU-s
    "test/compat/packageManagers.test.ts", // 48 s, 26 CPU-s
    "test/realCli/errorGuidance.test.ts", // 43 s, 30 CPU-s
    "test/packaging.test.ts", // 41 s, 20 CPU-s
    "test/conformance/datastoreFlows.test.ts", // 41 s, 18 CPU-s
    "test/tasks/datastoreProvider.test.ts", // 38 s, 33 CPU-s
    "test/examples.test.ts", // 27 s, 13 CPU-s
    "test/realCli/remoteImport.test.ts", // 27 s, 14 CPU-s
    "test/compat/node.test.ts", // 26 s, 11 CPU-s
    "test/realCli/import.test.ts", // 26 s, 14 CPU-s
    "test/realCli/remoteUnknownHost.test.ts", // 25 s, 12 CPU-s
    "test/realCli/languageHost.test.ts", // 25 s, 14 CPU-s
    "test/conformance/hostsLifecycle.test.ts", // 23 s, 10 CPU-s
    "test/hosts/logic/importer.test.ts", // 16 s, 10 CPU-s
];

/** Suites that run the real `pulumi` CLI (and the compatibility installs, which run it too). */
const NEEDS_CLI = /^test\/(realCli|compat)\//;

/** Every `*.test.ts` under test/, as paths from the repository root, in path order. */
function testFiles(dir = join(ROOT, "test")) {
    return readdirSync(dir, { withFileTypes: true })
        .flatMap((entry) => {
            const path = join(dir, entry.name);
            if (entry.isDirectory()) return testFiles(path);
            return entry.name.endsWith(".test.ts") ? [relative(ROOT, path)] : [];
        })
        .sort();
}

/**
 * Harness suites whose every scenario a real-CLI suite runs too (that suite named beside each): `npm test`
 * runs such a table once, under the real CLI, which is the judge; the inner loop keeps the harness's copy.
 */
const ALSO_RUN_BY_THE_CLI = {
    "test/conformance/hostsRows.test.ts": "test/realCli/hostsRows.test.ts",
};

/** Every suite, the longest first. */
function allSuites() {
    const files = testFiles();
    const named = [...LONGEST_FIRST, ...Object.entries(ALSO_RUN_BY_THE_CLI).flat()];
    const missing = named.filter((file) => !files.includes(file));
    if (missing.length > 0)
        throw new Error(`test/tools/mocha/suites.js names suites that are gone: ${missing.join(", ")}`);
    return [...LONGEST_FIRST, ...files.filter((file) => !LONGEST_FIRST.includes(file))];
}

/** `npm test`: every suite but the harness's copies of tables the real CLI runs. */
function fullRunSuites() {
    return allSuites().filter((file) => !(file in ALSO_RUN_BY_THE_CLI));
}

/** The inner loop: every suite that needs no Pulumi CLI, the longest first. */
function suitesWithoutCli() {
    return allSuites().filter((file) => !NEEDS_CLI.test(file));
}

/** Parallel workers: PL_TEST_JOBS, else two per core (the real-CLI suites wait on processes about half the time). */
function jobs() {
    const given = Number(process.env.PL_TEST_JOBS);
    return Number.isInteger(given) && given > 0 ? given : Math.max(2, 2 * require("node:os").availableParallelism());
}

module.exports = { fullRunSuites, suitesWithoutCli, jobs };
