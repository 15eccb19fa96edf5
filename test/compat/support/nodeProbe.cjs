// Loaded into every node process a compatibility case starts (NODE_OPTIONS=--require), so a test can
// tell which Node.js ran the program and which ran each dynamic-provider process: it appends one line
// of JSON per process to $COMPAT_PROBE_LOG. Test infrastructure only.
"use strict";
const file = process.env.COMPAT_PROBE_LOG;
if (file) {
    require("node:fs").appendFileSync(
        file,
        `${JSON.stringify({ pid: process.pid, version: process.version, argv: process.argv.slice(1) })}\n`,
    );
}
