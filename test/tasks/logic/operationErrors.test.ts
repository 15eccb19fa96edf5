// Guards namedFailure (provider/tasks/logic/operationErrors.ts): every error a Datastore operation ends
// with names its datastore and is a LifecycleError (the chaos suite's invariant 6 found errors of the
// client and the abort of a Ctrl-C reaching the user without saying which datastore they were about).
// The class stays, the message gains the datastore; what is not the package's own is wrapped. Pure.

import { strict as assert } from "node:assert";
import { LifecycleError } from "../../../provider/shared/errors/lifecycleError";
import { AsyncResourceOperationError } from "../../../provider/tasks/errors/asyncResourceOperationError";
import { OperationWaitError } from "../../../provider/tasks/errors/operationWaitError";
import { ResourceExistsError } from "../../../provider/tasks/errors/resourceExistsError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { namedFailure } from "../../../provider/tasks/logic/operationErrors";

const LABEL = 'datastore "ds19" (cluster c, HCI cluster h)';

describe("namedFailure: an operation's error names its datastore", () => {
    it("prefixes a LifecycleError that does not name it, keeping its class and its fields", () => {
        const error = new TaskApiError("POST", "/x", 422, "idempotency_key_reused", "used for another request", {});
        const named = namedFailure(error, LABEL, '"ds19"', "create");
        assert.equal(named, error);
        assert.ok(named instanceof TaskApiError);
        assert.equal(error.status, 422);
        assert.equal(
            named.message,
            `${LABEL}: the task API answered POST /x with 422 (idempotency_key_reused): used for another request`,
        );
        assert.ok(named.stack?.includes(named.message), "the stack shows the named message");
    });

    it("leaves an error that names it as it is", () => {
        const error = new ResourceExistsError(LABEL, "d1", true, "OK, 1 bytes VMFS");
        const message = error.message;
        assert.equal(namedFailure(error, LABEL, '"ds19"', "create").message, message);
    });

    it("names it in an operation's error too", () => {
        const error = new OperationWaitError("polling", { kind: "greenlake-operation", ref: "t1" }, undefined, {
            cause: new Error("reset"),
            what: "operation t1",
        });
        const named = namedFailure(error, LABEL, '"ds19"', "delete");
        assert.ok(named instanceof OperationWaitError);
        assert.equal(named.handle.ref, "t1");
        assert.equal(named.message, `${LABEL}: could not look at operation t1 (never seen): reset`);
    });

    it("wraps what is not the package's own (the abort of a Ctrl-C) in an AsyncResourceOperationError naming it", () => {
        const reason = new Error("cancelled (Ctrl-C)");
        const named = namedFailure(reason, LABEL, '"ds19"', "delete");
        assert.ok(named instanceof AsyncResourceOperationError && named instanceof LifecycleError);
        assert.equal(named.message, `${LABEL}: the delete stopped: cancelled (Ctrl-C)`);
        assert.equal(named.cause, reason);
        assert.equal(reason.message, "cancelled (Ctrl-C)", "the shared abort reason is not changed");
    });
});
