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
import { specOf } from "../../../provider/tasks/logic/asyncSpec";
import { datastoreSpec } from "../../../provider/tasks/logic/datastoreSpec";
import { namedFailure, whatTheNextUpDoes } from "../../../provider/tasks/logic/operationErrors";
import { FIXTURES } from "../asyncResource/dialectFixtures";
import { CLUSTER, HCI } from "../client/support";

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
        assert.equal(named.stack?.split("\n")[0], `TaskApiError: ${named.message}`, "naming it once");
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

describe("whatTheNextUpDoes: a tainted resource's next step, as untaint really works", () => {
    const datastore = datastoreSpec({ hciClusterUuid: HCI, clusterId: CLUSTER, name: "ds19" });
    const fixture = (dialect: string) => {
        const found = FIXTURES.find((f) => f.dialect === dialect);
        if (!found) throw new Error(`no ${dialect} fixture`);
        return specOf(found.args("http://127.0.0.1:1", "w1", 3) as never);
    };

    it("a record in working order: replaced, or kept with untaint", () => {
        assert.equal(
            whatTheNextUpDoes(datastore, { record: { state: "OK" } }),
            "the next `pulumi up` replaces it (deletes it, then creates it again); set `untaint: true` to keep it instead: that `up` records it as the API has it",
        );
    });

    it("a datastore in ERROR: replaced, and untaint cannot keep it (it stays tainted)", () => {
        assert.match(
            whatTheNextUpDoes(datastore, { record: { state: "ERROR" } }),
            /replaces it \(deletes it, then creates it again\); `untaint: true` cannot keep it: the API has it in a state it does not recover from$/,
        );
    });

    it("an ARM resource whose provisioning failed: untaint sends its body again", () => {
        assert.match(
            whatTheNextUpDoes(fixture("azure-arm"), { record: { properties: { provisioningState: "Failed" } } }),
            /set `untaint: true` to keep it instead: that `up` sends its body again, which retries its provisioning$/,
        );
    });

    it("nothing seen: untaint looks it up and keeps what it finds, or creates it", () => {
        assert.match(
            whatTheNextUpDoes(fixture("generic"), "unseen"),
            /set `untaint: true` to keep what the API has instead: that `up` looks it up by its natural key and records it \(or creates it, if there is none\)$/,
        );
    });
});
