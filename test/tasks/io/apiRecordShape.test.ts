// Guards issue 19 §2 (greenlake): tasks.Datastore speaks the datastore API in the shapes the real API
// uses, as HPE's own provider (hpegl-pcbe-terraform-resources) reads and writes them. A refresh of a
// datastore whose record is the real one (`capacityInBytes`, not `sizeInBytes`; `clusterInfo {id, name,
// ...}`; `datacentersInfo`; volumes, hosts and whatever else the API adds) records the size as the
// resource's `sizeInBytes`, in outputs the engine can take (a protobuf Struct: an undefined value in them
// is "Unexpected struct type"). A record that lacks what the provider reads is a TaskApiContractError
// naming the field. A create sends the body HPE's provider sends, and ends in full state when the
// operation names its datastore only by `sourceResourceUri` (HPE captured `associatedResources: []` after a
// create), or names none. The Datastore
// lifecycle, as the provider runs it, against hand-made node:http servers on port 0; fake time.

import { strict as assert } from "node:assert";
import { inspect } from "node:util";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import type { DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { TaskApiContractError } from "../../../provider/tasks/errors/taskApiContractError";
import type { RawInputs } from "../../../provider/tasks/logic/datastoreState";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { CLUSTER, datastoreInputs, FakeTime, GIB, HCI, rejection } from "../client/support";
import { closeHostileApis, hostileApi, json, lifecycleOf, pathOf } from "./hostileApi";
import { API_DATASTORE_ID, API_OPERATION_ID, apiList, apiOperation, apiRecord } from "./realShapes";

const ID = `${HCI}/${CLUSTER}/ds19`;
const DATASTORE_ID = API_DATASTORE_ID;
const OPERATION_ID = API_OPERATION_ID;

/** Outputs as the engine receives them: a protobuf Struct, which refuses undefined values. */
function asStruct(outputs: DatastoreOutputs | undefined): Record<string, unknown> {
    assert.ok(outputs, "no outputs");
    return Struct.fromJavaScript(outputs as unknown as Parameters<typeof Struct.fromJavaScript>[0]).toJavaScript();
}

describe("the datastore API in the real API's shapes (issue 19, greenlake)", () => {
    let time: FakeTime;
    beforeEach(() => {
        time = new FakeTime();
    });
    afterEach(async () => {
        await closeHostileApis();
    });

    /** A server whose list and GET answer `answer` for every datastore. */
    async function answering(answer: unknown) {
        return await hostileApi((request, response) => {
            if (pathOf(request.url) === DATASTORES_PATH) json(response, 200, apiList([answer]));
            else json(response, 200, answer);
        });
    }

    describe("refresh", () => {
        it("records the real record's capacityInBytes as sizeInBytes, in outputs the engine can take", async () => {
            const api = await answering(apiRecord());
            const { lifecycle } = lifecycleOf(api.url, time);
            const { id, props } = await lifecycle.read(ID, { ...datastoreInputs(), tainted: false });
            assert.equal(id, ID);
            assert.deepEqual(asStruct(props), {
                hciClusterUuid: HCI,
                clusterId: CLUSTER,
                name: "ds19",
                sizeInBytes: 16 * GIB,
                datastoreType: "VMFS",
                adopt: false,
                untaint: false,
                tainted: false,
                datastoreId: DATASTORE_ID,
                state: "OK",
            });
        });

        it("reads a record of its datastore without clusterInfo.name or datacentersInfo, and with fields it does not know", async () => {
            const { datacentersInfo: _, ...rest } = apiRecord();
            const api = await answering({ ...rest, clusterInfo: { id: CLUSTER }, somethingNew: { nested: [1, 2] } });
            const { props } = await lifecycleOf(api.url, time).lifecycle.read(ID);
            assert.equal(props?.sizeInBytes, 16 * GIB);
            assert.equal(props?.datastoreId, DATASTORE_ID);
        });

        it("refuses a record of the old shape (sizeInBytes, no capacityInBytes) with a contract error naming capacityInBytes", async () => {
            const { capacityInBytes: _, ...rest } = apiRecord();
            const api = await answering({ ...rest, sizeInBytes: 16 * GIB });
            const error = await rejection(lifecycleOf(api.url, time).lifecycle.read(ID));
            assert.ok(error instanceof TaskApiContractError, inspect(error));
            assert.match(
                error.message,
                new RegExp(
                    `answered GET /virtualization/v1beta1/datastores\\?filter=\\S+ with datastore ${DATASTORE_ID} ` +
                        "without a usable `capacityInBytes` \\(there is none; it must be a whole number of bytes \\(the size\\)\\)",
                ),
            );
            assert.match(error.message, /It has `sizeInBytes` instead/);
        });

        const lacking: [
            field: string,
            how: string,
            change: (record: Record<string, unknown>) => void,
            found: RegExp,
        ][] = [
            ["name", "missing", (r) => delete r.name, /there is none/],
            ["hciClusterUuid", "null", (r) => (r.hciClusterUuid = null), /it is null/],
            [
                "clusterInfo.id",
                "missing from clusterInfo",
                (r) => (r.clusterInfo = { name: "5305-CL" }),
                /there is none/,
            ],
            ["clusterInfo.id", "without a clusterInfo", (r) => delete r.clusterInfo, /there is none/],
            ["capacityInBytes", "a string", (r) => (r.capacityInBytes = "16 GiB"), /it is a string/],
            ["capacityInBytes", "a fraction", (r) => (r.capacityInBytes = 1.5), /it is the number 1\.5/],
            ["datastoreType", "a number", (r) => (r.datastoreType = 7), /it is the number 7/],
            ["state", "missing", (r) => delete r.state, /there is none/],
        ];
        for (const [field, how, change, found] of lacking) {
            it(`refuses a record whose ${field} is ${how} with a contract error naming it`, async () => {
                const answer = apiRecord();
                change(answer);
                const api = await answering(answer);
                const error = await rejection(lifecycleOf(api.url, time).lifecycle.read(ID));
                assert.ok(error instanceof TaskApiContractError, inspect(error));
                assert.ok(error.message.includes(`without a usable \`${field}\` (`), error.message);
                assert.match(error.message, found);
                assert.doesNotMatch(error.message, /It has `sizeInBytes` instead/);
            });
        }
    });

    describe("create", () => {
        // HPE captured `associatedResources: []` after a create (FF-31311); its done operation names the
        // datastore by `sourceResourceUri` (async5.json), which the dialect reads at the datastore's own path,
        // as HPE's provider does. An operation naming nothing at all is looked up by the natural key.
        for (const [what, names, read] of [
            ["by sourceResourceUri", true, `GET ${DATASTORES_PATH}/${DATASTORE_ID}`],
            ["nothing", false, `GET ${DATASTORES_PATH}`],
        ] as const) {
            it(`POSTs the body HPE's provider sends, and reads what an operation naming ${what} made`, async () => {
                let created = false;
                let polls = 0;
                const location = `${ASYNC_OPERATIONS_PATH}/${OPERATION_ID}`;
                const api = await hostileApi((request, response) => {
                    const path = pathOf(request.url);
                    if (request.method === "POST") {
                        created = true;
                        // The real API answers the POST with an empty object (create/post-response.json).
                        json(response, 202, {}, { location });
                    } else if (path === location) {
                        const done = polls++ > 0;
                        const answer = apiOperation(done ? "SUCCEEDED" : "RUNNING");
                        json(response, 200, names ? answer : { ...answer, sourceResourceUri: null });
                    } else if (path === DATASTORES_PATH) json(response, 200, apiList(created ? [apiRecord()] : []));
                    else if (created && path === `${DATASTORES_PATH}/${DATASTORE_ID}`) json(response, 200, apiRecord());
                    else json(response, 404, { errorCode: "HPE_GL_ERROR_NOT_FOUND", message: "not found" });
                });
                const { lifecycle } = lifecycleOf(api.url, time);
                const { id, outs } = await lifecycle.create(datastoreInputs({ createToken: "tok-1" }) as RawInputs);
                const posts = api.received.filter((request) => request.method === "POST");
                assert.equal(posts.length, 1);
                assert.deepEqual(JSON.parse(posts[0]?.body ?? ""), {
                    name: "ds19",
                    sizeInBytes: 16 * GIB,
                    storageSystemId: HCI,
                    targetHypervisorClusterId: CLUSTER,
                    datastoreType: "VMFS",
                });
                const requests = api.received.map((request) => `${request.method} ${pathOf(request.url)}`);
                assert.equal(requests.at(-1), read, requests.join(", "));
                assert.equal(id, ID);
                assert.deepEqual(
                    [outs.datastoreId, outs.sizeInBytes, outs.state, outs.tainted, outs.taskId],
                    [DATASTORE_ID, 16 * GIB, "OK", false, OPERATION_ID],
                );
                asStruct(outs);
            });
        }
    });
});
