// Guards issue 18 §1 "foreign data touched": what the Datastore operations do with answers that name
// datastores other than the one asked for. A list that ignores the filter (another name, another cluster,
// another HCI cluster, ours mixed with another) must make refresh, adopt, the delete of a pending create and
// the create's error fail as a contract error, never take the foreign record as a candidate. Ids from the
// server ("../../admin/users/1", "D1?force=true&cascade=all", the empty id of a trailing-slash URI, a 409's
// existingId "../../admin/users/7", a GET answering another id, a task answering another id) must never
// send a request (with the token) outside the collections, nor be recorded in state. The Datastore
// lifecycle (as the provider runs it) against hand-made node:http servers on port 0 that record every
// request; fake time.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { CreateOutcomeUnknownError } from "../../../provider/tasks/errors/createOutcomeUnknownError";
import { MalformedResponseError } from "../../../provider/tasks/errors/malformedResponseError";
import { PartialStateError } from "../../../provider/tasks/errors/partialStateError";
import { ResourceExistsError } from "../../../provider/tasks/errors/resourceExistsError";
import { TaskApiContractError } from "../../../provider/tasks/errors/taskApiContractError";
import type { RawInputs } from "../../../provider/tasks/logic/datastoreState";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { CLUSTER, datastoreInputs, FakeTime, HCI, OTHER_UUID, rejection, TOKEN } from "../client/support";
import {
    assertOnlyInsideTheCollections,
    closeHostileApis,
    type HostileApi,
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
/** The state of a create whose outcome was unknown: no datastore id yet. */
const PENDING: DatastoreOutputs = { ...datastoreInputs(), tainted: false };
const TASK_LOCATION = `${ASYNC_OPERATIONS_PATH}/t1`;

function methods(api: HostileApi): string[] {
    return api.received.map((request) => `${request.method} ${pathOf(request.url)}`);
}

describe("answers naming other datastores (issue 18 §1)", () => {
    let time: FakeTime;
    beforeEach(() => {
        time = new FakeTime();
    });
    afterEach(async () => {
        await closeHostileApis();
    });

    describe("a list that ignores the filter", () => {
        const foreigners: [what: string, foreign: ReturnType<typeof record>][] = [
            ["another name", record({ id: "foreign-7", name: "ds20" })],
            ["another cluster", record({ id: "foreign-7", clusterInfo: { id: OTHER_UUID } })],
            ["another HCI cluster", record({ id: "foreign-7", hciClusterUuid: OTHER_UUID })],
        ];

        /** A server whose list answers `items` whatever the filter, and whose other routes must not be reached. */
        async function ignoringFilter(items: unknown[]): Promise<HostileApi> {
            return await hostileApi((request, response) => {
                if (request.method === "GET" && pathOf(request.url) === DATASTORES_PATH)
                    json(response, 200, list(items));
                else if (request.method === "DELETE")
                    json(response, 202, { taskUri: TASK_LOCATION }, { location: TASK_LOCATION });
                else if (request.method === "POST")
                    json(response, 202, { taskUri: TASK_LOCATION }, { location: TASK_LOCATION });
                else if (pathOf(request.url) === TASK_LOCATION) json(response, 200, operation("t1", "SUCCEEDED"));
                else json(response, 200, record({ id: "foreign-7", name: "ds20" }));
            });
        }

        function assertContractError(error: unknown): TaskApiContractError {
            assert.ok(error instanceof TaskApiContractError, inspect(error));
            assert.match(
                error.message,
                /answered a lookup of datastore "ds19" .*\(GET \/virtualization\/v1beta1\/datastores\?filter=.*\) with 1 of \d records that do not match the filter/,
            );
            assert.match(error.message, /so nothing was read, adopted or deleted/);
            assert.match(error.message, /Check that the API honours the `filter` parameter/);
            assert.ok(!error.message.includes("foreign-7"), "the foreign datastore is never named");
            assert.ok(!error.message.includes(TOKEN));
            return error;
        }

        for (const [what, foreign] of foreigners) {
            it(`${what}: refresh fails as a contract error and records nothing`, async () => {
                const api = await ignoringFilter([foreign]);
                const { lifecycle } = lifecycleOf(api.url, time);
                assertContractError(await rejection(lifecycle.read(ID, { ...PENDING, datastoreId: "d1" })));
                assert.deepEqual(methods(api), [`GET ${DATASTORES_PATH}`]);
            });

            it(`${what}: adopt takes nothing, and nothing is created`, async () => {
                const api = await ignoringFilter([foreign]);
                const { lifecycle } = lifecycleOf(api.url, time);
                assertContractError(await rejection(lifecycle.create({ ...INPUTS, adopt: true })));
                assert.deepEqual(methods(api), [`GET ${DATASTORES_PATH}`]);
            });

            it(`${what}: the destroy of a pending create deletes nothing`, async () => {
                const api = await ignoringFilter([foreign]);
                const { lifecycle } = lifecycleOf(api.url, time);
                assertContractError(await rejection(lifecycle.delete(ID, PENDING)));
                assert.deepEqual(methods(api), [`GET ${DATASTORES_PATH}`]);
            });

            it(`${what}: a create is refused without naming the foreign datastore (no ResourceExistsError)`, async () => {
                const api = await ignoringFilter([foreign]);
                const { lifecycle } = lifecycleOf(api.url, time);
                const error = await rejection(lifecycle.create(INPUTS));
                assert.ok(!(error instanceof ResourceExistsError), inspect(error));
                assertContractError(error);
            });
        }

        it("ours and a foreign one in one answer: the whole answer is refused, not an ambiguity", async () => {
            const api = await ignoringFilter([record(), record({ id: "foreign-7", name: "ds20" })]);
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = assertContractError(await rejection(lifecycle.read(ID, { ...PENDING, datastoreId: "d1" })));
            assert.match(error.message, /with 1 of 2 records/);
        });

        it("ours with its UUIDs in capitals is still ours (UUIDs compare case-insensitively)", async () => {
            const capitals = record({ hciClusterUuid: HCI.toUpperCase(), clusterInfo: { id: CLUSTER.toUpperCase() } });
            const api = await ignoringFilter([capitals]);
            const { lifecycle } = lifecycleOf(api.url, time);
            const read = await lifecycle.read(ID, { ...PENDING, datastoreId: "d1" });
            assert.equal(read.props?.datastoreId, "d1");
            // Recorded as check writes the program's, so the next diff sees no change of natural key.
            assert.equal(read.props?.hciClusterUuid, HCI);
            assert.equal(read.props?.clusterId, CLUSTER);
        });

        it("a name that differs only in case is not ours (names compare exactly)", async () => {
            const api = await ignoringFilter([record({ id: "foreign-7", name: "DS19" })]);
            const { lifecycle } = lifecycleOf(api.url, time);
            assertContractError(await rejection(lifecycle.read(ID, { ...PENDING, datastoreId: "d1" })));
        });
    });

    describe("what a task or a 409 names must have the whole natural key", () => {
        it("a task naming a datastore of another cluster: not recorded, the create stays partial", async () => {
            const api = await hostileApi((request, response) => {
                const path = pathOf(request.url);
                if (request.method === "GET" && path === DATASTORES_PATH) json(response, 200, list([]));
                else if (request.method === "POST")
                    json(response, 202, { taskUri: TASK_LOCATION }, { location: TASK_LOCATION });
                else if (path === TASK_LOCATION) {
                    json(
                        response,
                        200,
                        operation("t1", "SUCCEEDED", { associatedResources: resource(`${DATASTORES_PATH}/d9`) }),
                    );
                } else json(response, 200, record({ id: "d9", clusterInfo: { id: OTHER_UUID } }));
            });
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1" }));
            assert.ok(error instanceof PartialStateError, inspect(error));
            assert.equal(error.properties.datastoreId, undefined, "the foreign datastore is not recorded");
            assert.match(
                error.message,
                /the create of datastore "ds19" .* names "d9", which is not datastore "ds19" .*\(its natural key is "[^"]*\/c0ffee00-0000-4000-8000-000000000003\/ds19"\): the API answered for another resource, so nothing was recorded/,
            );
        });

        it("a 409 whose existingId names a datastore of another name: a contract error, not ResourceExistsError", async () => {
            const api = await hostileApi((request, response) => {
                const path = pathOf(request.url);
                if (request.method === "GET" && path === DATASTORES_PATH) json(response, 200, list([]));
                else if (request.method === "POST") {
                    json(response, 409, { error: "conflict", message: "taken", existingId: "foreign-7" });
                } else json(response, 200, record({ id: "foreign-7", name: "ds20" }));
            });
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1", adopt: true }));
            assert.ok(error instanceof TaskApiContractError, inspect(error));
            assert.match(
                error.message,
                /the conflict refusing the create names "foreign-7", which is not datastore "ds19" .*: the API answered for another resource, so nothing was recorded, adopted or deleted/,
            );
        });
    });

    describe("a create of unknown outcome while a datastore with its name already existed", () => {
        // Found by the chaos suite (seed 199): Ctrl-C cut off a POST that the API refused (409) because
        // someone else's datastore had the name; recorded as a pending create, the next refresh took that
        // datastore for this resource's, and destroy deleted it. Names are unique, so such a POST made none.
        for (const [how, answer] of [
            ["Ctrl-C while the POST is in flight", "hold"],
            ["a 500 to the POST", "500"],
            ["no answer to the POST", "drop"],
        ] as const) {
            it(`${how}: nothing is recorded as pending, and the error says how it resolves`, async () => {
                let abort = (): void => undefined;
                const api = await hostileApi((request, response) => {
                    if (request.method === "GET") json(response, 200, list([record({ id: "someone-elses" })]));
                    else if (answer === "500") json(response, 500, { error: "internal_error", message: "oops" });
                    else if (answer === "drop") response.socket?.destroy();
                    else abort();
                });
                const { lifecycle, controller } = lifecycleOf(api.url, time, { maxAttempts: 1 });
                abort = () => controller.abort(new Error("interrupted by SIGINT"));
                const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1" }));
                assert.ok(!(error instanceof PartialStateError), `recorded as pending: ${inspect(error)}`);
                assert.ok(error instanceof CreateOutcomeUnknownError, inspect(error));
                assert.match(
                    error.message,
                    /the create request's outcome is unknown \(.+\)\. A datastore with this name \(id someone-elses\) existed before it, so the request made no other and nothing is recorded; run `pulumi up` again/,
                );
            });
        }
    });

    describe("ids from the server", () => {
        const hostileIds = ["../../admin/users/1", "D1?force=true&cascade=all", "", "..", "a/b", "%2e%2e", "x#y"];

        /** A server that lists one datastore of our natural key with `id`, and echoes any id it is asked for. */
        async function listing(id: string): Promise<HostileApi> {
            return await hostileApi((request, response) => {
                const path = pathOf(request.url);
                if (request.method === "GET" && path === DATASTORES_PATH) json(response, 200, list([record({ id })]));
                else if (request.method === "DELETE")
                    json(response, 202, { taskUri: TASK_LOCATION }, { location: TASK_LOCATION });
                else if (path === TASK_LOCATION) json(response, 200, operation("t1", "SUCCEEDED"));
                else json(response, 404, { error: "not_found", message: "no" });
            });
        }

        for (const id of hostileIds) {
            it(`a listed id ${JSON.stringify(id)}: refresh and the destroy of a pending create fail; nothing leaves the collection`, async () => {
                const api = await listing(id);
                const { lifecycle } = lifecycleOf(api.url, time);
                const read = await rejection(lifecycle.read(ID, PENDING));
                assert.ok(read instanceof MalformedResponseError, inspect(read));
                assert.match(
                    read.message,
                    /is not valid: the answer is not a datastore: its id .* is not an id of the API/,
                );
                const deleted = await rejection(lifecycle.delete(ID, PENDING));
                assert.ok(deleted instanceof MalformedResponseError, inspect(deleted));
                assert.ok(
                    api.received.every((request) => request.method === "GET"),
                    "no DELETE was sent",
                );
                assertOnlyInsideTheCollections(api);
            });
        }

        it("a 409 whose existingId is ../../admin/users/7: no request goes there", async () => {
            const api = await hostileApi((request, response) => {
                if (request.method === "GET" && pathOf(request.url) === DATASTORES_PATH) json(response, 200, list([]));
                else if (request.method === "POST") {
                    json(response, 409, { error: "conflict", message: "taken", existingId: "../../admin/users/7" });
                } else json(response, 200, record({ id: "7" }));
            });
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1" }));
            assert.ok(error instanceof TaskApiContractError, inspect(error));
            // The id came from the API's 409, not from the stack's state: the message says so, and does not
            // send the user to `pulumi refresh`, which cannot change what the API answers.
            assert.match(
                error.message,
                /the conflict refusing the create names "\.\.\/\.\.\/admin\/users\/7", which is not an id of the API; nothing was read, adopted or deleted/,
            );
            assert.doesNotMatch(error.message, /pulumi refresh/);
            assertOnlyInsideTheCollections(api);
        });

        const resourceUris = [
            `${DATASTORES_PATH}/`,
            `${DATASTORES_PATH}/d1/`,
            `${DATASTORES_PATH}/../../admin/users/1`,
            `${DATASTORES_PATH}/d1?force=true&cascade=all`,
            `${DATASTORES_PATH}/d1#x`,
            "http://elsewhere.example/virtualization/v1beta1/datastores/d1",
            "/admin/users/1",
        ];
        for (const uri of resourceUris) {
            it(`a task naming its datastore ${JSON.stringify(uri)}: refused; no id (never "") is recorded`, async () => {
                // A sloppy server: any GET under the datastores answers a datastore with the id asked for.
                const api = await hostileApi((request, response) => {
                    const path = pathOf(request.url);
                    if (request.method === "GET" && path === DATASTORES_PATH && request.url.includes("?")) {
                        json(response, 200, list([]));
                    } else if (request.method === "POST") {
                        json(response, 202, { taskUri: TASK_LOCATION }, { location: TASK_LOCATION });
                    } else if (path === TASK_LOCATION) {
                        json(response, 200, operation("t1", "SUCCEEDED", { associatedResources: resource(uri) }));
                    } else {
                        const asked = decodeURIComponent(path.slice(path.lastIndexOf("/") + 1));
                        json(response, 200, record({ id: asked }));
                    }
                });
                const { lifecycle } = lifecycleOf(api.url, time);
                const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1" }));
                assert.ok(error instanceof PartialStateError, inspect(error));
                assert.equal(error.properties.datastoreId, undefined);
                assert.match(error.message, /a resource URI outside the collection is refused|not on the API's origin/);
                assertOnlyInsideTheCollections(api);
            });
        }

        it("a GET answering another id than the one asked: refused, the delete unconfirmed; only the id on record is touched", async () => {
            // The engine deletes the id the stack recorded without reading it first (a DELETE answered 404 is
            // a delete done; an operation of ours still running is in the state), so the DELETE of d1 is
            // sent; the read that is to confirm it gone answers d2, which is refused: the delete fails, so the
            // engine keeps the datastore in the stack's state, and d2 is never asked for nor deleted.
            const api = await hostileApi((request, response) => {
                if (request.method === "DELETE")
                    json(response, 202, { taskUri: TASK_LOCATION }, { location: TASK_LOCATION });
                else if (pathOf(request.url) === TASK_LOCATION) json(response, 200, operation("t1", "SUCCEEDED"));
                else json(response, 200, record({ id: "d2" }));
            });
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.delete(ID, { ...PENDING, datastoreId: "d1" }));
            assert.ok(error instanceof TaskApiContractError, inspect(error));
            assert.match(
                error.message,
                /answered GET \/virtualization\/v1beta1\/datastores\/d1 with the record of "d2", not the one asked for, so nothing of it was used/,
            );
            assert.deepEqual(methods(api), [
                `DELETE ${DATASTORES_PATH}/d1`,
                `GET ${TASK_LOCATION}`,
                `GET ${DATASTORES_PATH}/d1`,
            ]);
            assert.ok(!api.received.some((request) => request.url.includes("d2")), "d2 is never asked for");
            assertOnlyInsideTheCollections(api);
        });

        it("a 202 whose Location leaves the task collection: nothing is followed; the create is pending, not tainted", async () => {
            const location = `${ASYNC_OPERATIONS_PATH}/../../../admin/jobs/1`;
            const api = await hostileApi((request, response) => {
                if (request.method === "GET" && pathOf(request.url) === DATASTORES_PATH) json(response, 200, list([]));
                else if (request.method === "POST") json(response, 202, { taskUri: location }, { location });
                else json(response, 200, operation("1", "SUCCEEDED"));
            });
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1" }));
            assert.ok(error instanceof PartialStateError, inspect(error));
            assert.equal(error.properties.tainted, false);
            assert.equal(error.properties.datastoreId, undefined);
            assert.match(error.message, /outcome is unknown/);
            assertOnlyInsideTheCollections(api);
        });

        it("a task answering with another id than asked: its id is not recorded", async () => {
            const api = await hostileApi((request, response) => {
                if (request.method === "GET" && pathOf(request.url) === DATASTORES_PATH) json(response, 200, list([]));
                else if (request.method === "POST")
                    json(response, 202, { taskUri: TASK_LOCATION }, { location: TASK_LOCATION });
                else json(response, 200, operation("../../admin/jobs/1", "RUNNING"));
            });
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.create({ ...INPUTS, createToken: "tok-1" }));
            assert.ok(error instanceof PartialStateError, inspect(error));
            assert.equal(error.properties.taskId, "t1", "the task asked for, not the id the answer claimed");
            assertOnlyInsideTheCollections(api);
        });

        it("an id in the stack's state that is not of the API's shape: no request is sent for it", async () => {
            const api = await hostileApi((_request, response) => json(response, 200, record({ id: "1" })));
            const { lifecycle } = lifecycleOf(api.url, time);
            const error = await rejection(lifecycle.delete(ID, { ...PENDING, datastoreId: "../../admin/users/1" }));
            assert.ok(error instanceof TaskApiContractError, inspect(error));
            assert.match(error.message, /is not an id of the task API .* Run `pulumi refresh`/);
            assert.deepEqual(api.received, []);
        });
    });
});
