// The test files of each test command, in the order their suites start: with parallel workers, the
// longest suites start first so that none of them begins last and keeps the run waiting (figures:
// seconds alone on 2 cores, from a serial run; see README "Tests").

const { readdirSync } = require("node:fs");
const { join, relative } = require("node:path");

const ROOT = join(__dirname, "..", "..", "..");

/** The suites that take longest alone, longest first. Every other suite follows in path order. */
const LONGEST_FIRST = [
    "test/realCli/asyncResourceDialects.test.ts", // 315 s
    "test/realCli/hostsRows.test.ts", // 283 s
    "test/conformance/asyncResourceFlows.test.ts", // 258 s
    "test/realCli/importHelper.test.ts", // 129 s
    "test/realCli/datastoreFlows.test.ts", // 117 s
    "test/realCli/interruptedUp.test.ts", // 99 s
    "test/realCli/engineContract.test.ts", // 88 s
    "test/realCli/importHelperRaces.test.ts", // 87 s
    "test/realCli/import.test.ts", // 87 s
    "test/compat/pulumiSdk.test.ts", // 81 s
    "test/realCli/remoteFaults.test.ts", // 75 s
    "test/realCli/upgrade.test.ts", // 65 s
    "test/realCli/errorGuidance.test.ts", // 61 s
    "test/realCli/remoteFleet.test.ts", // 59 s
    "test/realCli/examples.test.ts", // 80 s
    "test/compat/node.test.ts", // 39 s
    "test/compat/packageManagers.test.ts", // 38 s
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

/** Every suite, the longest first. */
function everySuite() {
    const files = testFiles();
    const missing = LONGEST_FIRST.filter((file) => !files.includes(file));
    if (missing.length > 0)
        throw new Error(`test/tools/mocha/suites.js names suites that are gone: ${missing.join(", ")}`);
    return [...LONGEST_FIRST, ...files.filter((file) => !LONGEST_FIRST.includes(file))];
}

/** The inner loop: every suite that needs no Pulumi CLI, the longest first. */
function suitesWithoutCli() {
    return everySuite().filter((file) => !NEEDS_CLI.test(file));
}

/** Parallel workers: PL_TEST_JOBS, else two per core (the real-CLI suites wait on processes about half the time). */
function jobs() {
    const given = Number(process.env.PL_TEST_JOBS);
    return Number.isInteger(given) && given > 0 ? given : Math.max(2, 2 * require("node:os").availableParallelism());
}

module.exports = { everySuite, suitesWithoutCli, jobs };
