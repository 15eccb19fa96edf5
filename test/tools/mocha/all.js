// `npm test`: every suite (but the harness's copies of tables a real-CLI suite runs too, see suites.js),
// in parallel worker processes. Suites are independent of each other (each has its own temporary files,
// stacks and backends, and ports the kernel picks), so they may overlap.
const { fullRunSuites, jobs } = require("./suites");

module.exports = { ...require("../../../.mocharc.json"), parallel: true, jobs: jobs(), spec: fullRunSuites() };
