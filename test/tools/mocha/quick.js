// `npm run test:quick`: the inner loop, `npm test`'s configuration over the suites that need no Pulumi
// CLI, with the generated fault suites on their smaller inner-loop budgets (test/support/budget.ts). The
// workers inherit the profile from this process's environment.
const { suitesWithoutCli } = require("./suites");

process.env.PL_TEST_PROFILE ??= "quick";

module.exports = { ...require("./all"), spec: suitesWithoutCli() };
