// The hook that lets an operation hear the engine's call (its URN, its customTimeouts entry), on a real
// @grpc/grpc-js server serving the provider service as the SDK's dynamic-provider server does, called
// by a real gRPC client as the engine calls it.

import { strict as assert } from "node:assert";
import { dirname } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { currentEngineCall, type EngineCall, engineCallOf, hearEngineCalls } from "../../provider/shared/engineCalls";

const URN = "urn:pulumi:dev::proj::pulumi-nodejs:dynamic/tasks:Datastore::ds19";

/** A server class of its own, so the hook changes no other gRPC server of the test process. */
class ProviderServer extends grpc.Server {}

/** Serves the provider service; Create and Delete record the engine call their handler runs under. */
async function serve(
    heard: Array<EngineCall | undefined>,
): Promise<{ client: provrpc.ResourceProviderClient; close(): void }> {
    const server = new ProviderServer();
    const record = async (): Promise<void> => {
        // After an await, as the SDK's handler reaches the provider's create.
        await Promise.resolve();
        heard.push(currentEngineCall());
    };
    server.addService(provrpc.ResourceProviderService, {
        create: (_call: unknown, callback: grpc.sendUnaryData<provproto.CreateResponse>) => {
            void record().then(() => {
                const response = new provproto.CreateResponse();
                response.setId("x");
                callback(null, response);
            });
        },
        delete: (_call: unknown, callback: grpc.sendUnaryData<Empty>) => {
            void record().then(() => callback(null, new Empty()));
        },
    } as unknown as provrpc.IResourceProviderServer);
    const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
            error ? reject(error) : resolve(bound),
        ),
    );
    const client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return {
        client,
        close: () => {
            client.close();
            server.forceShutdown();
        },
    };
}

function create(client: provrpc.ResourceProviderClient, timeoutSeconds: number): Promise<void> {
    const request = new provproto.CreateRequest();
    request.setUrn(URN);
    request.setTimeout(timeoutSeconds);
    return new Promise((resolve, reject) => client.create(request, (error) => (error ? reject(error) : resolve())));
}

function remove(client: provrpc.ResourceProviderClient): Promise<void> {
    const request = new provproto.DeleteRequest();
    request.setUrn(URN);
    request.setId("x");
    return new Promise((resolve, reject) => client.delete(request, (error) => (error ? reject(error) : resolve())));
}

describe("hearing the engine's calls (customTimeouts and the URN, which the SDK's server drops)", () => {
    it("reads a request's URN and timeout; a timeout of 0 (none set) is no timeout", () => {
        const request = new provproto.CreateRequest();
        request.setUrn(URN);
        request.setTimeout(5);
        assert.deepEqual(engineCallOf("Create", request), { method: "Create", urn: URN, timeoutMs: 5000 });
        request.setTimeout(0);
        assert.deepEqual(engineCallOf("Create", request), { method: "Create", urn: URN });
        assert.deepEqual(engineCallOf("Check", undefined), { method: "Check" });
    });

    it("a call retrieved before the hook is not heard; every call after it is, each with its own URN and timeout", async () => {
        const heard: Array<EngineCall | undefined> = [];
        const { client, close } = await serve(heard);
        try {
            await create(client, 5);
            assert.deepEqual(heard, [undefined], "without the hook the handler hears nothing");

            assert.equal(hearEngineCalls(ProviderServer.prototype as never), true);
            assert.equal(hearEngineCalls(ProviderServer.prototype as never), true, "installing twice changes nothing");
            await Promise.all([create(client, 5), create(client, 90), remove(client)]);
            assert.deepEqual(
                (heard.slice(1) as Array<EngineCall | undefined>).sort(
                    (a, b) => (a?.timeoutMs ?? 0) - (b?.timeoutMs ?? 0),
                ),
                [
                    { method: "Delete", urn: URN },
                    { method: "Create", urn: URN, timeoutMs: 5000 },
                    { method: "Create", urn: URN, timeoutMs: 90_000 },
                ],
            );
            assert.equal(currentEngineCall(), undefined, "nothing leaks out of a call");
        } finally {
            close();
        }
    });

    it("answers false where the server has no handler lookup to wrap (another gRPC library)", () => {
        assert.equal(hearEngineCalls({}), false);
    });

    it("the @grpc/grpc-js that @pulumi/pulumi resolves still looks handlers up by path (the hook's one assumption)", () => {
        const sdkGrpc = require(
            require.resolve("@grpc/grpc-js", { paths: [dirname(require.resolve("@pulumi/pulumi"))] }),
        ) as typeof grpc;
        const prototype = sdkGrpc.Server.prototype as unknown as Record<string, unknown>;
        assert.equal(typeof prototype._retrieveHandler, "function");
    });
});
