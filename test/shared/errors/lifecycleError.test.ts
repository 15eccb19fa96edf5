// Guards the package's one error vocabulary: every error class it exports extends LifecycleError, so a
// program can tell a failure the package explained (naming the resource, what went wrong and what to
// do) from one it did not expect; and the task API server's errors are not part of the package's API.

import { strict as assert } from "node:assert";
import * as lifecycle from "../../../provider";
import { LifecycleError } from "../../../provider/shared/errors/lifecycleError";

function exportedErrorClasses(namespace: Record<string, unknown>): [string, unknown][] {
    return Object.entries(namespace).filter(([name, value]) => name.endsWith("Error") && typeof value === "function");
}

describe("the errors the package exports", () => {
    for (const [label, namespace] of [
        ["hosts", lifecycle.hosts],
        ["tasks", lifecycle.tasks],
    ] as const) {
        it(`all extend LifecycleError (${label})`, () => {
            const classes = exportedErrorClasses(namespace as unknown as Record<string, unknown>);
            assert.ok(classes.length >= 5, `only ${classes.length} error classes exported from ${label}`);
            for (const [name, value] of classes) {
                assert.ok(
                    (value as { prototype: unknown }).prototype instanceof LifecycleError,
                    `${label}.${name} does not extend LifecycleError`,
                );
            }
        });
    }

    it("exports LifecycleError itself, the version errors and the lock timeout beside it, and no server code from tasks", () => {
        assert.equal(lifecycle.LifecycleError, LifecycleError);
        const topLevel = exportedErrorClasses(lifecycle as unknown as Record<string, unknown>).filter(
            ([name]) => name !== "LifecycleError",
        );
        assert.deepEqual(topLevel.map(([name]) => name).sort(), [
            "LockTimeoutError",
            "NewerStateError",
            "UnknownResourceKindError",
        ]);
        for (const [name, value] of topLevel) {
            assert.ok(
                (value as { prototype: unknown }).prototype instanceof LifecycleError,
                `${name} extends LifecycleError`,
            );
        }
        assert.ok(!("startTaskApiServer" in lifecycle.tasks));
    });
});
