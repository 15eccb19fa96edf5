// Guards how a provider process hears the engine's Cancel (the first Ctrl-C), which the SDK's
// dynamic-provider server answers as a no-op: a real gRPC server in this process, a real Cancel call
// from a real gRPC client, observed without touching the server's own handling of it.

import { strict as assert } from "node:assert";
import * as grpc from "@grpc/grpc-js";
import { CANCEL_PATH, onEngineCancel } from "../../provider/shared/engineCancel";

const passThrough = (value: Buffer) => value;

describe("the engine's Cancel", () => {
    let server: grpc.Server;
    let port: number;
    let answered: number;

    beforeEach(async () => {
        answered = 0;
        server = new grpc.Server();
        server.addService(
            {
                cancel: {
                    path: CANCEL_PATH,
                    requestStream: false,
                    responseStream: false,
                    requestSerialize: passThrough,
                    requestDeserialize: passThrough,
                    responseSerialize: passThrough,
                    responseDeserialize: passThrough,
                },
            },
            {
                cancel: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => {
                    answered++;
                    callback(null, Buffer.alloc(0));
                },
            },
        );
        port = await new Promise<number>((resolve, reject) =>
            server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
                error ? reject(error) : resolve(bound),
            ),
        );
    });
    afterEach(() => server.forceShutdown());

    function callCancel(): Promise<void> {
        const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
        return new Promise<void>((resolve, reject) =>
            client.makeUnaryRequest(CANCEL_PATH, passThrough, passThrough, Buffer.alloc(0), (error) => {
                client.close();
                if (error) reject(error);
                else resolve();
            }),
        ).finally(() => client.close());
    }

    it("is heard on the process's gRPC server, which still answers it as before", async () => {
        let heard = 0;
        assert.equal(
            onEngineCancel(() => heard++),
            true,
            "found the gRPC server among the process's handles",
        );
        await callCancel();
        assert.equal(heard, 1);
        assert.equal(answered, 1, "the server's own handler ran");
    });

    it("answers false when the process serves no gRPC, so only SIGINT interrupts", () => {
        assert.equal(
            onEngineCancel(() => undefined, []),
            false,
        );
    });
});
