// The context a provider process's task operations share: one abort signal for all of them.

import { strict as assert } from "node:assert";
import { processContext } from "../../provider/tasks/processContext";

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
});
