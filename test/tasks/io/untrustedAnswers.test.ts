// Guards what the Datastore operations make of answers the task API's contract rules out (issue 18 §1
// and §2): a delete task that reports success while the datastore stays (the delete fails, so the engine
// keeps the resource); a Location carrying credentials or pointing elsewhere on a 202 (the operation is
// followed by its id on the API's own origin, as HPE's provider does: nothing goes elsewhere, the
// credentials are never used nor recorded) or on a 200 list (where the contract gives Location no
// meaning: ignored); bodies nested 100,000 levels (no RangeError; a 400 or
// 409 stays a definite answer, never "outcome unknown"). The Datastore lifecycle against hand-made
// node:http servers on port 0; fake time.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { DeleteUnconfirmedError } from "../../../provider/tasks/errors/deleteUnconfirmedError";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { ResourceExistsError } from "../../../provider/tasks/errors/resourceExistsError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import type { RawInputs } from "../../../provider/tasks/logic/datastoreState";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { CLUSTER, datastoreInputs, FakeTime, HCI, rejection, TOKEN } from "../client/support";
import {
    closeHostileApis,
    hostileApi,
    json,
    lifecycleOf,
    list,
    operation,
    pathOf,
    record,
    resource,
} from "./hostileApi";

const ID = `${HCI}/${CLUSTER}/ds19`;
const INPUTS = datastoreInputs() as RawInputs;
const RECORDED: DatastoreOutputs = { ...datastoreInputs(), tainted: false, datastoreId: "d1", state: "OK" };
const DELETE_TASK = `${ASYNC_OPERATIONS_PATH}/t-del`;
/** JSON nested 100,000 levels deep. */
const DEEP = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;

describe("answers the contract rules out (issue 18)", () => {
    let time: FakeTime;
    beforeEach(() => {
        time = new FakeTime();
    });
    afterEach(closeHostileApis);

    describe("a delete task that reports success while the datastore stays", () => {
        /** A server whose delete task succeeds; the datastore is gone afterwards only when `removes`. */
        async function deleting(removes: boolean) {
            let deleted = false;
            return await hostileApi((request, response) => {
                const path = pathOf(request.url);
                if (request.method === "DELETE") {
                    deleted = removes;
                    json(response, 202, { taskUri: DELETE_TASK }, { location: DELETE_TASK });
                } else if (path === DELETE_TASK) {
                    json(response, 200, operation("t-del", "SUCCEEDED", { name: "Delete datastore ds19" }));
                } else if (deleted) json(response, 404, { error: "not_found", message: "no datastore d1" });
                else json(response, 200, record());
            });
        }

        it("fails, saying the datastore still exists and stays in the stack's state, and what to do", async () => {
            const api = await deleting(false);
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.delete(ID, RECORDED));
            assert.ok(error instanceof DeleteUnconfirmedError, inspect(error));
            assert.equal(error.resourceId, "d1");
            assert.equal(error.operation, "t-del");
            assert.match(
                error.message,
                /^datastore "ds19" .* \(id d1\): the API said the delete \(operation t-del\) ended well, but the resource still exists\. It stays in the stack's state; check it at the API, then run `pulumi destroy`/,
            );
            // The engine deletes the id on record without reading it first; it reads it only after the task
            // ended (again, while a read that may lag behind the delete still shows it), never before.
            const paths = api.received.map((request) => `${request.method} ${pathOf(request.url)}`);
            assert.deepEqual(paths.slice(0, 2), [`DELETE ${DATASTORES_PATH}/d1`, `GET ${DELETE_TASK}`]);
            const gets = paths.slice(2);
            assert.ok(gets.length >= 1, "looked after the task");
            assert.ok(
                gets.every((request) => request === `GET ${DATASTORES_PATH}/d1`),
                `only d1 is read after the task: ${paths.join(", ")}`,
            );
        });

        it("succeeds once a GET confirms the datastore is gone (404)", async () => {
            const api = await deleting(true);
            const { lifecycle } = lifecycleOf(api.url, time);
            await lifecycle.delete(ID, RECORDED);
            assert.deepEqual(
                api.received.map((request) => `${request.method} ${pathOf(request.url)}`),
                [`DELETE ${DATASTORES_PATH}/d1`, `GET ${DELETE_TASK}`, `GET ${DATASTORES_PATH}/d1`],
            );
        });
    });

    describe("Location only where the contract uses it, never with credentials", () => {
        // The GreenLake dialect follows an operation by its id, the last segment of the 202's Location, on
        // the API's own origin (as HPE's provider does with path.Base): a Location on another origin, or
        // with credentials in it, never sends a request (nor the token) anywhere else, and its credentials
        // are never used nor shown. The operation then ends as the API says, and what it made is recorded.

        /** A server that creates d1 by operation t1, answering each 202 with the Location `location` names. */
        async function accepting(location: (base: string) => string) {
            const api = await hostileApi((request, response) => {
                const path = pathOf(request.url);
                if (request.method === "GET" && path === DATASTORES_PATH) json(response, 200, list([]));
                else if (request.method === "POST") {
                    json(response, 202, { taskUri: "/x" }, { location: location(api.url) });
                } else if (path === `${ASYNC_OPERATIONS_PATH}/t1`) {
                    json(
                        response,
                        200,
                        operation("t1", "SUCCEEDED", { associatedResources: resource(`${DATASTORES_PATH}/d1`) }),
                    );
                } else if (path === `${DATASTORES_PATH}/d1`) json(response, 200, record());
                else json(response, 404, { error: "not_found", message: "no" });
            });
            return api;
        }

        for (const [what, location] of [
            ["with userinfo", (base: string) => `${base.replace("//", "//user:pw@")}${ASYNC_OPERATIONS_PATH}/t1`],
            ["on another origin", (_base: string, elsewhere: string) => `${elsewhere}${ASYNC_OPERATIONS_PATH}/t1`],
        ] as const) {
            for (const token of ["tok-1", undefined]) {
                it(`a 202 whose Location is ${what} (${token ? "with" : "without"} a createToken): followed by its id on the API's origin only, no credentials anywhere`, async () => {
                    // Another origin that would answer anything: it must receive nothing.
                    const other = await hostileApi((_request, response) => json(response, 200, {}));
                    const api = await accepting((base) => location(base, other.url));
                    const { lifecycle, reports } = lifecycleOf(api.url, time);
                    const { outs } = await lifecycle.create({ ...INPUTS, ...(token ? { createToken: token } : {}) });
                    assert.equal(outs.datastoreId, "d1", "what the operation made is recorded");
                    assert.equal(outs.taskId, "t1");
                    assert.equal(outs.tainted, false);
                    assert.deepEqual(other.received, [], "nothing was sent to the other origin");
                    assert.deepEqual(
                        api.received.map((request) => `${request.method} ${pathOf(request.url)}`),
                        [
                            `GET ${DATASTORES_PATH}`,
                            `POST ${DATASTORES_PATH}`,
                            `GET ${ASYNC_OPERATIONS_PATH}/t1`,
                            `GET ${DATASTORES_PATH}/d1`,
                        ],
                    );
                    assert.ok(
                        api.received.every((request) => request.authorization === `Bearer ${TOKEN}`),
                        "every request carries the API's token, never the Location's credentials",
                    );
                    const everything = JSON.stringify([outs, reports]);
                    assert.ok(!everything.includes("user:pw") && !everything.includes("pw@"), everything);
                    assert.ok(!everything.includes(TOKEN), everything);
                });
            }
        }

        it("a 200 list answer carrying a cross-origin Location is read as the list it is", async () => {
            const api = await hostileApi((_request, response) =>
                json(response, 200, list([record()]), { location: "http://elsewhere.example/anything" }),
            );
            const { lifecycle } = lifecycleOf(api.url, time);
            const read = await lifecycle.read(ID, RECORDED);
            assert.equal(read.props?.datastoreId, "d1");
        });
    });

    describe("a body nested 100,000 levels", () => {
        it("a 400 on POST is a definite refusal: a TaskApiError with its status, no RangeError, nothing pending", async () => {
            const api = await hostileApi((request, response) => {
                if (request.method === "GET") json(response, 200, list([]));
                else json(response, 400, DEEP);
            });
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1" }));
            assert.ok(error instanceof TaskApiError, inspect(error));
            assert.equal(error.status, 400);
            assert.match(error.message, /with 400: Bad Request \(the body is nested deeper than 64 levels/);
        });

        it("a 409 on POST takes the existing-datastore path: ResourceExistsError, nothing pending", async () => {
            let lists = 0;
            const api = await hostileApi((request, response) => {
                // The list lags: it shows the datastore only after the POST.
                if (request.method === "GET") json(response, 200, list(lists++ === 0 ? [] : [record()]));
                else json(response, 409, DEEP);
            });
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1" }));
            assert.ok(error instanceof ResourceExistsError, inspect(error));
            assert.equal(error.existingId, "d1");
        });

        it("a 200 list is a malformed answer, not a RangeError", async () => {
            const api = await hostileApi((_request, response) => json(response, 200, DEEP));
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.read(ID, RECORDED));
            assert.ok(error instanceof MalformedResponseError, inspect(error));
            assert.match(error.message, /nested deeper than 64 levels/);
        });

        it("a 500 is a TaskApiError with its status once retries are spent, not a RangeError", async () => {
            const api = await hostileApi((_request, response) => json(response, 500, `{"error":${DEEP}}`));
            const { lifecycle } = lifecycleOf(api.url, time, { maxAttempts: 2 });
            const error = await rejection(lifecycle.read(ID, RECORDED));
            assert.ok(error instanceof TaskApiError, inspect(error));
            assert.equal(error.status, 500);
            assert.equal(error.code, undefined);
        });
    });
});
