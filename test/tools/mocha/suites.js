// The test files of each test command, in the order their suites start: with parallel workers, the
// longest suites start first so that none of them begins last and keeps the run waiting (figures: wall
// and CPU seconds of each suite in a whole `npm test` on 2 cores, PL_TEST_TIMINGS; see
// docs/development.md, "Running the tests").

const { readdirSync } = require("node:fs");
const { join, relative } = require("node:path");

const ROOT = join(__dirname, "..", "..", "..");

/**
 * The suites that take longest, longest first, except that a suite that mostly waits (interruptedUp:
 * five times its CPU time) starts first, so its waits overlap the others' work. Every other suite
 * follows in path order. Figures: a fresh-clone CI run of 2026-11-29 (stop 36).
 */
const LONGEST_FIRST = [
    "test/realCli/interruptedUp.test.ts", // 104 s, 20 CPU-s
    "test/realCli/datastoreFlows.test.ts", // 152 s, 74 CPU-s
    "test/realCli/hostsRows.test.ts", // 148 s, 70 CPU-s
    "test/compat/pulumiSdk.test.ts", // 143 s, 69 CPU-s
    "test/realCli/engineContract.test.ts", // 128 s, 55 CPU-s
    "test/realCli/importHelper.test.ts", // 127 s, 67 CPU-s
    "test/realCli/examples.test.ts", // 114 s, 57 CPU-s
    "test/chaos/chaosTaskApi.test.ts", // 102 s, 67 CPU-s
    "test/chaos/dialects/chaosDialects.test.ts", // 94 s, 38 CPU-s
    "test/realCli/upgrade.test.ts", // 89 s, 53 CPU-s
    "test/compat/node.test.ts", // 79 s, 37 CPU-s
    "test/realCli/resourceLifecycle.test.ts", // 77 s, 45 CPU-s
    "test/realCli/remoteFleet.test.ts", // 76 s, 28 CPU-s
    "test/realCli/importHelperRaces.test.ts", // 75 s, 46 CPU-s
    "test/realCli/remoteFaults.test.ts", // 75 s, 43 CPU-s
    "test/compat/packageManagers.test.ts", // 75 s, 36 CPU-s
    "test/realCli/asyncResourceDialects.test.ts", // 75 s, 31 CPU-s
    "test/hosts/io/inPlaceSoak.test.ts", // 73 s, 31 CPU-s
    "test/realCli/errorGuidance.test.ts", // 59 s, 36 CPU-s
    "test/hosts/faults/multiWriter.test.ts", // 57 s, 25 CPU-s
    "test/realCli/relativePaths.test.ts", // 49 s, 22 CPU-s
    "test/realCli/languageHost.test.ts", // 40 s, 23 CPU-s
    "test/packaging.test.ts", // 40 s, 17 CPU-s
    "test/realCli/remoteImport.test.ts", // 30 s, 15 CPU-s
    "test/realCli/remoteUnknownHost.test.ts", // 29 s, 14 CPU-s
    "test/conformance/datastoreFlows.test.ts", // 25 s, 13 CPU-s
    "test/tasks/datastoreProvider.test.ts", // 25 s, 9 CPU-s
    "test/realCli/import.test.ts", // 24 s, 14 CPU-s
    "test/conformance/asyncResourceFlows.test.ts", // 22 s, 10 CPU-s
    "test/hosts/logic/importer.test.ts", // 19 s, 11 CPU-s
    "test/hosts/remote/remoteStore.test.ts", // 16 s, 2 CPU-s
    "test/conformance/hostsLifecycle.test.ts", // 16 s, 7 CPU-s
    "test/examples.test.ts", // 16 s, 6 CPU-s
    "test/hosts/io/crash.test.ts", // 12 s, 7 CPU-s
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
