// Checks the Cloud Control server against its public contract (botocore cloudcontrol 2021-09-30
// service-2.json: AWS JSON 1.0, X-Amz-Target, ProgressEvent, ClientToken, the error shapes) over real
// HTTP with plain fetch, each request signed with SigV4 by @smithy/signature-v4 as the AWS SDK signs.
// The server's clock is fixed and requests are signed at it, so nothing here depends on real time.

import { strict as assert } from "node:assert";
import {
    AWS_JSON,
    type CloudControlServer,
    type CloudControlServerOptions,
    startCloudControlServer,
    TYPE_NAME,
} from "./cloudControl";
import { fixedOperations, scriptedFaults } from "./kit";
import { signAwsJson, TEST_CREDENTIALS, type TestCredentials } from "./sigv4";

const CLOCK = Date.parse("2030-01-01T00:00:00.000Z");
const TOKEN_A = "b4f1e0c2-1111-4a2b-9c3d-000000000001";
const TOKEN_B = "b4f1e0c2-1111-4a2b-9c3d-000000000002";
const TOKEN_C = "b4f1e0c2-1111-4a2b-9c3d-000000000003";

interface Reply {
    status: number;
    headers: Headers;
    // biome-ignore lint/suspicious/noExplicitAny: the tests read JSON of many shapes
    json: any;
}

interface SendOptions {
    credentials?: TestCredentials;
    date?: Date;
    /** Changes the signed request before it is sent (to break its signature). */
    tamper?: (request: { headers: Record<string, string>; body: string }) => void;
}

async function send(
    server: CloudControlServer,
    operation: string,
    input: unknown,
    options: SendOptions = {},
): Promise<Reply> {
    const signed = await signAwsJson({
        url: `${server.url}/`,
        target: `CloudApiService.${operation}`,
        body: input,
        credentials: options.credentials,
        date: options.date ?? new Date(CLOCK),
    });
    options.tamper?.(signed);
    const response = await fetch(`${server.url}/`, { method: "POST", headers: signed.headers, body: signed.body });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: text === "" ? undefined : JSON.parse(text) };
}

const desired = (name: string, extra: Record<string, unknown> = {}) => JSON.stringify({ Name: name, ...extra });
const createWidget = (
    server: CloudControlServer,
    name: string,
    clientToken?: string,
    extra: Record<string, unknown> = {},
) =>
    send(server, "CreateResource", {
        TypeName: TYPE_NAME,
        DesiredState: desired(name, extra),
        ...(clientToken === undefined ? {} : { ClientToken: clientToken }),
    });
const status = (server: CloudControlServer, requestToken: string) =>
    send(server, "GetResourceRequestStatus", { RequestToken: requestToken });
const getWidget = (server: CloudControlServer, identifier: string) =>
    send(server, "GetResource", { TypeName: TYPE_NAME, Identifier: identifier });

/** Polls until the request is no longer running (each poll advances it one step; bounded by the plan). */
async function settled(server: CloudControlServer, requestToken: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 20; i++) {
        const reply = await status(server, requestToken);
        assert.equal(reply.status, 200, JSON.stringify(reply.json));
        const event = reply.json.ProgressEvent;
        if (!["PENDING", "IN_PROGRESS", "CANCEL_IN_PROGRESS"].includes(event.OperationStatus)) return event;
    }
    throw new Error(`${requestToken} never settled`);
}

function assertAwsError(reply: Reply, http: number, shape: string): void {
    assert.equal(reply.status, http, JSON.stringify(reply.json));
    assert.equal(reply.json.__type, `com.amazonaws.cloudcontrol#${shape}`);
    assert.equal(reply.headers.get("x-amzn-errortype"), shape);
    assert.equal(typeof reply.json.Message, "string");
}

describe("AWS Cloud Control dialect server (cloudcontrol 2021-09-30, AWS JSON 1.0, SigV4)", () => {
    let server: CloudControlServer;
    const start = async (options: CloudControlServerOptions = {}) => {
        server = await startCloudControlServer({ now: () => CLOCK, ...options });
        return server;
    };
    afterEach(async () => {
        await server?.close();
    });

    describe("CreateResource and GetResourceRequestStatus", () => {
        it("answers a ProgressEvent without Identifier, a RetryAfter timestamp, and SUCCESS with both at the end", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 2 }) });
            const reply = await createWidget(server, "alpha", TOKEN_A, { Size: 3 });
            assert.equal(reply.status, 200);
            assert.equal(reply.headers.get("content-type"), AWS_JSON);
            const event = reply.json.ProgressEvent;
            assert.deepEqual(event, {
                TypeName: TYPE_NAME,
                RequestToken: event.RequestToken,
                Operation: "CREATE",
                OperationStatus: "PENDING",
                EventTime: CLOCK / 1000,
                RetryAfter: CLOCK / 1000 + 5,
            });
            assert.match(event.RequestToken, /^[-A-Za-z0-9+/=]{1,128}$/);

            const running = (await status(server, event.RequestToken)).json.ProgressEvent;
            assert.equal(running.OperationStatus, "IN_PROGRESS");
            assert.equal("Identifier" in running, false, "the Identifier of a create comes only at SUCCESS");
            assertAwsError(await getWidget(server, "alpha"), 400, "ResourceNotFoundException");

            const done = (await status(server, event.RequestToken)).json.ProgressEvent;
            assert.equal(done.OperationStatus, "SUCCESS");
            assert.equal(done.Identifier, "alpha");
            assert.equal(done.EventTime, CLOCK / 1000, "EventTime is when the request was initiated");
            assert.equal("RetryAfter" in done, false);
            assert.deepEqual(JSON.parse(done.ResourceModel), {
                Name: "alpha",
                Size: 3,
                Arn: "arn:aws:testwidgets:us-east-1:123456789012:widget/alpha",
            });
            const read = await getWidget(server, "alpha");
            assert.equal(read.json.TypeName, TYPE_NAME);
            assert.equal(read.json.ResourceDescription.Identifier, "alpha");
            assert.equal(JSON.parse(read.json.ResourceDescription.Properties).Size, 3);
            assert.deepEqual({ creates: server.counts().creates, live: server.counts().live }, { creates: 1, live: 1 });
        });

        it("sends the Identifier from the start with identifierEarly", async () => {
            await start({ identifierEarly: true });
            assert.equal((await createWidget(server, "alpha")).json.ProgressEvent.Identifier, "alpha");
        });

        it("replays a ClientToken with the same call (key order aside) as the same request, and creates once", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 1 }) });
            const first = (await createWidget(server, "alpha", TOKEN_A, { Size: 1, Tier: "gold" })).json.ProgressEvent;
            const again = await send(server, "CreateResource", {
                ClientToken: TOKEN_A,
                DesiredState: JSON.stringify({ Tier: "gold", Size: 1, Name: "alpha" }),
                TypeName: TYPE_NAME,
            });
            assert.equal(again.status, 200);
            assert.equal(again.json.ProgressEvent.RequestToken, first.RequestToken);
            await settled(server, first.RequestToken);
            const late = (await createWidget(server, "alpha", TOKEN_A, { Size: 1, Tier: "gold" })).json.ProgressEvent;
            assert.deepEqual([late.RequestToken, late.OperationStatus], [first.RequestToken, "SUCCESS"]);
            assert.deepEqual({ creates: server.counts().creates, live: server.counts().live }, { creates: 1, live: 1 });
        });

        it("refuses a ClientToken reused with another body with 400 ClientTokenConflictException", async () => {
            await start();
            await createWidget(server, "alpha", TOKEN_A, { Size: 1 });
            assertAwsError(
                await createWidget(server, "alpha", TOKEN_A, { Size: 2 }),
                400,
                "ClientTokenConflictException",
            );
            assertAwsError(
                await send(server, "DeleteResource", {
                    TypeName: TYPE_NAME,
                    Identifier: "alpha",
                    ClientToken: TOKEN_A,
                }),
                400,
                "ClientTokenConflictException",
            );
        });

        it("refuses a taken Name with 400 AlreadyExistsException", async () => {
            await start();
            await createWidget(server, "alpha", TOKEN_A);
            assertAwsError(await createWidget(server, "alpha", TOKEN_B), 400, "AlreadyExistsException");
            assert.equal(server.counts().live, 1);
        });

        it("with handlerErrors 'event', reports a taken Name as a FAILED event with ErrorCode AlreadyExists", async () => {
            await start({ handlerErrors: "event", operations: fixedOperations({ pollsToFinish: 1 }) });
            await settled(
                server,
                (await createWidget(server, "alpha", TOKEN_A, { Size: 1 })).json.ProgressEvent.RequestToken,
            );
            const reply = await createWidget(server, "alpha", TOKEN_B, { Size: 2 });
            assert.equal(reply.status, 200);
            const event = await settled(server, reply.json.ProgressEvent.RequestToken);
            assert.deepEqual([event.OperationStatus, event.ErrorCode], ["FAILED", "AlreadyExists"]);
            const kept = JSON.parse((await getWidget(server, "alpha")).json.ResourceDescription.Properties);
            assert.equal(kept.Size, 1, "the existing widget is untouched");
        });

        it("ends a failed request FAILED with an ErrorCode and leaves nothing; resultLate hides it one read more", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 1, outcome: "failed" }) });
            const failed = await settled(server, (await createWidget(server, "alpha")).json.ProgressEvent.RequestToken);
            assert.deepEqual([failed.OperationStatus, failed.ErrorCode], ["FAILED", "GeneralServiceException"]);
            assert.equal(server.counts().live, 0);
            server.setOperations(fixedOperations({ pollsToFinish: 1, resultLate: true }));
            const done = await settled(server, (await createWidget(server, "beta")).json.ProgressEvent.RequestToken);
            assert.equal(done.OperationStatus, "SUCCESS");
            assertAwsError(await getWidget(server, "beta"), 400, "ResourceNotFoundException");
            assert.equal((await getWidget(server, "beta")).status, 200);
        });

        it("cancels a running request: CANCEL_IN_PROGRESS, then CANCEL_COMPLETE with nothing made", async () => {
            await start();
            const token = (await createWidget(server, "alpha")).json.ProgressEvent.RequestToken;
            const cancel = await send(server, "CancelResourceRequest", { RequestToken: token });
            assert.equal(cancel.json.ProgressEvent.OperationStatus, "CANCEL_IN_PROGRESS");
            assert.equal((await settled(server, token)).OperationStatus, "CANCEL_COMPLETE");
            assert.equal(server.counts().live, 0);
            const again = await send(server, "CancelResourceRequest", { RequestToken: token });
            assert.equal(
                again.json.ProgressEvent.OperationStatus,
                "CANCEL_COMPLETE",
                "a finished request is unchanged",
            );
            assertAwsError(await status(server, "no-such-token"), 400, "RequestTokenNotFoundException");
        });
    });

    describe("throttling", () => {
        it("answers a throttled create with a FAILED event (ErrorCode Throttling): nothing made, its token spent, a fresh token succeeds", async () => {
            await start({
                operations: fixedOperations({ pollsToFinish: 1 }),
                faults: scriptedFaults([
                    { operation: "create", fault: { kind: "throttle", hint: "body", seconds: 2 } },
                ]),
            });
            const reply = await createWidget(server, "alpha", TOKEN_A);
            assert.equal(reply.status, 200);
            const event = reply.json.ProgressEvent;
            assert.deepEqual(
                [event.OperationStatus, event.ErrorCode, event.RetryAfter],
                ["FAILED", "Throttling", CLOCK / 1000 + 2],
            );
            assert.equal(server.counts().live, 0, "nothing was made");
            assert.equal((await status(server, event.RequestToken)).json.ProgressEvent.OperationStatus, "FAILED");
            const sameToken = (await createWidget(server, "alpha", TOKEN_A)).json.ProgressEvent;
            assert.deepEqual([sameToken.RequestToken, sameToken.ErrorCode], [event.RequestToken, "Throttling"]);
            const fresh = (await createWidget(server, "alpha", TOKEN_B)).json.ProgressEvent;
            assert.equal((await settled(server, fresh.RequestToken)).OperationStatus, "SUCCESS");
            assert.equal(server.counts().creates, 1);
        });

        it("ends a request the handler got throttled in FAILED (failNextWith), nothing made", async () => {
            await start({ operations: fixedOperations({ pollsToFinish: 1 }) });
            server.failNextWith("Throttling");
            const accepted = (await createWidget(server, "alpha", TOKEN_A)).json.ProgressEvent;
            assert.equal(accepted.OperationStatus, "PENDING");
            const event = await settled(server, accepted.RequestToken);
            assert.deepEqual([event.OperationStatus, event.ErrorCode], ["FAILED", "Throttling"]);
            assert.equal(server.counts().live, 0);
            const fresh = (await createWidget(server, "alpha", TOKEN_B)).json.ProgressEvent;
            assert.equal((await settled(server, fresh.RequestToken)).OperationStatus, "SUCCESS");
        });

        it("answers other throttles with 400 ThrottlingException, without advancing the request", async () => {
            await start({
                operations: fixedOperations({ pollsToFinish: 1 }),
                faults: scriptedFaults([
                    { operation: "poll", fault: { kind: "throttle", hint: "seconds", seconds: 1 } },
                ]),
            });
            const token = (await createWidget(server, "alpha")).json.ProgressEvent.RequestToken;
            const throttled = await status(server, token);
            assertAwsError(throttled, 400, "ThrottlingException");
            assert.equal(throttled.headers.get("retry-after"), null);
            assert.equal((await status(server, token)).json.ProgressEvent.OperationStatus, "SUCCESS");
        });
    });

    describe("UpdateResource and DeleteResource", () => {
        const live = async (options: CloudControlServerOptions = {}) => {
            await start({ operations: fixedOperations({ pollsToFinish: 1 }), ...options });
            await settled(
                server,
                (await createWidget(server, "alpha", TOKEN_A, { Size: 1 })).json.ProgressEvent.RequestToken,
            );
        };
        const update = (patch: unknown, clientToken?: string) =>
            send(server, "UpdateResource", {
                TypeName: TYPE_NAME,
                Identifier: "alpha",
                PatchDocument: JSON.stringify(patch),
                ...(clientToken === undefined ? {} : { ClientToken: clientToken }),
            });
        const remove = (identifier: string, clientToken?: string) =>
            send(server, "DeleteResource", {
                TypeName: TYPE_NAME,
                Identifier: identifier,
                ...(clientToken === undefined ? {} : { ClientToken: clientToken }),
            });

        it("applies an RFC 6902 PatchDocument when the update succeeds", async () => {
            await live();
            const reply = await update([
                { op: "replace", path: "/Size", value: 2 },
                { op: "add", path: "/Tags", value: [{ Key: "env", Value: "dev" }] },
            ]);
            const accepted = reply.json.ProgressEvent;
            assert.deepEqual([accepted.Operation, accepted.Identifier], ["UPDATE", "alpha"]);
            const done = await settled(server, accepted.RequestToken);
            assert.equal(done.OperationStatus, "SUCCESS");
            const model = JSON.parse(String(done.ResourceModel));
            assert.deepEqual([model.Size, model.Tags], [2, [{ Key: "env", Value: "dev" }]]);
        });

        it("refuses a patch of the primary identifier, a bad patch and a second operation while one runs", async () => {
            await live();
            assertAwsError(
                await update([{ op: "replace", path: "/Name", value: "beta" }]),
                400,
                "NotUpdatableException",
            );
            assertAwsError(await update([{ op: "remove", path: "/Nope" }]), 400, "InvalidRequestException");
            assert.equal((await update([{ op: "replace", path: "/Size", value: 2 }])).status, 200);
            assertAwsError(
                await update([{ op: "replace", path: "/Size", value: 3 }]),
                400,
                "ConcurrentOperationException",
            );
        });

        it("deletes: the Identifier throughout, SUCCESS, then ResourceNotFoundException for a gone one", async () => {
            await live();
            const accepted = (await remove("alpha", TOKEN_B)).json.ProgressEvent;
            assert.deepEqual([accepted.Operation, accepted.Identifier], ["DELETE", "alpha"]);
            const done = await settled(server, accepted.RequestToken);
            assert.deepEqual([done.OperationStatus, "ResourceModel" in done], ["SUCCESS", false]);
            assertAwsError(await getWidget(server, "alpha"), 400, "ResourceNotFoundException");
            assertAwsError(await remove("alpha", TOKEN_C), 400, "ResourceNotFoundException");
            const replay = (await remove("alpha", TOKEN_B)).json.ProgressEvent;
            assert.deepEqual([replay.RequestToken, replay.OperationStatus], [accepted.RequestToken, "SUCCESS"]);
            assert.equal(server.counts().live, 0);
        });

        it("with handlerErrors 'event', reports deleting a gone widget as FAILED with ErrorCode NotFound", async () => {
            await live({ handlerErrors: "event" });
            const reply = await remove("nope");
            assert.equal(reply.status, 200);
            const event = await settled(server, reply.json.ProgressEvent.RequestToken);
            assert.deepEqual([event.OperationStatus, event.ErrorCode], ["FAILED", "NotFound"]);
        });

        it("lists the live widgets and shows out-of-band changes and removals", async () => {
            await live();
            server.mutate("alpha", { Size: 42 });
            const listed = await send(server, "ListResources", { TypeName: TYPE_NAME });
            assert.deepEqual(
                listed.json.ResourceDescriptions.map(
                    (entry: { Properties: string }) => JSON.parse(entry.Properties).Size,
                ),
                [42],
            );
            server.remove("alpha");
            assertAwsError(await getWidget(server, "alpha"), 400, "ResourceNotFoundException");
            assert.equal(server.counts().live, 0);
        });

        it("refuses another TypeName with TypeNotFoundException and a missing member with ValidationException", async () => {
            await start();
            assertAwsError(
                await send(server, "GetResource", { TypeName: "AWS::S3::Bucket", Identifier: "x" }),
                400,
                "TypeNotFoundException",
            );
            assertAwsError(
                await send(server, "CreateResource", { DesiredState: desired("x") }),
                400,
                "ValidationException",
            );
        });
    });

    describe("SigV4, strays and the kit's faults", () => {
        it("counts every signature failure as unauthorized and does nothing", async () => {
            await start();
            const input = { TypeName: TYPE_NAME, DesiredState: desired("alpha") };
            const unsigned = await fetch(`${server.url}/`, {
                method: "POST",
                headers: { "content-type": AWS_JSON, "x-amz-target": "CloudApiService.CreateResource" },
                body: JSON.stringify(input),
            });
            assert.equal(unsigned.status, 403);
            assert.equal(
                ((await unsigned.json()) as { __type: string }).__type,
                "com.amazonaws.cloudcontrol#MissingAuthenticationTokenException",
            );
            const wrongSecret = { ...TEST_CREDENTIALS, secretAccessKey: "not-the-secret" };
            assertAwsError(
                await send(server, "CreateResource", input, { credentials: wrongSecret }),
                403,
                "InvalidSignatureException",
            );
            const unknownKey = { ...TEST_CREDENTIALS, accessKeyId: "AKIDSOMEONEELSE00000" };
            assertAwsError(
                await send(server, "CreateResource", input, { credentials: unknownKey }),
                403,
                "UnrecognizedClientException",
            );
            const tampered = await send(server, "CreateResource", input, {
                tamper: (request) => {
                    request.body = request.body.replace("alpha", "omega");
                },
            });
            assertAwsError(tampered, 403, "InvalidSignatureException");
            const expired = await send(server, "CreateResource", input, { date: new Date(CLOCK - 20 * 60 * 1000) });
            assertAwsError(expired, 403, "InvalidSignatureException");
            assert.match(expired.json.Message, /Signature expired/);
            const retargeted = await send(server, "CreateResource", input, {
                tamper: (request) => {
                    request.headers["x-amz-target"] = "CloudApiService.DeleteResource";
                },
            });
            assertAwsError(retargeted, 403, "InvalidSignatureException");
            const extraHeader = await send(server, "CreateResource", input, {
                tamper: (request) => {
                    request.headers["x-amz-extra"] = "unsigned";
                },
            });
            assertAwsError(extraHeader, 400, "IncompleteSignatureException");
            assert.deepEqual(
                { unauthorized: server.counts().unauthorized, live: server.counts().live },
                { unauthorized: 7, live: 0 },
            );
            assert.equal((await send(server, "CreateResource", input)).status, 200, "the same call signed right works");
        });

        it("answers an unknown X-Amz-Target and a path outside the API, counting both as strays", async () => {
            await start();
            assertAwsError(await send(server, "CreateStack", {}), 400, "UnknownOperationException");
            const signed = await signAwsJson({
                url: `${server.url}/widgets`,
                target: "CloudApiService.CreateResource",
                body: {},
                date: new Date(CLOCK),
            });
            const stray = await fetch(`${server.url}/widgets`, { method: "POST", ...signed });
            assert.equal(stray.status, 404);
            assert.equal(
                ((await stray.json()) as { __type: string }).__type,
                "com.amazonaws.cloudcontrol#UnknownOperationException",
            );
            assert.equal(server.counts().requestsOutsideApi, 2);
        });

        it("loses a create's answer after making it: the ClientToken retry gets the same request, no twin", async () => {
            await start({
                operations: fixedOperations({ pollsToFinish: 1 }),
                faults: scriptedFaults([{ operation: "create", fault: { kind: "lose-answer" } }]),
            });
            await assert.rejects(createWidget(server, "alpha", TOKEN_A));
            assert.equal(server.counts().live, 1, "the effect happened");
            const retried = (await createWidget(server, "alpha", TOKEN_A)).json.ProgressEvent;
            assert.equal(retried.RequestToken, server.requests()[0]?.RequestToken);
            assert.equal((await settled(server, retried.RequestToken)).OperationStatus, "SUCCESS");
            assert.deepEqual({ creates: server.counts().creates, live: server.counts().live }, { creates: 1, live: 1 });
        });

        it("answers an injected 5xx instead of handling, and cuts a poll's answer after advancing it", async () => {
            await start({
                operations: fixedOperations({ pollsToFinish: 2 }),
                faults: scriptedFaults([
                    { operation: "create", fault: { kind: "server-error", status: 503 } },
                    { operation: "poll", fault: { kind: "cut-answer" } },
                ]),
            });
            assertAwsError(await createWidget(server, "alpha", TOKEN_A), 503, "ServiceUnavailable");
            assert.equal(server.counts().live, 0, "nothing was done");
            const token = (await createWidget(server, "alpha", TOKEN_A)).json.ProgressEvent.RequestToken;
            await assert.rejects(status(server, token));
            assert.equal((await status(server, token)).json.ProgressEvent.OperationStatus, "SUCCESS");
            assert.equal(server.counts().faultsInjected, 2);
        });
    });
});
