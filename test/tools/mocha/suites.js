// The test files of each test command, in the order their suites start: with parallel workers, the
// longest suites start first so that none of them begins last and keeps the run waiting (figures: wall
// and CPU seconds of each suite in a whole `npm test` on 2 cores, PL_TEST_TIMINGS; see
// docs/development.md, "Running the tests").

const { readdirSync } = require("node:fs");
const { join, relative } = require("node:path");

const ROOT = join(__dirname, "..", "..", "..");

/**
 * The suites that take longest, longest first, except that a suite that mostly waits (interruptedUp:
 * seven times its CPU time) starts first, so its waits overlap the others' work. Every other suite
 * follows in path order. Figures: a whole `npm test` of 2026-11-29 (stop 39).
 */
const LONGEST_FIRST = [
    "test/realCli/interruptedUp.test.ts", // 94 s, 14 CPU-s
    "test/chaos/chaosTaskApi.test.ts", // 124 s, 76 CPU-s
    "test/realCli/importHelper.test.ts", // 116 s, 59 CPU-s
    "test/chaos/dialects/chaosDialects.test.ts", // 115 s, 45 CPU-s
    "test/compat/pulumiSdk.test.ts", // 106 s, 64 CPU-s
    "test/realCli/examples.test.ts", // 98 s, 48 CPU-s
    "test/hosts/io/inPlaceSoak.test.ts", // 85 s, 33 CPU-s
    "test/realCli/datastoreFlows.test.ts", // 83 s, 49 CPU-s
    "test/realCli/engineContract.test.ts", // 82 s, 37 CPU-s
    "test/compat/node.test.ts", // 81 s, 35 CPU-s
    "test/realCli/importHelperRaces.test.ts", // 80 s, 38 CPU-s
    "test/realCli/upgrade.test.ts", // 78 s, 48 CPU-s
    "test/realCli/remoteFaults.test.ts", // 73 s, 31 CPU-s
    "test/realCli/hostsRows.test.ts", // 71 s, 43 CPU-s
    "test/realCli/resourceLifecycle.test.ts", // 71 s, 31 CPU-s
    "test/realCli/remoteFleet.test.ts", // 68 s, 25 CPU-s
    "test/compat/packageManagers.test.ts", // 62 s, 31 CPU-s
    "test/hosts/faults/multiWriter.test.ts", // 56 s, 29 CPU-s
    "test/realCli/asyncResourceDialects.test.ts", // 47 s, 23 CPU-s
    "test/realCli/languageHost.test.ts", // 41 s, 23 CPU-s
    "test/packaging.test.ts", // 39 s, 18 CPU-s
    "test/realCli/errorGuidance.test.ts", // 39 s, 25 CPU-s
    "test/realCli/relativePaths.test.ts", // 37 s, 16 CPU-s
    "test/tasks/datastoreProvider.test.ts", // 28 s, 10 CPU-s
    "test/realCli/remoteImport.test.ts", // 27 s, 14 CPU-s
    "test/conformance/datastoreFlows.test.ts", // 26 s, 13 CPU-s
    "test/conformance/asyncResourceFlows.test.ts", // 22 s, 10 CPU-s
    "test/realCli/import.test.ts", // 20 s, 11 CPU-s
    "test/realCli/remoteUnknownHost.test.ts", // 20 s, 9 CPU-s
    "test/hosts/logic/importer.test.ts", // 18 s, 11 CPU-s
    "test/hosts/remote/remoteStore.test.ts", // 16 s, 2 CPU-s
    "test/cli.test.ts", // 12 s, 6 CPU-s
    "test/conformance/hostsLifecycle.test.ts", // 12 s, 7 CPU-s
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
