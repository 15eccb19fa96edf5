// `npm test`: every suite, in parallel worker processes. Suites are independent of each other (each
// has its own temporary files, stacks and backends, and ports the kernel picks), so they may overlap.
const { everySuite, jobs } = require("./suites");

module.exports = { ...require("../../../.mocharc.json"), parallel: true, jobs: jobs(), spec: everySuite() };
