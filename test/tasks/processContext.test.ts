// The context a provider process's task operations share: one abort signal for all of them, and the
// warnings it gives when a hook into the SDK's provider server cannot attach.

import { strict as assert } from "node:assert";
import { processContext, unattachedHooks } from "../../provider/tasks/processContext";

describe("the task operations' process context", () => {
    it("carries many operations at once on its one signal without Node's listener-leak warning", async () => {
        const warnings: Error[] = [];
        const listen = (warning: Error) => warnings.push(warning);
        process.on("warning", listen);
        try {
            const context = processContext(undefined);
            // The engine runs up to 16 operations at once; each waits on the shared signal.
            await Promise.all(Array.from({ length: 16 }, () => context.sleep(5, context.signal)));
            await new Promise((resolve) => setImmediate(resolve));
        } finally {
            process.off("warning", listen);
        }
        assert.deepEqual(
            warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message),
            [],
        );
    });

    it("says nothing of the hooks into the SDK's provider server when both attach", () => {
        assert.deepEqual(unattachedHooks({ cancel: true, calls: true }), []);
    });

    it("says, for each hook that did not attach, what the user loses", () => {
        const [cancel] = unattachedHooks({ cancel: false, calls: true });
        assert.match(cancel ?? "", /cannot hear the engine's Cancel.*a first Ctrl-C waits.*a second one interrupts/);
        const [calls] = unattachedHooks({ cancel: true, calls: false });
        assert.match(calls ?? "", /cannot hear the engine's calls.*customTimeouts apply only as the program recorded/);
        assert.match(calls ?? "", /progress lines show on the Stack row/);
        assert.equal(unattachedHooks({ cancel: false, calls: false }).length, 2);
    });
});
