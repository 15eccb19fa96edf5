// Guards how a provider process hears the engine's Cancel (the first Ctrl-C), which the SDK's
// dynamic-provider server answers as a no-op: a real gRPC server in this process, real Cancel calls
// from real HTTP/2 and gRPC clients, observed without touching the server's own handling of them. Only
// a well-formed gRPC Cancel on the engine's session (one that made another provider call first) counts;
// a Cancel on a fresh session, or anything not a gRPC call, is ignored. (That the real engine's Cancel
// still ends a waiting create: test/realCli/datastoreFlows.test.ts, the Ctrl-C tests.)

import { strict as assert } from "node:assert";
import { connect } from "node:http2";
import * as grpc from "@grpc/grpc-js";
import { CANCEL_PATH, onEngineCancel } from "../../provider/shared/engineCancel";

const passThrough = (value: Buffer) => value;
const PLUGIN_INFO_PATH = "/pulumirpc.ResourceProvider/GetPluginInfo";
const unary = (path: string) => ({
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
});

describe("the engine's Cancel", () => {
    let server: grpc.Server;
    let port: number;
    let answered: number;

    beforeEach(async () => {
        answered = 0;
        server = new grpc.Server();
        server.addService(
            { cancel: unary(CANCEL_PATH), getPluginInfo: unary(PLUGIN_INFO_PATH) },
            {
                cancel: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => {
                    answered++;
                    callback(null, Buffer.alloc(0));
                },
                getPluginInfo: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) =>
                    callback(null, Buffer.alloc(0)),
            },
        );
        port = await new Promise<number>((resolve, reject) =>
            server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
                error ? reject(error) : resolve(bound),
            ),
        );
    });
    afterEach(() => server.forceShutdown());

    /** A gRPC client on one connection, as the engine's (a grpc.ClientConn to 127.0.0.1:<port>). */
    function grpcClient(): { call(path: string): Promise<void>; close(): void } {
        const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
        return {
            call: (path) =>
                new Promise<void>((resolve, reject) =>
                    client.makeUnaryRequest(path, passThrough, passThrough, Buffer.alloc(0), (error) =>
                        error ? reject(error) : resolve(),
                    ),
                ),
            close: () => client.close(),
        };
    }

    /** One request on an HTTP/2 session; resolves with the response's status and grpc-status. */
    function request(
        session: ReturnType<typeof connect>,
        headers: Record<string, string>,
    ): Promise<{ status: unknown; grpcStatus: unknown }> {
        return new Promise((resolve, reject) => {
            const stream = session.request(headers);
            let status: unknown;
            stream.on("response", (response) => {
                status = response[":status"];
            });
            stream.on("trailers", (trailers) => resolve({ status, grpcStatus: trailers["grpc-status"] }));
            stream.on("error", reject);
            stream.on("end", () => resolve({ status, grpcStatus: undefined }));
            stream.resume();
            // An empty gRPC message: no compression flag, length 0.
            // (A GET has no body: node ends its stream at once.)
            if (!stream.writableEnded) stream.end(Buffer.alloc(5));
        });
    }

    const grpcCall = (path: string) => ({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
    });

    it("is heard on the engine's session (one that made another provider call first), and still answered as before", async () => {
        let heard = 0;
        assert.equal(
            onEngineCancel(() => heard++),
            true,
            "found the gRPC server among the process's handles",
        );
        const engine = grpcClient();
        try {
            await engine.call(PLUGIN_INFO_PATH);
            assert.equal(heard, 0);
            await engine.call(CANCEL_PATH);
            assert.equal(heard, 1);
            assert.equal(answered, 1, "the server's own handler ran");
        } finally {
            engine.close();
        }
    });

    it("ignores a Cancel on a fresh session, from a gRPC client or a raw HTTP/2 one, which the server still answers", async () => {
        let heard = 0;
        onEngineCancel(() => heard++);
        const stranger = grpcClient();
        try {
            await stranger.call(CANCEL_PATH);
        } finally {
            stranger.close();
        }
        const session = connect(`http://127.0.0.1:${port}`);
        try {
            const answer = await request(session, grpcCall(CANCEL_PATH));
            assert.equal(answer.grpcStatus, "0", "the server answered the raw call");
        } finally {
            session.close();
        }
        assert.equal(heard, 0);
        assert.equal(answered, 2, "the server's own handler ran for both");
    });

    it("ignores what is not a gRPC Cancel, even on a session that made a provider call", async () => {
        let heard = 0;
        onEngineCancel(() => heard++);
        const session = connect(`http://127.0.0.1:${port}`);
        try {
            // A non-gRPC request to a provider path does not make the session the engine's...
            await request(session, { ":method": "POST", ":path": PLUGIN_INFO_PATH, "content-type": "text/plain" });
            await request(session, grpcCall(CANCEL_PATH));
            assert.equal(heard, 0);
            // ...a gRPC call does; then a GET, or another content type, to the Cancel path is still not Cancel.
            await request(session, grpcCall(PLUGIN_INFO_PATH));
            await request(session, { ":method": "GET", ":path": CANCEL_PATH, "content-type": "application/grpc" });
            await request(session, { ":method": "POST", ":path": CANCEL_PATH, "content-type": "application/json" });
            assert.equal(heard, 0);
            await request(session, { ...grpcCall(CANCEL_PATH), "content-type": "application/grpc+proto" });
            assert.equal(heard, 1, "a well-formed Cancel on that session is heard");
        } finally {
            session.close();
        }
    });

    it("answers false when the process serves no gRPC, so only SIGINT interrupts", () => {
        assert.equal(
            onEngineCancel(() => undefined, []),
            false,
        );
    });
});
