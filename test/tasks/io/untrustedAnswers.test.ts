// Guards what the Datastore operations make of answers the task API's contract rules out (issue 18 §1
// and §2): a delete task that reports success while the datastore stays (the delete fails, so the engine
// keeps the resource); a Location carrying credentials or pointing elsewhere on a 202 (the datastore may
// exist: a pending create, not tainted, with the credentials never in a message) or on a 200 list (where
// the contract gives Location no meaning: ignored); bodies nested 100,000 levels (no RangeError; a 400 or
// 409 stays a definite answer, never "outcome unknown"). The Datastore lifecycle against hand-made
// node:http servers on port 0; fake time.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { DatastoreDeleteUnconfirmedError } from "../../../provider/tasks/errors/datastoreDeleteUnconfirmedError";
import { DatastoreExistsError } from "../../../provider/tasks/errors/datastoreExistsError";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import type { RawInputs } from "../../../provider/tasks/logic/datastoreState";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { CLUSTER, datastoreInputs, FakeTime, HCI, rejection } from "../client/support";
import { closeHostileApis, hostileApi, json, lifecycleOf, list, operation, pathOf, record } from "./hostileApi";

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
            assert.ok(error instanceof DatastoreDeleteUnconfirmedError, inspect(error));
            assert.equal(error.datastoreId, "d1");
            assert.equal(error.taskId, "t-del");
            assert.match(
                error.message,
                /^datastore "ds19" .* \(id d1\): the API reported the delete task t-del succeeded, but the datastore still exists \(state OK\)\. It stays in the stack's state\. Check it at the API; run `pulumi destroy`/,
            );
            const gets = api.received.filter(
                (request) => request.method === "GET" && pathOf(request.url).endsWith("/d1"),
            );
            assert.equal(gets.length, 2, "looked before and after the task");
        });

        it("succeeds once a GET confirms the datastore is gone (404)", async () => {
            const api = await deleting(true);
            const { lifecycle } = lifecycleOf(api.url, time);
            await lifecycle.delete(ID, RECORDED);
            assert.deepEqual(
                api.received.map((request) => `${request.method} ${pathOf(request.url)}`),
                [
                    `GET ${DATASTORES_PATH}/d1`,
                    `DELETE ${DATASTORES_PATH}/d1`,
                    `GET ${DELETE_TASK}`,
                    `GET ${DATASTORES_PATH}/d1`,
                ],
            );
        });
    });

    describe("Location only where the contract uses it, never with credentials", () => {
        /** A server that creates: empty list, a 202 with `location`; nothing else should be asked. */
        async function accepting(location: (base: string) => string) {
            const api = await hostileApi((request, response) => {
                if (request.method === "GET" && pathOf(request.url) === DATASTORES_PATH) json(response, 200, list([]));
                else if (request.method === "POST") {
                    json(response, 202, { taskUri: "/x" }, { location: location(api.url) });
                } else json(response, 200, operation("t1", "SUCCEEDED"));
            });
            return api;
        }

        for (const [what, location] of [
            ["with userinfo", (base: string) => `${base.replace("//", "//user:pw@")}${ASYNC_OPERATIONS_PATH}/t1`],
            ["on another origin", () => `http://elsewhere.example${ASYNC_OPERATIONS_PATH}/t1`],
        ] as const) {
            for (const token of ["tok-1", undefined]) {
                it(`a 202 whose Location is ${what} (${token ? "with" : "without"} a createToken): a pending create, not tainted, no credentials in it`, async () => {
                    const api = await accepting(location);
                    const { lifecycle } = lifecycleOf(api.url, time);
                    const error = await rejection(
                        lifecycle.create({ ...INPUTS, ...(token ? { createToken: token } : {}) }),
                    );
                    assert.ok(error instanceof PartialStateError, inspect(error));
                    assert.equal(
                        error.properties.tainted,
                        false,
                        "the next up resumes it, never replaces a good datastore",
                    );
                    assert.equal(error.properties.datastoreId, undefined);
                    assert.match(
                        error.message,
                        /the create request's outcome is unknown \(the task API's answer to POST/,
                    );
                    assert.match(
                        error.message,
                        /a resource URI outside the collection is refused|carries credentials|not on the API's origin/,
                    );
                    const everything = JSON.stringify([error.message, error.reasons, error.properties, inspect(error)]);
                    assert.ok(!everything.includes("user:pw") && !everything.includes("pw@"), everything);
                    assert.deepEqual(
                        api.received.map((request) => request.method),
                        ["GET", "POST"],
                        "nothing was followed",
                    );
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

        it("a 409 on POST takes the existing-datastore path: DatastoreExistsError, nothing pending", async () => {
            let lists = 0;
            const api = await hostileApi((request, response) => {
                // The list lags: it shows the datastore only after the POST.
                if (request.method === "GET") json(response, 200, list(lists++ === 0 ? [] : [record()]));
                else json(response, 409, DEEP);
            });
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1" }));
            assert.ok(error instanceof DatastoreExistsError, inspect(error));
            assert.equal(error.existing.id, "d1");
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
