// Guards the task API server's wire contract, which the tasks.Datastore client is written against: every
// route and its status codes, bearer authentication, 400s naming the field, 409 conflicts, idempotency
// keys, the filter parameter, task progression on an injected clock and by polls, every injected fault
// (per request and per server), the test control API and robustness against hostile requests. In process,
// on port 0, never sleeping: time moves only when a test moves it.

import { strict as assert } from "node:assert";
import { type IncomingHttpHeaders, request } from "node:http";
import { connect } from "node:net";
import { ApiError } from "../../provider/taskApiServer/apiError";
import type { FaultRule, RequestLogList, TaskApiStats } from "../../provider/taskApiServer/control";
import {
    startTaskApiServer,
    type TaskApiServer,
    type TaskApiServerOptions,
} from "../../provider/taskApiServer/taskApiServer";
import type {
    AsyncOperation,
    ConflictBody,
    DatastoreList,
    DatastoreRecord,
    ErrorBody,
    TaskAccepted,
} from "../../provider/tasks/protocol/wire";
import { CLUSTER, createBody, GIB, HCI } from "../tasks/client/support";

const DATASTORES = "/virtualization/v1beta1/datastores";
const OPERATIONS = "/data-services/v1beta1/async-operations";
const OTHER_CLUSTER = "c0ffee00-0000-4000-8000-000000000003";
const START = Date.parse("2030-01-01T00:00:00.000Z");
const LOCATION =
    /^\/data-services\/v1beta1\/async-operations\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Reply {
    readonly status: number;
    readonly headers: IncomingHttpHeaders;
    readonly text: string;
    // biome-ignore lint/suspicious/noExplicitAny: tests read the JSON of many shapes
    readonly json: any;
}

interface CallOptions {
    /** Sent as JSON with Content-Type application/json. */
    readonly body?: unknown;
    /** Sent as is, with only the headers given. */
    readonly raw?: string | Buffer;
    readonly headers?: Record<string, string>;
    /** The Authorization header; the server's own by default, none with null. */
    readonly auth?: string | null;
    readonly key?: string;
}

/** One HTTP request on a fresh connection; rejects when the server closes it without an answer. */
function call(server: TaskApiServer, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    const auth = options.auth === undefined ? server.authorization : options.auth;
    if (auth !== null) headers.Authorization = auth;
    if (options.key !== undefined) headers["Idempotency-Key"] = options.key;
    let payload: string | Buffer | undefined = options.raw;
    if (options.body !== undefined) {
        payload = JSON.stringify(options.body);
        headers["Content-Type"] ??= "application/json";
    }
    return new Promise((resolve, reject) => {
        const req = request(`${server.url}${path}`, { method, headers, agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("error", reject);
            res.on("end", () => {
                const text = Buffer.concat(chunks).toString("utf8");
                let json: unknown;
                try {
                    json = JSON.parse(text);
                } catch {
                    json = undefined;
                }
                resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
            });
        });
        req.on("error", reject);
        req.end(payload);
    });
}

const createRequest = createBody;

/** POSTs a datastore and asserts the 202; resolves with the Location. */
async function create(server: TaskApiServer, name = "ds19", options: CallOptions = {}): Promise<string> {
    const reply = await call(server, "POST", DATASTORES, { body: createRequest(name), ...options });
    assert.equal(reply.status, 202, reply.text);
    return reply.headers.location ?? "";
}

async function operation(server: TaskApiServer, location: string): Promise<AsyncOperation> {
    const reply = await call(server, "GET", location);
    assert.equal(reply.status, 200, reply.text);
    return reply.json as AsyncOperation;
}

/** The id of the datastore a task is about. */
function datastoreIdOf(op: AsyncOperation): string {
    return op.associatedResources[0]?.resourceUri.split("/").pop() ?? "";
}

async function datastore(server: TaskApiServer, id: string): Promise<DatastoreRecord> {
    const reply = await call(server, "GET", `${DATASTORES}/${id}`);
    assert.equal(reply.status, 200, reply.text);
    return reply.json as DatastoreRecord;
}

/** Creates a datastore and lets its task finish; resolves with the datastore. */
async function createReady(server: TaskApiServer, name = "ds19"): Promise<DatastoreRecord> {
    const location = await create(server, name);
    server.advanceClock(10_000);
    const op = await operation(server, location);
    assert.equal(op.state, "SUCCEEDED");
    return await datastore(server, datastoreIdOf(op));
}

function assertError(reply: Reply, status: number, code: string, message?: RegExp): void {
    assert.equal(reply.status, status, reply.text);
    assert.match(String(reply.headers["content-type"]), /^application\/json/);
    const body = reply.json as ErrorBody;
    assert.equal(body.error, code, reply.text);
    assert.equal(typeof body.message, "string");
    if (message) assert.match(body.message, message);
}

describe("task API server", () => {
    let server: TaskApiServer;
    let sleeps: number[];

    /** Starts the server of a test (closed after it) on a frozen clock with a recording sleep. */
    async function start(options: TaskApiServerOptions = {}): Promise<TaskApiServer> {
        await server?.close();
        server = await startTaskApiServer({
            token: "secret-token",
            clock: () => START,
            sleep: async (ms) => {
                sleeps.push(ms);
            },
            testApi: true,
            ...options,
        });
        return server;
    }

    beforeEach(async () => {
        sleeps = [];
        await start();
    });
    afterEach(() => server.close());

    describe("authentication", () => {
        it("answers 401 with WWW-Authenticate and a JSON error without the header", async () => {
            const reply = await call(server, "GET", DATASTORES, { auth: null });
            assertError(reply, 401, "unauthorized", /Authorization: Bearer/);
            assert.match(String(reply.headers["www-authenticate"]), /^Bearer/);
        });

        it("refuses a wrong token, another scheme, and an empty bearer", async () => {
            for (const auth of ["Bearer wrong", "Basic c2VjcmV0LXRva2Vu", "Bearer ", "secret-token"]) {
                assertError(await call(server, "GET", DATASTORES, { auth }), 401, "unauthorized");
            }
        });

        it("requires the token on every route, known or not, and on the test API", async () => {
            for (const path of [`${OPERATIONS}/x`, `${DATASTORES}/x`, "/nowhere", "/_test/requests"]) {
                assertError(await call(server, "GET", path, { auth: null }), 401, "unauthorized");
            }
            assertError(
                await call(server, "POST", DATASTORES, { auth: null, body: createRequest() }),
                401,
                "unauthorized",
            );
            assert.equal(server.stats().datastoresCreated, 0);
        });

        it("accepts the scheme in any case", async () => {
            assert.equal((await call(server, "GET", DATASTORES, { auth: "bearer secret-token" })).status, 200);
        });

        it("makes up a random token when none is given", async () => {
            await start({ token: undefined });
            assert.ok(server.token.length >= 20);
            assert.equal(server.authorization, `Bearer ${server.token}`);
            assert.equal((await call(server, "GET", DATASTORES)).status, 200);
            const other = await startTaskApiServer();
            try {
                assert.notEqual(other.token, server.token);
            } finally {
                await other.close();
            }
        });
    });

    describe("creating a datastore", () => {
        it("answers 202 with the task's Location, and the same path as taskUri", async () => {
            const reply = await call(server, "POST", DATASTORES, { body: createRequest() });
            assert.equal(reply.status, 202);
            assert.match(reply.headers.location ?? "", LOCATION);
            assert.deepEqual(reply.json as TaskAccepted, { taskUri: reply.headers.location });
        });

        it("creates the datastore at once, CREATING, findable by its natural key", async () => {
            const location = await create(server);
            const op = await operation(server, location);
            const filter = encodeURIComponent(
                `hciClusterUuid eq '${HCI}' and clusterInfo/id eq '${CLUSTER}' and name eq 'ds19'`,
            );
            const list = (await call(server, "GET", `${DATASTORES}?filter=${filter}`)).json as DatastoreList;
            assert.equal(list.count, 1);
            const [found] = list.items;
            const id = datastoreIdOf(op);
            // The real API's record (HPE's capture: hpegl-pcbe-terraform-resources
            // internal/simulator/fixtures/datastores/create/get.json): the POST's sizeInBytes comes back as
            // capacityInBytes, its storageSystemId as hciClusterUuid, its targetHypervisorClusterId as clusterInfo.id.
            assert.deepEqual(found, {
                id,
                type: "virtualization/datastore",
                name: "ds19",
                displayName: "ds19",
                resourceUri: `${DATASTORES}/${id}`,
                hciClusterUuid: HCI,
                clusterInfo: {
                    id: CLUSTER,
                    name: found?.clusterInfo.name,
                    displayName: found?.clusterInfo.name,
                    type: "virtualization/hypervisor-cluster",
                    resourceUri: `/virtualization/v1beta1/hypervisor-clusters/${CLUSTER}`,
                },
                datacentersInfo: [{ id: found?.datacentersInfo[0]?.id, name: found?.datacentersInfo[0]?.name }],
                capacityInBytes: 16 * GIB,
                datastoreType: "VMFS",
                state: "CREATING",
                status: "OK",
                createdAt: "2030-01-01T00:00:00.000Z",
                updatedAt: "2030-01-01T00:00:00.000Z",
                generation: 1,
            });
            assert.equal("sizeInBytes" in (found ?? {}), false, "the record has no sizeInBytes");
            assert.match(found?.clusterInfo.name ?? "", /^cluster-[0-9a-f]{8}$/);
            assert.match(
                found?.datacentersInfo[0]?.id ?? "",
                /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/,
            );
            assert.match(found?.datacentersInfo[0]?.name ?? "", /^datacenter-[0-9a-f]{8}$/);
            assert.deepEqual([list.offset, list.total], [0, 1], "a real list's paging fields");
            assert.deepEqual(await datastore(server, datastoreIdOf(op)), found);
        });

        it("describes the task as the contract says", async () => {
            const op = await operation(server, await create(server));
            assert.deepEqual(op, {
                id: op.id,
                type: "task",
                name: "Create datastore ds19",
                state: "INITIALIZED",
                progressPercent: 0,
                associatedResources: [
                    { type: "virtualization/datastore", resourceUri: `${DATASTORES}/${datastoreIdOf(op)}` },
                ],
                resourceUri: `${OPERATIONS}/${op.id}`,
                sourceResourceUri: null,
                error: null,
                logMessages: [{ message: "Create datastore ds19: queued", timestampAt: "2030-01-01T00:00:00.000Z" }],
                createdAt: "2030-01-01T00:00:00.000Z",
                updatedAt: "2030-01-01T00:00:00.000Z",
            });
        });

        it("names the datastore a create made in sourceResourceUri once it succeeded, as the real API does", async () => {
            const location = await create(server);
            server.advanceClock(10_000);
            const done = await operation(server, location);
            assert.equal(done.state, "SUCCEEDED");
            assert.equal(done.sourceResourceUri, `${DATASTORES}/${datastoreIdOf(done)}`);
            const deleting = await call(server, "DELETE", `${DATASTORES}/${datastoreIdOf(done)}`);
            server.advanceClock(10_000);
            assert.equal((await operation(server, deleting.headers.location ?? "")).sourceResourceUri, null);
        });

        it("becomes OK when its task succeeds", async () => {
            const ready = await createReady(server);
            assert.equal(ready.state, "OK");
            assert.equal(ready.generation, 2);
            assert.equal(ready.updatedAt, "2030-01-01T00:00:02.000Z");
        });

        it("answers 409 with existingId for a name taken in the same cluster, in any state", async () => {
            const location = await create(server);
            const id = datastoreIdOf(await operation(server, location));
            const reply = await call(server, "POST", DATASTORES, {
                body: createRequest("ds19", { sizeInBytes: 32 * GIB }),
            });
            assertError(reply, 409, "conflict", /ds19 already exists/);
            assert.equal((reply.json as ConflictBody).existingId, id);
            const upper = createRequest("ds19", { storageSystemId: HCI.toUpperCase() });
            assert.equal(
                (await call(server, "POST", DATASTORES, { body: upper })).status,
                409,
                "uuids compare case-insensitively",
            );
            assert.equal(server.stats().datastoresCreated, 1);
        });

        it("allows the same name in another cluster, and another name in the same one", async () => {
            await create(server);
            assert.equal(
                (
                    await call(server, "POST", DATASTORES, {
                        body: createRequest("ds19", { targetHypervisorClusterId: OTHER_CLUSTER }),
                    })
                ).status,
                202,
            );
            assert.equal((await call(server, "POST", DATASTORES, { body: createRequest("DS19") })).status, 202);
            assert.equal(server.stats().datastoresCreated, 3);
        });

        it("accepts the datastore types a create may ask for, and names at the edges of the rules", async () => {
            for (const [index, datastoreType] of ["VMFS", "VVOL"].entries()) {
                await create(server, `t${index}`, { body: createRequest(`t${index}`, { datastoreType }) });
            }
            await create(server, "x".repeat(80), { body: createRequest("x".repeat(80)) });
            await create(server, "a-b_c.9", { body: createRequest("a-b_c.9", { sizeInBytes: GIB }) });
        });

        it("accepts the volumeInfo of HPE's client (what its provider would send once the API takes it)", async () => {
            const volumeInfo = {
                allFlash: true,
                dataReduction: false,
                deduplication: false,
                encryption: { cipher: "None" },
                qos: { iopsLimit: -1, mbpsLimit: 500 },
            };
            await create(server, "ds19", { body: createRequest("ds19", { volumeInfo }) });
            assert.equal(server.datastores()[0]?.capacityInBytes, 16 * GIB);
        });
    });

    describe("bad requests", () => {
        const cases: [string, unknown, RegExp][] = [
            ["a missing name", { ...createRequest(), name: undefined }, /^name is required/],
            [
                "a missing storageSystemId",
                { ...createRequest(), storageSystemId: undefined },
                /^storageSystemId is required; a datastore needs name, sizeInBytes, storageSystemId, targetHypervisorClusterId, datastoreType/,
            ],
            [
                "a missing targetHypervisorClusterId",
                { ...createRequest(), targetHypervisorClusterId: undefined },
                /^targetHypervisorClusterId is required/,
            ],
            ["a missing sizeInBytes", { ...createRequest(), sizeInBytes: undefined }, /^sizeInBytes is required/],
            ["a missing datastoreType", { ...createRequest(), datastoreType: undefined }, /^datastoreType is required/],
            [
                "an unknown field",
                { ...createRequest(), color: "red" },
                /^color: unknown field; the body takes only name, sizeInBytes, storageSystemId, targetHypervisorClusterId, datastoreType, volumeInfo, protectionPolicyId/,
            ],
            [
                "the natural key by the names records give it (hciClusterUuid)",
                { ...createRequest(), hciClusterUuid: HCI },
                /^hciClusterUuid: unknown field/,
            ],
            [
                "the size by the name records give it (capacityInBytes)",
                { ...createRequest(), capacityInBytes: 16 * GIB },
                /^capacityInBytes: unknown field/,
            ],
            ["a numeric name", createRequest("ds", { name: 19 }), /^name must be a string, not 19/],
            ["an empty name", createRequest(""), /^name is empty/],
            ["a long name", createRequest("x".repeat(81)), /^name is 81 characters long/],
            ["a name with a space", createRequest("ds 19"), /^name contains " "/],
            ["a name with a slash", createRequest("ds/19"), /^name contains "\/"/],
            [
                "a bad uuid",
                createRequest("ds", { storageSystemId: "not-a-uuid" }),
                /^storageSystemId "not-a-uuid" is not a UUID/,
            ],
            [
                "a bad cluster id",
                createRequest("ds", { targetHypervisorClusterId: `${CLUSTER}0` }),
                /^targetHypervisorClusterId .* is not a UUID/,
            ],
            [
                "a size as a string",
                createRequest("ds", { sizeInBytes: "16GiB" }),
                /^sizeInBytes must be a number, not the string "16GiB"/,
            ],
            [
                "a fractional size",
                createRequest("ds", { sizeInBytes: GIB + 0.5 }),
                /^sizeInBytes must be a whole number/,
            ],
            [
                "a size below 1 GiB",
                createRequest("ds", { sizeInBytes: GIB - 1 }),
                /^sizeInBytes must be at least 1073741824/,
            ],
            ["a negative size", createRequest("ds", { sizeInBytes: -1 }), /^sizeInBytes must be at least/],
            ["an unsafe size", createRequest("ds", { sizeInBytes: 2 ** 60 }), /^sizeInBytes must be a whole number/],
            [
                "an unknown type",
                createRequest("ds", { datastoreType: "vmfs" }),
                /^datastoreType "vmfs" is not one of VMFS, VVOL: the types a create may ask for/,
            ],
            [
                "a type records may have but a create may not ask for",
                createRequest("ds", { datastoreType: "NFS" }),
                /^datastoreType "NFS" is not one of VMFS, VVOL/,
            ],
            [
                "a protection policy",
                createRequest("ds", { protectionPolicyId: CLUSTER }),
                /^protectionPolicyId: this server has no protection policies, so the string "c0ffee00-.*" names none; leave it out/,
            ],
            [
                "a volumeInfo that is not an object",
                createRequest("ds", { volumeInfo: [] }),
                /^volumeInfo must be a JSON object, not an array/,
            ],
            [
                "an unknown field of volumeInfo",
                createRequest("ds", { volumeInfo: { compression: true } }),
                /^volumeInfo\.compression: unknown field; volumeInfo takes only allFlash, dataReduction, deduplication, encryption, qos/,
            ],
            [
                "a volumeInfo flag that is not a boolean",
                createRequest("ds", { volumeInfo: { deduplication: "no" } }),
                /^volumeInfo\.deduplication must be true or false, not the string "no"/,
            ],
            [
                "an unknown cipher",
                createRequest("ds", { volumeInfo: { encryption: { cipher: "ROT13" } } }),
                /^volumeInfo\.encryption\.cipher must be AES_256_XTS or None, not the string "ROT13"/,
            ],
            [
                "a qos limit below -1",
                createRequest("ds", { volumeInfo: { qos: { iopsLimit: -2 } } }),
                /^volumeInfo\.qos\.iopsLimit must be a number of at least -1 \(no limit\), not -2/,
            ],
            ["an array", [createRequest()], /^the body must be a JSON object, not an array/],
            ["null", null, /^the body must be a JSON object, not null/],
        ];
        for (const [what, body, message] of cases) {
            it(`answers 400 to a create with ${what}`, async () => {
                assertError(await call(server, "POST", DATASTORES, { body }), 400, "bad_request", message);
                assert.equal(server.stats().datastoresCreated, 0);
            });
        }

        it("answers 400 to a body that is not JSON, or missing", async () => {
            const headers = { "Content-Type": "application/json" };
            assertError(
                await call(server, "POST", DATASTORES, { raw: "{name:", headers }),
                400,
                "bad_request",
                /not valid JSON/,
            );
            assertError(await call(server, "POST", DATASTORES, { headers }), 400, "bad_request", /needs a JSON body/);
        });

        it("answers 415 to a body not declared as JSON", async () => {
            const raw = JSON.stringify(createRequest());
            for (const type of [
                "text/plain",
                "application/x-www-form-urlencoded",
                "application/json; charset=latin1",
            ]) {
                const reply = await call(server, "POST", DATASTORES, { raw, headers: { "Content-Type": type } });
                assertError(reply, 415, "unsupported_media_type", /Content-Type must be application\/json/);
            }
            assertError(await call(server, "POST", DATASTORES, { raw }), 415, "unsupported_media_type", /not absent/);
            const charset = { "Content-Type": "Application/JSON; charset=UTF-8" };
            assert.equal((await call(server, "POST", DATASTORES, { raw, headers: charset })).status, 202);
        });

        it("answers 400 to an Idempotency-Key that is empty, too long or not printable ASCII", async () => {
            for (const [key, problem] of [
                ["", /is empty/],
                ["k".repeat(256), /is 256 characters long/],
                ["tab\there", /not printable ASCII/],
            ] as const) {
                const reply = await call(server, "POST", DATASTORES, { body: createRequest(), key });
                assertError(reply, 400, "bad_request", problem);
                assert.match(reply.json.message, /Idempotency-Key/);
            }
            await create(server, "ds19", { key: "k".repeat(255) });
        });

        it("answers 400 to unknown query parameters and a repeated filter", async () => {
            assertError(
                await call(server, "GET", `${DATASTORES}?limit=5`),
                400,
                "bad_request",
                /unknown query parameter "limit"/,
            );
            assertError(
                await call(server, "GET", `${DATASTORES}?filter=id eq a&filter=id eq b`),
                400,
                "bad_request",
                /more than once/,
            );
            assertError(
                await call(server, "GET", `${OPERATIONS}/x?verbose=1`),
                400,
                "bad_request",
                /takes no query parameters/,
            );
        });

        it("answers 400 to a filter that breaks the grammar, naming the position", async () => {
            const reply = await call(
                server,
                "GET",
                `${DATASTORES}?filter=${encodeURIComponent("name eq 'ds19' or id eq x")}`,
            );
            assertError(
                reply,
                400,
                "bad_request",
                /filter: expected "and" or the end of the filter at position 16, found "or"/,
            );
            assertError(await call(server, "GET", `${DATASTORES}?filter=`), 400, "bad_request", /at position 1/);
        });
    });

    describe("listing and reading", () => {
        it("lists every datastore without a filter, oldest first", async () => {
            assert.deepEqual((await call(server, "GET", DATASTORES)).json, {
                items: [],
                count: 0,
                offset: 0,
                total: 0,
            });
            await create(server, "a");
            server.advanceClock(1);
            await create(server, "b");
            const list = (await call(server, "GET", DATASTORES)).json as DatastoreList;
            assert.equal(list.count, 2);
            assert.deepEqual(
                list.items.map((item) => item.name),
                ["a", "b"],
            );
        });

        it("filters by any field, with + or %20 for spaces", async () => {
            await create(server, "a");
            await create(server, "b", { body: createRequest("b", { targetHypervisorClusterId: OTHER_CLUSTER }) });
            const names = async (query: string) =>
                ((await call(server, "GET", `${DATASTORES}?filter=${query}`)).json as DatastoreList).items.map(
                    (item) => item.name,
                );
            assert.deepEqual(await names(`clusterInfo/id+eq+${OTHER_CLUSTER}`), ["b"]);
            assert.deepEqual(await names(encodeURIComponent("name eq 'a'")), ["a"]);
            assert.deepEqual(await names(encodeURIComponent(`hciClusterUuid eq ${HCI}`)), ["a", "b"]);
            assert.deepEqual(await names(encodeURIComponent("name eq 'c'")), []);
            const [first] = server.datastores();
            assert.deepEqual(await names(encodeURIComponent(`id eq ${first?.id}`)), ["a"]);
        });

        it("answers 404 to an unknown datastore or operation", async () => {
            assertError(
                await call(server, "GET", `${DATASTORES}/0b9e5a52-6a0e-4a47-8f55-2d7f3e1c1a01`),
                404,
                "not_found",
            );
            assertError(await call(server, "GET", `${OPERATIONS}/nope`), 404, "not_found", /no async operation/);
            assertError(await call(server, "GET", `${DATASTORES}/%E0%A4%A`), 404, "not_found");
        });

        it("answers 404 to an unknown route and 405 with Allow to a wrong method", async () => {
            assertError(await call(server, "GET", "/virtualization/v1beta1/hosts"), 404, "not_found", /no route/);
            assertError(await call(server, "GET", `${DATASTORES}/`), 404, "not_found");
            for (const [method, path, allow] of [
                ["PUT", DATASTORES, "GET, POST"],
                ["DELETE", DATASTORES, "GET, POST"],
                ["POST", `${DATASTORES}/x`, "GET, PATCH, DELETE"],
                ["PUT", `${DATASTORES}/x`, "GET, PATCH, DELETE"],
                ["DELETE", `${OPERATIONS}/x`, "GET"],
                ["HEAD", `${OPERATIONS}/x`, "GET"],
            ]) {
                const reply = await call(server, method as string, path as string);
                assert.equal(reply.status, 405, `${method} ${path}`);
                assert.equal(reply.headers.allow, allow);
                if (method !== "HEAD")
                    assertError(reply, 405, "method_not_allowed", new RegExp(`does not take ${method}`));
            }
        });
    });

    describe("resizing a datastore", () => {
        it("answers 202; UPDATING meanwhile, the new size and OK when the task succeeds", async () => {
            const ready = await createReady(server);
            const reply = await call(server, "PATCH", `${DATASTORES}/${ready.id}`, { body: { sizeInBytes: 32 * GIB } });
            assert.equal(reply.status, 202, reply.text);
            assert.match(reply.headers.location ?? "", LOCATION);
            const updating = await datastore(server, ready.id);
            assert.equal(updating.state, "UPDATING");
            assert.equal(updating.capacityInBytes, 16 * GIB);
            assert.equal(updating.generation, ready.generation + 1);
            const op = await operation(server, reply.headers.location ?? "");
            assert.equal(op.name, "Resize datastore ds19");
            server.advanceClock(2000);
            const done = await operation(server, reply.headers.location ?? "");
            assert.equal(done.state, "SUCCEEDED");
            assert.match(done.logMessages[1]?.message ?? "", /Resizing datastore ds19 to 32 GiB/);
            const resized = await datastore(server, ready.id);
            assert.equal(resized.state, "OK");
            assert.equal(resized.capacityInBytes, 32 * GIB);
            assert.equal(resized.generation, ready.generation + 2);
        });

        it("accepts the same size (nothing to grow)", async () => {
            const ready = await createReady(server);
            assert.equal(
                (await call(server, "PATCH", `${DATASTORES}/${ready.id}`, { body: { sizeInBytes: 16 * GIB } })).status,
                202,
            );
        });

        it("answers 400 to a shrink, naming both sizes", async () => {
            const ready = await createReady(server);
            const reply = await call(server, "PATCH", `${DATASTORES}/${ready.id}`, { body: { sizeInBytes: 8 * GIB } });
            assertError(
                reply,
                400,
                "bad_request",
                /sizeInBytes 8589934592 \(8 GiB\) is smaller than .* 17179869184 \(16 GiB\); a datastore cannot shrink/,
            );
            assert.equal((await datastore(server, ready.id)).state, "OK");
        });

        it("answers 400 to other fields and bad sizes", async () => {
            const ready = await createReady(server);
            const path = `${DATASTORES}/${ready.id}`;
            assertError(
                await call(server, "PATCH", path, { body: { sizeInBytes: 32 * GIB, name: "x" } }),
                400,
                "bad_request",
                /^name: unknown field; the body takes only sizeInBytes/,
            );
            assertError(
                await call(server, "PATCH", path, { body: {} }),
                400,
                "bad_request",
                /^sizeInBytes is required/,
            );
            assertError(
                await call(server, "PATCH", path, { body: { sizeInBytes: "big" } }),
                400,
                "bad_request",
                /^sizeInBytes must be a number/,
            );
        });

        it("answers 404 to an unknown datastore and 409 to one that is not OK", async () => {
            assertError(
                await call(server, "PATCH", `${DATASTORES}/nope`, { body: { sizeInBytes: 32 * GIB } }),
                404,
                "not_found",
            );
            const op = await operation(server, await create(server));
            const reply = await call(server, "PATCH", `${DATASTORES}/${datastoreIdOf(op)}`, {
                body: { sizeInBytes: 32 * GIB },
            });
            assertError(
                reply,
                409,
                "conflict",
                new RegExp(`is CREATING and cannot be resized now; wait for ${OPERATIONS}/${op.id} to end`),
            );
        });
    });

    describe("deleting a datastore", () => {
        it("answers 202; DELETING and still listed until the task ends, then gone", async () => {
            const ready = await createReady(server);
            const reply = await call(server, "DELETE", `${DATASTORES}/${ready.id}`);
            assert.equal(reply.status, 202, reply.text);
            assert.match(reply.headers.location ?? "", LOCATION);
            assert.equal((await datastore(server, ready.id)).state, "DELETING");
            const list = (await call(server, "GET", `${DATASTORES}?filter=name+eq+ds19`)).json as DatastoreList;
            assert.equal(list.items[0]?.state, "DELETING");
            server.advanceClock(1999);
            assert.equal((await operation(server, reply.headers.location ?? "")).state, "RUNNING");
            assert.equal((await datastore(server, ready.id)).state, "DELETING");
            server.advanceClock(1);
            const done = await operation(server, reply.headers.location ?? "");
            assert.equal(done.state, "SUCCEEDED");
            assert.equal(done.name, "Delete datastore ds19");
            assertError(await call(server, "GET", `${DATASTORES}/${ready.id}`), 404, "not_found");
            assertError(await call(server, "DELETE", `${DATASTORES}/${ready.id}`), 404, "not_found");
            assert.deepEqual((await call(server, "GET", DATASTORES)).json, {
                items: [],
                count: 0,
                offset: 0,
                total: 0,
            });
            assert.equal((await create(server)).length > 0, true, "the name is free again");
        });

        it("answers a DELETE of a datastore being deleted with the same task", async () => {
            const ready = await createReady(server);
            const first = await call(server, "DELETE", `${DATASTORES}/${ready.id}`);
            const second = await call(server, "DELETE", `${DATASTORES}/${ready.id}`);
            assert.equal(second.status, 202);
            assert.equal(second.headers.location, first.headers.location);
            assert.equal(server.stats().tasksCreated, 2);
        });

        it("deletes a datastore whose create failed (ERROR)", async () => {
            server.addFault({ fault: { task: { fails: "no space" } } });
            const op = await operation(server, await create(server));
            server.advanceClock(2000);
            const id = datastoreIdOf(op);
            assert.equal((await datastore(server, id)).state, "ERROR");
            assert.equal((await call(server, "DELETE", `${DATASTORES}/${id}`)).status, 202);
        });

        it("answers 409 to deleting a datastore whose create or resize is running", async () => {
            const op = await operation(server, await create(server));
            assertError(
                await call(server, "DELETE", `${DATASTORES}/${datastoreIdOf(op)}`),
                409,
                "conflict",
                /is CREATING/,
            );
        });

        it("answers 404 to an unknown datastore", async () => {
            assertError(
                await call(server, "DELETE", `${DATASTORES}/0b9e5a52-6a0e-4a47-8f55-2d7f3e1c1a01`),
                404,
                "not_found",
            );
        });
    });

    describe("idempotency", () => {
        it("answers a retry with the same key and body with the same Location, creating nothing", async () => {
            const first = await call(server, "POST", DATASTORES, { body: createRequest(), key: "key-1" });
            // The same body in another key order and layout is the same request.
            const raw = `{ "datastoreType": "VMFS", "sizeInBytes": ${16 * GIB}, "targetHypervisorClusterId": "${CLUSTER}", "storageSystemId": "${HCI}", "name": "ds19" }`;
            const retry = await call(server, "POST", DATASTORES, {
                raw,
                headers: { "Content-Type": "application/json" },
                key: "key-1",
            });
            assert.equal(first.status, 202);
            assert.equal(retry.status, 202, retry.text);
            assert.equal(retry.headers.location, first.headers.location);
            assert.deepEqual(retry.json, first.json);
            assert.equal(server.stats().datastoresCreated, 1);
            assert.equal(server.stats().tasksCreated, 1);
            assert.equal(server.datastores()[0]?.idempotencyKey, undefined, "the record names no key, as the real API");
        });

        it("shows the creating key on the datastore only when started with echoIdempotencyKey", async () => {
            const echoing = await startTaskApiServer({ token: server.token, echoIdempotencyKey: true });
            try {
                await create(echoing, "ds19", { key: "key-1" });
                assert.equal(echoing.datastores()[0]?.idempotencyKey, "key-1");
            } finally {
                await echoing.close();
            }
        });

        it("still answers the same Location after the task ended", async () => {
            const first = await create(server, "ds19", { key: "key-1" });
            server.advanceClock(5000);
            assert.equal((await operation(server, first)).state, "SUCCEEDED");
            assert.equal(await create(server, "ds19", { key: "key-1" }), first);
            assert.equal(server.stats().datastoresCreated, 1);
        });

        it("answers 422 to the same key with another body, and creates nothing", async () => {
            await create(server, "ds19", { key: "key-1" });
            const reply = await call(server, "POST", DATASTORES, { body: createRequest("ds20"), key: "key-1" });
            assertError(reply, 422, "idempotency_key_reused", /key-1.*different request/);
            assert.equal(server.stats().datastoresCreated, 1);
        });

        it("answers 409, not the first Location, to the same body with another key or none", async () => {
            await create(server, "ds19", { key: "key-1" });
            assertError(
                await call(server, "POST", DATASTORES, { body: createRequest(), key: "key-2" }),
                409,
                "conflict",
            );
            assertError(await call(server, "POST", DATASTORES, { body: createRequest() }), 409, "conflict");
            assert.equal(server.datastores().length, 1);
        });

        it("does not remember a key whose request was refused", async () => {
            assertError(
                await call(server, "POST", DATASTORES, { body: createRequest("bad name"), key: "key-1" }),
                400,
                "bad_request",
            );
            await create(server, "ds19", { key: "key-1" });
        });

        it("makes resizes and deletes retryable too, per method and path", async () => {
            const ready = await createReady(server);
            const path = `${DATASTORES}/${ready.id}`;
            const resize = await call(server, "PATCH", path, { body: { sizeInBytes: 32 * GIB }, key: "r" });
            assert.equal(
                (await call(server, "PATCH", path, { body: { sizeInBytes: 32 * GIB }, key: "r" })).headers.location,
                resize.headers.location,
            );
            assertError(await call(server, "DELETE", path, { key: "r" }), 422, "idempotency_key_reused");
            server.advanceClock(2000);
            const deleted = await call(server, "DELETE", path, { key: "d" });
            server.advanceClock(2000);
            assert.equal((await operation(server, deleted.headers.location ?? "")).state, "SUCCEEDED");
            const retry = await call(server, "DELETE", path, { key: "d" });
            assert.equal(retry.status, 202, "a retried delete is answered as the first, though the datastore is gone");
            assert.equal(retry.headers.location, deleted.headers.location);
        });
    });

    describe("task progression on the injected clock", () => {
        it("is INITIALIZED for 10%, RUNNING with rising progress, then SUCCEEDED at its duration", async () => {
            const location = await create(server);
            const seen: [number, string, number][] = [];
            for (const step of [0, 199, 1, 300, 500, 500, 499, 1]) {
                server.advanceClock(step);
                const op = await operation(server, location);
                seen.push([server.now() - START, op.state, op.progressPercent]);
            }
            assert.deepEqual(seen, [
                [0, "INITIALIZED", 0],
                [199, "INITIALIZED", 0],
                [200, "RUNNING", 10],
                [500, "RUNNING", 25],
                [1000, "RUNNING", 50],
                [1500, "RUNNING", 75],
                [1999, "RUNNING", 99],
                [2000, "SUCCEEDED", 100],
            ]);
        });

        it("grows its log as it advances, with the moment each step was reached", async () => {
            const location = await create(server);
            server.advanceClock(60_000);
            const op = await operation(server, location);
            assert.deepEqual(op.logMessages, [
                { message: "Create datastore ds19: queued", timestampAt: "2030-01-01T00:00:00.000Z" },
                { message: "Creating datastore ds19", timestampAt: "2030-01-01T00:00:00.200Z" },
                { message: "Create datastore ds19: 50% done", timestampAt: "2030-01-01T00:00:01.000Z" },
                { message: "Datastore ds19 created", timestampAt: "2030-01-01T00:00:02.000Z" },
            ]);
            assert.equal(op.endedAt, "2030-01-01T00:00:02.000Z");
            assert.equal(op.updatedAt, "2030-01-01T00:00:02.000Z");
            assert.equal(op.error, null);
        });

        it("applies a task's effect when it ends, whether or not anyone polls it", async () => {
            const location = await create(server);
            server.advanceClock(2000);
            const [ready] = server.datastores();
            assert.equal(ready?.state, "OK");
            assert.equal((await operation(server, location)).state, "SUCCEEDED");
        });

        it("takes the server's taskDurationMs", async () => {
            await start({ taskDurationMs: 10_000 });
            const location = await create(server);
            server.advanceClock(9999);
            assert.equal((await operation(server, location)).state, "RUNNING");
            server.advanceClock(1);
            assert.equal((await operation(server, location)).state, "SUCCEEDED");
        });

        it("ends a zero-length task at once", async () => {
            await start({ taskDurationMs: 0 });
            const location = await create(server);
            assert.equal(server.datastores()[0]?.state, "OK");
            assert.equal((await operation(server, location)).state, "SUCCEEDED");
        });

        it("omits suggestedPollingIntervalSeconds unless the server has one", async () => {
            const op = await operation(server, await create(server));
            assert.equal("suggestedPollingIntervalSeconds" in op, false);
            await start({ suggestedPollingIntervalSeconds: 3 });
            assert.equal((await operation(server, await create(server))).suggestedPollingIntervalSeconds, 3);
        });
    });

    describe("task progression by polls", () => {
        it("ends on the n-th GET of the operation, whatever the clock", async () => {
            await start({ taskCompleteAfterPolls: 4 });
            const location = await create(server);
            const states: string[] = [];
            for (let poll = 1; poll <= 5; poll++) {
                const op = await operation(server, location);
                states.push(`${op.state} ${op.progressPercent}`);
            }
            assert.deepEqual(states, ["INITIALIZED 0", "RUNNING 25", "RUNNING 50", "SUCCEEDED 100", "SUCCEEDED 100"]);
            server.advanceClock(1_000_000);
            assert.equal((await operation(server, location)).state, "SUCCEEDED");
        });

        it("does not count reads of the datastore, which stays CREATING until the last poll", async () => {
            await start({ taskCompleteAfterPolls: 1 });
            const location = await create(server);
            server.advanceClock(1_000_000);
            const id = server.datastores()[0]?.id ?? "";
            for (let read = 0; read < 3; read++) assert.equal((await datastore(server, id)).state, "CREATING");
            assert.equal(
                server.operation(location.split("/").pop() ?? "")?.state,
                "INITIALIZED",
                "peeking does not poll",
            );
            assert.equal((await operation(server, location)).state, "SUCCEEDED");
            assert.equal((await datastore(server, id)).state, "OK");
        });
    });

    describe("task failures", () => {
        it("fails a create as a task fault says: FAILED with the message, datastore ERROR", async () => {
            server.addFault({ match: { method: "POST" }, fault: { task: { fails: "the array is full" } } });
            const location = await create(server);
            server.advanceClock(2000);
            const op = await operation(server, location);
            assert.equal(op.state, "FAILED");
            assert.equal(op.progressPercent, 100);
            assert.deepEqual(op.error, { errorCode: "INJECTED_FAILURE", message: "the array is full" });
            assert.equal(op.logMessages.at(-1)?.message, "Create datastore ds19 failed: the array is full");
            const failed = await datastore(server, datastoreIdOf(op));
            assert.equal(failed.state, "ERROR");
            assert.equal(failed.generation, 2);
        });

        it("leaves the size and returns to OK when a resize fails", async () => {
            const ready = await createReady(server);
            server.addFault({ fault: { task: { fails: "no" } } });
            const reply = await call(server, "PATCH", `${DATASTORES}/${ready.id}`, { body: { sizeInBytes: 32 * GIB } });
            server.advanceClock(2000);
            assert.equal((await operation(server, reply.headers.location ?? "")).state, "FAILED");
            const after = await datastore(server, ready.id);
            assert.equal(after.state, "OK");
            assert.equal(after.capacityInBytes, 16 * GIB);
        });

        it("keeps the datastore, back in its state, when a delete fails", async () => {
            const ready = await createReady(server);
            server.addFault({ fault: { task: { fails: "in use" } } });
            const reply = await call(server, "DELETE", `${DATASTORES}/${ready.id}`);
            server.advanceClock(2000);
            assert.equal((await operation(server, reply.headers.location ?? "")).state, "FAILED");
            assert.equal((await datastore(server, ready.id)).state, "OK");
        });

        it("fails tasks at the server's failureRate, reproducibly with a seed", async () => {
            await start({ failureRate: 1 });
            const op = await operation(server, await create(server));
            server.advanceClock(2000);
            const failed = await operation(server, `${OPERATIONS}/${op.id}`);
            assert.equal(failed.error?.errorCode, "SIMULATED_FAILURE");
            assert.match(failed.error?.message ?? "", /simulated failure \(the server fails 100% of tasks\)/);

            const outcomes = async (seed: number): Promise<string[]> => {
                await start({ failureRate: 0.5, seed, taskDurationMs: 0 });
                const states: string[] = [];
                for (let n = 0; n < 16; n++)
                    states.push((await operation(server, await create(server, `d${n}`))).state);
                return states;
            };
            const first = await outcomes(42);
            assert.deepEqual(await outcomes(42), first);
            assert.ok(first.includes("FAILED") && first.includes("SUCCEEDED"), first.join());
            assert.notDeepEqual(await outcomes(7), first);
        });

        it("shapes a task's duration or polls per request", async () => {
            server.addFault({ fault: { task: { durationMs: 60_000 } } });
            server.addFault({ fault: { task: { completeAfterPolls: 2, fails: "late failure" } } });
            const slow = await create(server, "slow");
            const polled = await create(server, "polled");
            server.advanceClock(59_999);
            assert.equal((await operation(server, slow)).state, "RUNNING");
            server.advanceClock(1);
            assert.equal((await operation(server, slow)).state, "SUCCEEDED");
            assert.equal(
                (await operation(server, polled)).state,
                "INITIALIZED",
                "the clock does not end a polled task",
            );
            const failed = await operation(server, polled);
            assert.equal(failed.state, "FAILED");
            assert.deepEqual(failed.error, { errorCode: "INJECTED_FAILURE", message: "late failure" });
        });
    });

    describe("injected faults", () => {
        it("answers a status fault at once, doing nothing, with Retry-After when given", async () => {
            server.addFault({
                match: { method: "POST", path: DATASTORES },
                fault: { status: 503, retryAfterSeconds: 7 },
            });
            const reply = await call(server, "POST", DATASTORES, { body: createRequest(), key: "k" });
            assertError(reply, 503, "service_unavailable", /injected fault.*nothing was done/);
            assert.equal(reply.headers["retry-after"], "7");
            assert.equal(server.stats().datastoresCreated, 0);
            const retry = await call(server, "POST", DATASTORES, { body: createRequest(), key: "k" });
            assert.equal(retry.status, 202, "the rule was used up, and the key was not remembered");
        });

        it("answers 429 with Retry-After (1 s unless given), 500, 502 and 504", async () => {
            server.addFault({ fault: { status: 429 } });
            server.addFault({ fault: { status: 429, retryAfterSeconds: 3 } });
            server.addFault({ fault: { status: 500 } });
            server.addFault({ fault: { status: 502 } });
            server.addFault({ fault: { status: 504 } });
            const first = await call(server, "GET", DATASTORES);
            assertError(first, 429, "rate_limited");
            assert.equal(first.headers["retry-after"], "1");
            assert.equal((await call(server, "GET", DATASTORES)).headers["retry-after"], "3");
            const internal = await call(server, "GET", DATASTORES);
            assertError(internal, 500, "internal_error");
            assert.equal(internal.headers["retry-after"], undefined);
            assertError(await call(server, "GET", DATASTORES), 502, "bad_gateway");
            assertError(await call(server, "GET", DATASTORES), 504, "gateway_timeout");
            assert.equal((await call(server, "GET", DATASTORES)).status, 200);
        });

        it("applies a rule `times` times, only to requests it matches, oldest rule first", async () => {
            server.addFault({ match: { method: "post", path: "/virtualization/" }, times: 2, fault: { status: 503 } });
            server.addFault({ match: { method: "POST" }, fault: { status: 500 } });
            assert.equal((await call(server, "GET", DATASTORES)).status, 200, "GET does not match");
            assert.equal((await call(server, "POST", DATASTORES, { body: createRequest() })).status, 503);
            assert.deepEqual(
                server.faults().map((rule) => rule.remaining),
                [1, 1],
            );
            assert.equal((await call(server, "POST", DATASTORES, { body: createRequest() })).status, 503);
            assert.equal((await call(server, "POST", DATASTORES, { body: createRequest() })).status, 500);
            assert.equal((await call(server, "POST", DATASTORES, { body: createRequest() })).status, 202);
            assert.deepEqual(server.faults(), []);
        });

        it("drops the connection without an answer, doing nothing", async () => {
            server.addFault({ fault: { drop: true } });
            await assert.rejects(
                call(server, "POST", DATASTORES, { body: createRequest(), key: "k" }),
                /socket hang up|ECONNRESET/,
            );
            assert.equal(server.stats().datastoresCreated, 0);
            const [entry] = server.requests();
            assert.equal(entry?.status, null);
            assert.deepEqual(entry?.fault, { drop: true });
            assert.equal(entry?.idempotencyKey, "k");
        });

        it("loses the answer after doing the work; a retry with the same key gets the same Location", async () => {
            server.addFault({ match: { method: "POST" }, fault: { loseResponse: true } });
            await assert.rejects(
                call(server, "POST", DATASTORES, { body: createRequest(), key: "k" }),
                /socket hang up|ECONNRESET/,
            );
            assert.equal(server.stats().datastoresCreated, 1, "the client never heard, but the datastore exists");
            const [created] = server.datastores();
            assert.equal(created?.state, "CREATING");
            const retry = await call(server, "POST", DATASTORES, { body: createRequest(), key: "k" });
            assert.equal(retry.status, 202);
            assert.equal(server.stats().datastoresCreated, 1);
            assert.equal(
                server.operation(retry.headers.location?.split("/").pop() ?? "")?.associatedResources[0]?.resourceUri,
                `${DATASTORES}/${created?.id}`,
            );
            assert.deepEqual(
                server.requests().map((entry) => entry.status),
                [null, 202],
            );
        });

        it("loses a poll's answer but counts the poll", async () => {
            await start({ taskCompleteAfterPolls: 2 });
            const location = await create(server);
            server.addFault({ match: { method: "GET", path: OPERATIONS }, fault: { loseResponse: true } });
            await assert.rejects(call(server, "GET", location));
            assert.equal((await operation(server, location)).state, "SUCCEEDED");
        });

        it("answers late after doing the work", async () => {
            let release: () => void = () => undefined;
            let slept: (ms: number) => void = () => undefined;
            const sleeping = new Promise<number>((resolve) => {
                slept = resolve;
            });
            await start({
                sleep: (ms) => {
                    slept(ms);
                    return new Promise((resolve) => {
                        release = resolve;
                    });
                },
            });
            server.addFault({ fault: { delayMs: 30_000 } });
            let answered = false;
            const pending = call(server, "POST", DATASTORES, { body: createRequest() }).then((reply) => {
                answered = true;
                return reply;
            });
            assert.equal(await sleeping, 30_000);
            assert.equal(server.stats().datastoresCreated, 1, "the work is done before the delay");
            assert.equal(answered, false);
            release();
            assert.equal((await pending).status, 202);
        });

        it("answers a body that is not JSON, keeping the status and Location", async () => {
            server.addFault({ match: { method: "POST" }, fault: { invalidJson: true } });
            const reply = await call(server, "POST", DATASTORES, { body: createRequest() });
            assert.equal(reply.status, 202);
            assert.match(reply.headers.location ?? "", LOCATION);
            assert.throws(() => JSON.parse(reply.text));
            assert.ok(reply.text.length > 0);
            server.addFault({ fault: { invalidJson: true } });
            const list = await call(server, "GET", DATASTORES);
            assert.equal(list.status, 200);
            assert.throws(() => JSON.parse(list.text));
        });

        it("answers 202 without Location, only to requests that create a task", async () => {
            server.addFault({ fault: { omitLocation: true } });
            assert.equal((await call(server, "GET", DATASTORES)).status, 200);
            assert.equal(server.faults().length, 1, "a GET cannot use the rule up");
            const reply = await call(server, "POST", DATASTORES, { body: createRequest() });
            assert.equal(reply.status, 202);
            assert.equal(reply.headers.location, undefined);
            assert.match((reply.json as TaskAccepted).taskUri, LOCATION);
        });

        it("reports an unknown task state, only on GETs of operations", async () => {
            server.addFault({ times: 2, fault: { taskState: "PAUSED" } });
            const location = await create(server);
            assert.equal(server.faults()[0]?.remaining, 2, "the POST did not use it");
            assert.equal((await operation(server, location)).state, "PAUSED");
            assert.equal((await operation(server, location)).state, "PAUSED");
            assert.equal((await operation(server, location)).state, "INITIALIZED");
        });

        it("applies a task fault only to requests that create a task", async () => {
            server.addFault({ fault: { task: { fails: "x" } } });
            await call(server, "GET", DATASTORES);
            assertError(await call(server, "GET", `${OPERATIONS}/nope`), 404, "not_found");
            assert.equal(server.faults().length, 1);
        });

        it("refuses invalid fault rules from code with an ApiError naming the field", () => {
            const invalid: [unknown, RegExp][] = [
                [{}, /fault is required/],
                [{ fault: {} }, /exactly one of status, drop/],
                [{ fault: { drop: true, status: 503 } }, /it has drop and status/],
                [{ fault: { status: 404 } }, /fault.status must be one of 429, 500, 502, 503, 504, not 404/],
                [{ fault: { drop: false } }, /fault.drop must be true/],
                [{ fault: { delayMs: -1 } }, /fault.delayMs must be at least 0/],
                [
                    { fault: { invalidJson: true, retryAfterSeconds: 1 } },
                    /retryAfterSeconds goes only with fault.status/,
                ],
                [{ fault: { task: {} } }, /fault.task needs fails, durationMs or completeAfterPolls/],
                [{ fault: { task: { durationMs: 1, completeAfterPolls: 1 } } }, /not both/],
                [{ fault: { task: { completeAfterPolls: 0 } } }, /fault.task.completeAfterPolls must be at least 1/],
                [{ fault: { task: { fails: 1 } } }, /fault.task.fails must be a string/],
                [{ fault: { task: { hang: true } } }, /fault.task.hang: unknown field/],
                [{ fault: { taskState: "" } }, /must not be empty/],
                [{ match: { path: "virtualization" }, fault: { drop: true } }, /match.path must start with "\/"/],
                [{ match: { verb: "GET" }, fault: { drop: true } }, /match.verb: unknown field/],
                [{ times: 0, fault: { drop: true } }, /times must be at least 1/],
            ];
            for (const [rule, message] of invalid) {
                assert.throws(
                    () => server.addFault(rule as never),
                    (error: unknown) =>
                        error instanceof ApiError && error.status === 400 && message.test(error.message),
                    JSON.stringify(rule),
                );
            }
            assert.deepEqual(server.faults(), []);
        });
    });

    describe("per-server faults", () => {
        it("rate-limits with a token bucket on the server's clock: 429 with Retry-After, then room again", async () => {
            await start({ rateLimit: { perSecond: 2 } });
            assert.equal((await call(server, "GET", DATASTORES)).status, 200);
            assert.equal((await call(server, "GET", DATASTORES)).status, 200);
            const limited = await call(server, "POST", DATASTORES, { body: createRequest() });
            assertError(limited, 429, "rate_limited", /more than 2 requests a second/);
            assert.equal(limited.headers["retry-after"], "1");
            assert.equal(server.stats().datastoresCreated, 0);
            server.advanceClock(500);
            assert.equal((await call(server, "GET", DATASTORES)).status, 200);
            assert.equal((await call(server, "GET", DATASTORES)).status, 429);
            assert.equal((await call(server, "GET", "/_test/stats")).status, 200, "the test API is not limited");
        });

        it("adds latency before every answer, but not to the test API", async () => {
            await start({ latencyMs: 250 });
            await call(server, "GET", DATASTORES);
            await create(server);
            assertError(await call(server, "GET", "/nowhere"), 404, "not_found");
            await call(server, "GET", "/_test/requests");
            assert.deepEqual(sleeps, [250, 250, 250]);
        });
    });

    describe("test control API", () => {
        it("adds, lists and clears fault rules over HTTP", async () => {
            const added = await call(server, "POST", "/_test/faults", {
                body: {
                    match: { method: "POST", path: DATASTORES },
                    times: 2,
                    fault: { status: 503, retryAfterSeconds: 2 },
                },
            });
            assert.equal(added.status, 201, added.text);
            const rule = added.json as FaultRule;
            assert.deepEqual(rule, {
                id: rule.id,
                match: { method: "POST", path: DATASTORES },
                remaining: 2,
                probability: 1,
                fault: { status: 503, retryAfterSeconds: 2 },
            });
            assert.deepEqual((await call(server, "GET", "/_test/faults")).json, { items: [rule] });
            assert.equal((await call(server, "POST", DATASTORES, { body: createRequest() })).status, 503);
            assert.deepEqual((await call(server, "DELETE", "/_test/faults")).json, { cleared: 1 });
            assert.equal((await call(server, "POST", DATASTORES, { body: createRequest() })).status, 202);
        });

        it("answers 400 naming the field for an invalid rule, 415 for a non-JSON one", async () => {
            assertError(
                await call(server, "POST", "/_test/faults", { body: { fault: { status: 418 } } }),
                400,
                "bad_request",
                /fault.status must be one of/,
            );
            assertError(
                await call(server, "POST", "/_test/faults", { raw: "x", headers: { "Content-Type": "text/plain" } }),
                415,
                "unsupported_media_type",
            );
        });

        it("logs every request with its status, key, fault and time, but not its own", async () => {
            server.addFault({ match: { method: "GET" }, fault: { status: 503 } });
            await call(server, "GET", `${DATASTORES}?filter=name+eq+x`);
            await create(server, "ds19", { key: "k-1" });
            await call(server, "GET", DATASTORES, { auth: null });
            await call(server, "GET", "/_test/stats");
            await call(server, "GET", "/_test/stats", { auth: null });
            const log = (await call(server, "GET", "/_test/requests")).json as RequestLogList;
            assert.equal(log.count, 3);
            assert.deepEqual(log.items, [
                {
                    seq: 1,
                    method: "GET",
                    path: DATASTORES,
                    query: "filter=name+eq+x",
                    status: 503,
                    fault: { status: 503 },
                    at: "2030-01-01T00:00:00.000Z",
                },
                {
                    seq: 2,
                    method: "POST",
                    path: DATASTORES,
                    status: 202,
                    idempotencyKey: "k-1",
                    at: "2030-01-01T00:00:00.000Z",
                },
                { seq: 3, method: "GET", path: DATASTORES, status: 401, at: "2030-01-01T00:00:00.000Z" },
            ]);
            assert.deepEqual(server.requests(), log.items);
            assert.deepEqual((await call(server, "DELETE", "/_test/requests")).json, { cleared: 3 });
            assert.deepEqual(server.requests(), []);
        });

        it("moves the clock and reports counters", async () => {
            const location = await create(server);
            const moved = await call(server, "POST", "/_test/clock", { body: { advanceMs: 2000 } });
            assert.deepEqual(moved.json, { now: "2030-01-01T00:00:02.000Z" });
            assert.equal((await operation(server, location)).state, "SUCCEEDED");
            assertError(
                await call(server, "POST", "/_test/clock", { body: { advanceMs: -5 } }),
                400,
                "bad_request",
                /advanceMs must be at least 0/,
            );
            const stats = (await call(server, "GET", "/_test/stats")).json as TaskApiStats;
            assert.deepEqual(stats, {
                datastoresCreated: 1,
                tasksCreated: 1,
                datastores: 1,
                dataFileWrites: 0,
                requests: 2,
            });
        });

        it("answers 405 with Allow and 404 for unknown control routes", async () => {
            const reply = await call(server, "PUT", "/_test/faults");
            assertError(reply, 405, "method_not_allowed");
            assert.equal(reply.headers.allow, "GET, POST, DELETE");
            assertError(await call(server, "GET", "/_test/nothing"), 404, "not_found");
        });

        it("is absent unless enabled, while faults still work from code", async () => {
            await start({ testApi: false });
            assertError(await call(server, "GET", "/_test/requests"), 404, "not_found");
            assertError(
                await call(server, "POST", "/_test/faults", { body: { fault: { drop: true } } }),
                404,
                "not_found",
            );
            server.addFault({ fault: { status: 500 } });
            assert.equal((await call(server, "GET", DATASTORES)).status, 500);
        });
    });

    describe("robustness", () => {
        it("answers 413 to a body above 1 MB and keeps serving", async () => {
            const huge = JSON.stringify({ ...createRequest(), name: "x".repeat(1024 * 1024) });
            const reply = await call(server, "POST", DATASTORES, {
                raw: huge,
                headers: { "Content-Type": "application/json" },
            });
            assertError(reply, 413, "payload_too_large", /larger than 1048576 bytes/);
            assert.equal(server.stats().datastoresCreated, 0);
            await create(server);
        });

        it("answers 400 to malformed HTTP and keeps serving", async () => {
            const raw = await new Promise<string>((resolve, reject) => {
                const socket = connect(server.port, "127.0.0.1", () => socket.write("NONSENSE\r\n\r\n"));
                let text = "";
                socket.on("data", (chunk) => {
                    text += chunk.toString();
                });
                socket.on("end", () => resolve(text));
                socket.on("error", reject);
            });
            assert.match(raw, /^HTTP\/1\.1 400 Bad Request/);
            assert.match(raw, /"error":"bad_request"/);
            assert.equal((await call(server, "GET", DATASTORES)).status, 200);
        });

        it("survives a client that disconnects mid-body", async () => {
            await new Promise<void>((resolve) => {
                const socket = connect(server.port, "127.0.0.1", () => {
                    socket.write(
                        `POST ${DATASTORES} HTTP/1.1\r\nHost: x\r\nAuthorization: ${server.authorization}\r\n`,
                    );
                    socket.write('Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":');
                    socket.destroy();
                    resolve();
                });
            });
            assert.equal((await call(server, "GET", DATASTORES)).status, 200);
            assert.equal(server.stats().datastoresCreated, 0);
        });

        it("answers hostile requests with JSON errors and keeps serving", async () => {
            const json = { "Content-Type": "application/json" };
            const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
            const replies = [
                await call(server, "PROPFIND", DATASTORES),
                await call(server, "GET", "/%00/../../etc/passwd"),
                await call(server, "GET", `${DATASTORES}/${"%".repeat(50)}`),
                await call(server, "POST", DATASTORES, { raw: deep, headers: json }),
                await call(server, "POST", DATASTORES, { raw: `{"name":"\u0000"}`, headers: json }),
                await call(server, "POST", DATASTORES, { raw: Buffer.from([0xff, 0xfe, 0x00]), headers: json }),
                await call(server, "PATCH", `${DATASTORES}/x`, { raw: "[]", headers: json }),
                await call(server, "GET", `${DATASTORES}?filter=${"name eq a and ".repeat(500)}name eq a`),
                await call(server, "GET", DATASTORES, { headers: { "X-Long": "x".repeat(20_000) } }),
            ];
            for (const reply of replies) {
                assert.ok(
                    (reply.status >= 400 && reply.status < 500) || reply.status === 200,
                    `${reply.status} ${reply.text}`,
                );
                assert.equal(typeof (reply.json as ErrorBody | DatastoreList), "object", reply.text);
            }
            assert.deepEqual(
                replies.map((reply) => reply.status),
                [405, 404, 404, 400, 400, 400, 400, 200, 400],
            );
            const flood = Buffer.alloc(65 * 1024 * 1024, 0x20);
            await call(server, "POST", DATASTORES, { raw: flood, headers: json }).catch(() => undefined);
            assert.equal((await call(server, "GET", DATASTORES)).status, 200);
            assert.equal(server.stats().datastoresCreated, 0);
        });

        it("answers concurrent creates of one name with exactly one 202", async () => {
            const replies = await Promise.all(
                Array.from({ length: 20 }, () => call(server, "POST", DATASTORES, { body: createRequest() })),
            );
            assert.deepEqual(replies.map((reply) => reply.status).sort(), [202, ...Array(19).fill(409)]);
        });

        it("answers concurrent retries of one key with one Location", async () => {
            const replies = await Promise.all(
                Array.from({ length: 20 }, () =>
                    call(server, "POST", DATASTORES, { body: createRequest(), key: "same" }),
                ),
            );
            assert.equal(new Set(replies.map((reply) => reply.headers.location)).size, 1);
            assert.equal(server.stats().datastoresCreated, 1);
        });

        it("closes idempotently, cutting answers still delayed", async () => {
            await start({
                sleep: (_ms, signal) =>
                    new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason))),
            });
            server.addFault({ fault: { delayMs: 60_000 } });
            const pending = call(server, "POST", DATASTORES, { body: createRequest() });
            while (server.stats().datastoresCreated === 0) await new Promise((resolve) => setImmediate(resolve));
            await Promise.all([server.close(), server.close()]);
            await assert.rejects(pending);
            await assert.rejects(call(server, "GET", DATASTORES), /ECONNREFUSED/);
        });

        it("refuses invalid options", async () => {
            await assert.rejects(startTaskApiServer({ failureRate: 2 }), /failureRate must be in \[0, 1\]/);
            await assert.rejects(startTaskApiServer({ port: -1 }), /port must be/);
            await assert.rejects(startTaskApiServer({ token: "has space" }), /token must be printable/);
            await assert.rejects(startTaskApiServer({ taskCompleteAfterPolls: 0 }), /taskCompleteAfterPolls/);
            await assert.rejects(startTaskApiServer({ rateLimit: { perSecond: 0 } }), /rateLimit/);
        });
    });
});
