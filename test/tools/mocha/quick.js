// `npm run test:quick`: the inner loop, every suite that needs no Pulumi CLI, in parallel workers.
const { jobs, suitesWithoutCli } = require("./suites");

module.exports = { ...require("../../../.mocharc.json"), parallel: true, jobs: jobs(), spec: suitesWithoutCli() };
