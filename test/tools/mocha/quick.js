// `npm run test:quick`: the inner loop, `npm test`'s configuration over the suites that need no Pulumi CLI.
const { suitesWithoutCli } = require("./suites");

module.exports = { ...require("./all"), spec: suitesWithoutCli() };
