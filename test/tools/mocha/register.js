// How the test processes load TypeScript: ts-node without type checking (`npm run lint` checks types),
// transpiling with SWC, which takes a fifth of the CPU time TypeScript's own transpiler takes. Loaded by
// every test command (.mocharc.json) and by nothing they start: a program the real CLI runs gets the
// SDK's own TypeScript setup, as a user's does. The package itself is always built by tsc (dist/).
require("ts-node").register({ transpileOnly: true, swc: true });
