// A root-hook plugin: stops the provider process the harness keeps for its next run (`parked` in
// test/harness/harness.ts) once each test file has run. Mocha ends its parallel workers without letting
// them run their exit handlers, and a parked process would outlive its worker. Loaded by every test
// command (.mocharc.json); a file that never ran the harness has nothing to stop.

const STOP = Symbol.for("pulumi-lifecycle.test.stopParkedProvider");

exports.mochaHooks = {
    async afterAll() {
        await globalThis[STOP]?.();
    },
};
