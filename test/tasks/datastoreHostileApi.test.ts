// Guards, through the real dynamic-provider process, what a task API that breaks its contract can do to a
// tasks.Datastore (issue 18): a delete task that reports success while the datastore stays makes Delete
// fail (so the engine keeps the resource in state); a 400 or 409 to the create with a body nested 100,000
// levels is a definite answer, not a pending create; an answer whose body dribbles one byte a second after
// its headers neither keeps the process alive after SIGINT nor keeps the create from answering the
// engine's Cancel. The API is a hand-made node:http server on port 0; for the dribble, the provider
// process collects garbage often (test/tasks/collectGarbageOften.js), as a long-running one does.

import { strict as assert } from "node:assert";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../provider/tasks/protocol/wire";
import {
    CLUSTER,
    type DatastoreFixture,
    datastoreFixture,
    datastoreId,
    GIB,
    HCI,
    TOKEN,
} from "../support/datastoreFixture";
import { type EngineLogServer, startEngineLogServer } from "../support/engineLogServer";
import { makeProject, type TempDir } from "../support/projects";
import { type Props, ProviderCallError, ProviderServer } from "../support/providerServer";
import { providerTextOf } from "../support/providerTextOf";
import { closeHostileApis, hostileApi, json, list, operation, pathOf, record } from "./io/hostileApi";

const URN = "urn:pulumi:dev::datastore-test::pulumi-nodejs:dynamic/tasks:Datastore::ds19";
const DEEP = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
/** Datastore "ds19" as the API answers it, in the fixture's clusters. */
const DS19 = record({ hciClusterUuid: HCI, clusterInfo: { id: CLUSTER } });

/** The error of a call that must fail. */
async function failure(call: Promise<unknown>): Promise<ProviderCallError> {
    const error = await call.then(
        () => assert.fail("the call succeeded"),
        (e: unknown) => e,
    );
    assert.ok(error instanceof ProviderCallError, String(error));
    return error;
}

describe("tasks.Datastore through the provider process, against a task API that breaks its contract (issue 18)", () => {
    let f: DatastoreFixture;
    afterEach(async () => {
        await f?.close();
        await closeHostileApis();
    });

    /** The fixture's provider, pointed at `url` instead of the bundled server. */
    async function pointedAt(url: string): Promise<void> {
        f = await datastoreFixture();
        await f.provider.configure({ "pulumi-lifecycle:taskApiUrl": url, "pulumi-lifecycle:taskApiToken": TOKEN });
    }

    it("a delete task that reports success while the datastore stays: Delete fails, so the engine keeps it", async () => {
        const task = `${ASYNC_OPERATIONS_PATH}/t-del`;
        const api = await hostileApi((request, response) => {
            if (request.method === "DELETE") json(response, 202, { taskUri: task }, { location: task });
            else if (pathOf(request.url) === task) json(response, 200, operation("t-del", "SUCCEEDED"));
            else json(response, 200, DS19);
        });
        await pointedAt(api.url);
        const state = { ...(await f.args("ds19")), datastoreId: "d1", state: "OK", tainted: false };
        const error = await failure(f.provider.delete(URN, datastoreId("ds19"), state));
        assert.match(
            error.details,
            /the API said the delete \(operation t-del\) ended well, but the resource still exists\. It stays in the stack's state;/,
        );
        assert.equal(error.initFailure, undefined);
    });

    for (const [status, expected] of [
        [409, /datastore "ds19" .* already exists \(id d1, OK/],
        [
            400,
            /answered POST \/virtualization\/v1beta1\/datastores with 400: Bad Request \(the body is nested deeper than 64 levels/,
        ],
    ] as const) {
        it(`a ${status} to the create with a body nested 100,000 levels: a definite failure, not a pending create`, async () => {
            let lists = 0;
            const api = await hostileApi((request, response) => {
                // The list shows the datastore only after the POST (it lags), so the 409 path is taken.
                if (request.method === "GET") json(response, 200, list(lists++ === 0 ? [] : [DS19]));
                else json(response, status, DEEP);
            });
            await pointedAt(api.url);
            const error = await failure(f.create("ds19", { createToken: "tok-deep" }));
            assert.match(error.details, expected);
            assert.doesNotMatch(error.details, /RangeError|call stack/);
            assert.equal(error.initFailure, undefined, "not recorded as a pending create");
            assert.equal(api.received.filter((request) => request.method === "POST").length, 1);
        });
    }

    describe("an answer whose body dribbles after its headers", () => {
        let provider: ProviderServer;
        let engine: EngineLogServer;
        let project: TempDir;
        let dribbler: Server;
        let dribbling: Promise<void>;

        beforeEach(async () => {
            let started = (): void => undefined;
            dribbling = new Promise((resolve) => {
                started = resolve;
            });
            dribbler = createServer((request, response) => {
                request.resume();
                if (request.method === "GET" && pathOf(request.url ?? "") === DATASTORES_PATH) {
                    json(response, 200, list([]));
                    return;
                }
                response.writeHead(202, { "content-type": "application/json" });
                response.write("{");
                const timer = setInterval(() => {
                    response.write(" ");
                    started();
                }, 1000);
                response.on("close", () => clearInterval(timer));
            });
            dribbler.listen(0, "127.0.0.1");
            await once(dribbler, "listening");
            engine = await startEngineLogServer();
            project = await makeProject("datastore-test");
            provider = await ProviderServer.start({
                projectDir: project.dir,
                engineAddress: engine.address,
                nodeArgs: ["--expose-gc", "-r", join(__dirname, "collectGarbageOften.js")],
            });
            await provider.configure({
                "pulumi-lifecycle:taskApiUrl": `http://127.0.0.1:${(dribbler.address() as AddressInfo).port}`,
                "pulumi-lifecycle:taskApiToken": TOKEN,
            });
        });
        afterEach(async () => {
            await provider.stop();
            await engine.close();
            dribbler.closeAllConnections();
            dribbler.close();
            await project.cleanup();
        });

        /** Starts a create whose POST answer dribbles; resolves once the body is dribbling, with the create's error. */
        async function createDribbling(): Promise<{ create: Promise<ProviderCallError> }> {
            const inputs = {
                __provider: providerTextOf("tasks:Datastore"),
                hciClusterUuid: HCI,
                clusterId: CLUSTER,
                name: "ds19",
                sizeInBytes: 16 * GIB,
                datastoreType: "VMFS",
                createToken: "tok-dribble",
            };
            const checked = await provider.check(URN, {}, inputs);
            const create = failure(provider.create(URN, checked.inputs as Props));
            await dribbling;
            return { create };
        }

        it("SIGINT: the create answers as a pending create and the process exits", async () => {
            const { create } = await createDribbling();
            provider.kill("SIGINT");
            const error = await create;
            assert.equal(await provider.waitForExit(), 130);
            assert.equal(error.initFailure?.properties.tainted, false);
            assert.equal(error.initFailure?.properties.datastoreId, undefined);
            assert.match(String(error.initFailure?.reasons), /outcome is unknown/);
        });

        it("the engine's Cancel: the create answers as a pending create", async () => {
            const { create } = await createDribbling();
            const client = (provider as unknown as { client: provrpc.ResourceProviderClient }).client;
            await new Promise<void>((resolve, reject) =>
                client.cancel(new Empty(), (error) => (error ? reject(error) : resolve())),
            );
            const error = await create;
            assert.equal(error.initFailure?.properties.tainted, false);
            assert.match(String(error.initFailure?.reasons), /outcome is unknown/);
        });
    });
});
