// The wire facts of each dialect (REFERENCE.md, "Long-running REST operations"), one answer at a time:
// what a write answer means (done, or an operation to follow), what each poll answer says, and what
// error answers mean. Pure: the servers under test/dialects/servers check the same facts over HTTP.

import { strict as assert } from "node:assert";
import { azureDialect } from "../../../../provider/tasks/protocol/dialects/azure";
import { ARM_DEFAULT_RETRY_AFTER_MS, azureArmDialect } from "../../../../provider/tasks/protocol/dialects/azureArm";
import { cloudControlDialect } from "../../../../provider/tasks/protocol/dialects/cloudControl";
import { GENERIC_DEFAULTS, genericDialect } from "../../../../provider/tasks/protocol/dialects/generic";
import { googleDialect } from "../../../../provider/tasks/protocol/dialects/google";
import { parseLocator } from "../../../../provider/tasks/protocol/dialects/locator";
import { answer, NOW, TARGET } from "./support";

describe("dialects", () => {
    describe("generic", () => {
        const dialect = genericDialect(GENERIC_DEFAULTS);

        it("creates with POST and the Idempotency-Key header, repeatable only with a key", () => {
            const keyed = dialect.create(TARGET, { name: "w1" }, "k-1");
            assert.deepEqual(
                [keyed.method, keyed.path, keyed.headers, keyed.repeatable],
                ["POST", "/widgets", { "Idempotency-Key": "k-1" }, true],
            );
            assert.equal(dialect.create(TARGET, { name: "w1" }, undefined).repeatable, false);
        });

        it("follows a 202's Location, with its Retry-After as seconds or an HTTP date", () => {
            const seconds = dialect.submitted(
                "create",
                answer(202, undefined, { Location: "/monitors/m1", "Retry-After": "7" }),
                NOW,
            );
            assert.deepEqual(seconds, {
                kind: "operation",
                handle: { kind: "monitor", ref: "/monitors/m1" },
                view: { state: "pending", status: "202 Accepted", retryAfterMs: 7000 },
            });
            const date = dialect.submitted(
                "create",
                answer(202, undefined, {
                    location: "/monitors/m1",
                    "retry-after": new Date(NOW + 30_000).toUTCString(),
                }),
                NOW,
            );
            assert.equal(date.kind === "operation" && date.view?.retryAfterMs, 30_000);
        });

        it("reads statuses case-insensitively; anything unknown is failure; canceled is its own end", () => {
            const handle = { kind: "monitor", ref: "/monitors/m1" };
            assert.equal(dialect.polled(handle, answer(200, { status: "RUNNING" }), NOW).state, "pending");
            const done = dialect.polled(handle, answer(200, { status: "Succeeded" }, { Location: "/widgets/w1" }), NOW);
            assert.deepEqual([done.state, done.resourceLocation], ["succeeded", "/widgets/w1"]);
            assert.equal(dialect.polled(handle, answer(200, { status: "CANCELLED" }), NOW).state, "canceled");
            const odd = dialect.polled(
                handle,
                answer(200, { status: "exploded", error: { code: "E1", message: "disk full" } }),
                NOW,
            );
            assert.deepEqual([odd.state, odd.error], ["failed", "E1: disk full"]);
            assert.equal(dialect.polled(handle, answer(200, {}), NOW).state, "failed");
        });

        it("takes the status from the HTTP code when told to, and then reads error answers as the end", () => {
            const byCode = genericDialect({
                ...GENERIC_DEFAULTS,
                status: { from: "code" },
                success: ["200", "201"],
                pending: ["202"],
            });
            const handle = { kind: "monitor", ref: "/m" };
            assert.equal(byCode.pollsReadErrors(handle), true);
            assert.equal(byCode.polled(handle, answer(202), NOW).state, "pending");
            assert.deepEqual(byCode.polled(handle, answer(200, { id: "w1" }), NOW).record, { id: "w1" });
            assert.equal(byCode.polled(handle, answer(500), NOW).state, "failed");
            assert.equal(dialect.pollsReadErrors(handle), false);
        });

        it("means by 404, 409, 422 and 429 what the IETF draft and HTTP say", () => {
            assert.deepEqual(
                [404, 409, 422, 429, 400].map((s) => dialect.meaning(s, undefined)),
                ["not-found", "conflict", "token-reused", "throttled", undefined],
            );
        });

        it("reads a 409 whose problem details speak of the key as the draft's outstanding request, not a conflict", () => {
            const draft = {
                type: "https://developer.example.com/idempotency",
                title: "A request is outstanding for this Idempotency-Key",
            };
            assert.equal(dialect.meaning(409, draft), "token-in-progress");
            assert.equal(dialect.meaning(409, { code: "idempotency-key-outstanding" }), "token-in-progress");
            assert.equal(dialect.meaning(409, { type: "https://api.test/problems/name-taken" }), "conflict");
        });

        it("refuses locators that do not parse, naming the forms", () => {
            assert.match((parseLocator("headers.Location", true) as { problem: string }).problem, /header\.<Name>/);
            assert.match((parseLocator("code", false) as { problem: string }).problem, /not a URL/);
            assert.match((parseLocator("body.a..b", true) as { problem: string }).problem, /does not parse/);
            assert.deepEqual(parseLocator("header.Operation-Location", false), {
                from: "header",
                name: "Operation-Location",
            });
        });
    });

    describe("azure-arm", () => {
        const dialect = azureArmDialect();

        it("creates with an idempotent PUT to the resource's own URL", () => {
            const call = dialect.create(TARGET, { location: "westus" }, undefined);
            assert.deepEqual([call.method, call.path, call.repeatable], ["PUT", "/widgets/w1", true]);
        });

        it("is done at once when a PUT answers 200 with provisioningState Succeeded (or none)", () => {
            const sync = dialect.submitted(
                "create",
                answer(200, { id: "/widgets/w1", properties: { provisioningState: "Succeeded" } }),
                NOW,
            );
            assert.equal(sync.kind === "done" && sync.view.state, "succeeded");
            const bare = dialect.submitted("create", answer(201, { id: "/widgets/w1", properties: {} }), NOW);
            assert.equal(bare.kind === "done" && bare.view.state, "succeeded");
        });

        it("follows Azure-AsyncOperation: always 200, status until Succeeded, Failed or Canceled", () => {
            const started = dialect.submitted(
                "create",
                answer(201, { properties: { provisioningState: "Accepted" } }, { "Azure-AsyncOperation": "/ops/1" }),
                NOW,
            );
            assert.equal(started.kind, "operation");
            const handle = started.kind === "operation" ? started.handle : { kind: "", ref: "" };
            assert.deepEqual(dialect.polled(handle, answer(200, { status: "InProgress", percentComplete: 40 }), NOW), {
                status: "InProgress",
                progressPercent: 40,
                state: "pending",
            });
            assert.equal(dialect.polled(handle, answer(200, { status: "Succeeded" }), NOW).state, "succeeded");
            const failed = dialect.polled(
                handle,
                answer(200, { status: "Failed", error: { code: "QuotaExceeded", message: "no room" } }),
                NOW,
            );
            assert.deepEqual([failed.state, failed.error], ["failed", "QuotaExceeded: no room"]);
            assert.equal(dialect.polled(handle, answer(200, { status: "Canceled" }), NOW).state, "canceled");
            assert.equal(dialect.pollsReadErrors(handle), false);
        });

        it("reads a Location-only monitor by its HTTP code, waiting 60 s when no Retry-After says otherwise", () => {
            const started = dialect.submitted("delete", answer(202, undefined, { Location: "/loc/1" }), NOW);
            assert.ok(started.kind === "operation");
            assert.equal(started.view?.retryAfterMs, ARM_DEFAULT_RETRY_AFTER_MS);
            const handle = started.handle;
            assert.equal(dialect.pollsReadErrors(handle), true);
            assert.deepEqual(dialect.polled(handle, answer(202, undefined, { "Retry-After": "5" }), NOW), {
                state: "pending",
                status: "202",
                retryAfterMs: 5000,
            });
            assert.equal(dialect.polled(handle, answer(204), NOW).state, "succeeded");
            assert.deepEqual(
                dialect.polled(handle, answer(409, { error: { code: "Conflict", message: "in use" } }), NOW).error,
                "Conflict: in use",
            );
        });

        it("polls the resource itself when a PUT answers without headers but a non-terminal provisioningState", () => {
            const started = dialect.submitted(
                "create",
                answer(201, { id: "/widgets/w1", properties: { provisioningState: "Creating" } }),
                NOW,
            );
            assert.ok(started.kind === "operation");
            assert.deepEqual(started.handle, { kind: "resource", ref: "/widgets/w1" });
            assert.equal(
                dialect.polled(started.handle, answer(200, { properties: { provisioningState: "Creating" } }), NOW)
                    .state,
                "pending",
            );
            assert.equal(
                dialect.polled(started.handle, answer(200, { properties: { provisioningState: "Failed" } }), NOW).state,
                "failed",
            );
        });

        it("says a resource whose provisioningState is Deleting (any case) is being deleted, and no other", () => {
            const inState = (provisioningState?: string) => ({ id: "/widgets/w1", properties: { provisioningState } });
            assert.equal(dialect.beingDeleted?.(inState("Deleting")), true);
            assert.equal(dialect.beingDeleted?.(inState("deleting")), true);
            for (const other of ["Succeeded", "Creating", "Updating", "Failed", "Canceled", undefined])
                assert.equal(dialect.beingDeleted?.(inState(other)), false, String(other));
            assert.equal(dialect.beingDeleted?.(undefined), false);
        });

        it("takes a DELETE answered 200 or 204 as done", () => {
            for (const status of [200, 204]) {
                const done = dialect.submitted("delete", answer(status), NOW);
                assert.equal(done.kind === "done" && done.view.state, "succeeded");
            }
        });
    });

    describe("azure (guidelines)", () => {
        const dialect = azureDialect();

        it("follows Operation-Location through NotStarted and Running, with Retry-After", () => {
            const started = dialect.submitted(
                "create",
                answer(201, {}, { "Operation-Location": "/operations/o1", "Retry-After": "2" }),
                NOW,
            );
            assert.ok(started.kind === "operation");
            assert.equal(started.view?.retryAfterMs, 2000);
            for (const status of ["NotStarted", "Running"])
                assert.equal(dialect.polled(started.handle, answer(200, { status }), NOW).state, "pending");
            const done = dialect.polled(
                started.handle,
                answer(200, { status: "Succeeded", result: { name: "w1" } }),
                NOW,
            );
            assert.deepEqual([done.state, done.record], ["succeeded", { name: "w1" }]);
            assert.equal(dialect.polled(started.handle, answer(200, { status: "Canceled" }), NOW).state, "canceled");
            assert.equal(dialect.polled(started.handle, answer(200, { status: "Paused" }), NOW).state, "failed");
        });

        it("updates by a PUT of the whole resource (idempotent) and takes a 200 without Operation-Location as done", () => {
            const call = dialect.update(TARGET, "w1", { a: 1 }, undefined);
            assert.deepEqual(
                [call.method, call.path, call.body, call.repeatable],
                ["PUT", TARGET.itemPath("w1"), { a: 1 }, true],
            );
            const done = dialect.submitted("update", answer(200, { name: "w1" }), NOW);
            assert.deepEqual(done, {
                kind: "done",
                view: { state: "succeeded", status: "200", record: { name: "w1" } },
            });
        });
    });

    describe("google (AIP-151)", () => {
        const dialect = googleDialect({ versionPrefix: "/v1", idParameter: "widgetId" });

        it("creates with the id and the requestId in the query", () => {
            const call = dialect.create(
                { ...TARGET, collectionPath: "/v1/projects/p/locations/l/widgets" },
                { size: 1 },
                "6f1c2c1e-0000-4000-8000-000000000001",
            );
            assert.equal(
                call.path,
                "/v1/projects/p/locations/l/widgets?widgetId=w1&requestId=6f1c2c1e-0000-4000-8000-000000000001",
            );
            assert.equal(call.repeatable, true);
        });

        it("follows an Operation by its name; the resource's id comes from the response's name", () => {
            const started = dialect.submitted(
                "create",
                answer(200, { name: "projects/p/locations/l/operations/op1", done: false }),
                NOW,
            );
            assert.ok(started.kind === "operation");
            assert.equal(dialect.poll(started.handle).path, "/v1/projects/p/locations/l/operations/op1");
            const done = dialect.polled(
                started.handle,
                answer(200, {
                    name: "projects/p/locations/l/operations/op1",
                    done: true,
                    response: { name: "projects/p/locations/l/widgets/w1" },
                }),
                NOW,
            );
            assert.deepEqual([done.state, done.resourceId], ["succeeded", "w1"]);
        });

        it("reads error code 1 as canceled, any other error as failed", () => {
            const handle = { kind: "google-operation", ref: "projects/p/locations/l/operations/op1" };
            assert.equal(
                dialect.polled(handle, answer(200, { done: true, error: { code: 1, message: "cancelled" } }), NOW)
                    .state,
                "canceled",
            );
            const failed = dialect.polled(
                handle,
                answer(200, { done: true, error: { code: 9, message: "precondition" } }),
                NOW,
            );
            assert.deepEqual([failed.state, failed.error], ["failed", "9: precondition"]);
        });

        it("never makes a poll path of an operation name that could leave its place", () => {
            const odd = dialect.submitted(
                "create",
                answer(200, { name: "projects/../../admin/operations/x", done: false }),
                NOW,
            );
            assert.equal(odd.kind, "done");
            assert.equal(odd.kind === "done" && odd.view.state, "pending");
        });

        it("means ALREADY_EXISTS, NOT_FOUND and RESOURCE_EXHAUSTED by their status words too", () => {
            assert.equal(dialect.meaning(400, { error: { status: "ALREADY_EXISTS" } }), "conflict");
            assert.equal(dialect.meaning(429, { error: { code: 429, status: "RESOURCE_EXHAUSTED" } }), "throttled");
            assert.equal(dialect.meaning(404, undefined), "not-found");
        });
    });

    describe("aws-cloudcontrol", () => {
        const dialect = cloudControlDialect();

        it("creates with CreateResource, the desired state as a JSON string and the ClientToken", () => {
            const call = dialect.create(TARGET, { Name: "w1" }, "tok-1");
            assert.deepEqual(
                [call.method, call.path, call.headers?.["x-amz-target"]],
                ["POST", "/", "CloudApiService.CreateResource"],
            );
            assert.deepEqual(call.body, {
                TypeName: "Test::Widgets::Widget",
                DesiredState: '{"Name":"w1"}',
                ClientToken: "tok-1",
            });
        });

        it("follows a RequestToken; the Identifier may come only at SUCCESS; RetryAfter is a timestamp", () => {
            const event = (fields: Record<string, unknown>) =>
                answer(200, {
                    ProgressEvent: {
                        TypeName: "Test::Widgets::Widget",
                        RequestToken: "r1",
                        Operation: "CREATE",
                        ...fields,
                    },
                });
            const started = dialect.submitted(
                "create",
                event({ OperationStatus: "IN_PROGRESS", RetryAfter: NOW / 1000 + 3 }),
                NOW,
            );
            assert.ok(started.kind === "operation");
            assert.deepEqual([started.handle.ref, started.view?.retryAfterMs], ["r1", 3000]);
            assert.equal(
                dialect.poll(started.handle).headers?.["x-amz-target"],
                "CloudApiService.GetResourceRequestStatus",
            );
            const done = dialect.polled(started.handle, event({ OperationStatus: "SUCCESS", Identifier: "w1" }), NOW);
            assert.deepEqual([done.state, done.resourceId], ["succeeded", "w1"]);
        });

        it("reads throttling inside a FAILED event as: nothing made, submit again", () => {
            const handle = { kind: "request-token", ref: "r1" };
            const throttled = dialect.polled(
                handle,
                answer(200, {
                    ProgressEvent: {
                        OperationStatus: "FAILED",
                        ErrorCode: "Throttling",
                        StatusMessage: "Rate exceeded",
                    },
                }),
                NOW,
            );
            assert.deepEqual(
                [throttled.state, throttled.resubmit, throttled.error],
                ["failed", true, "Throttling: Rate exceeded"],
            );
            const failed = dialect.polled(
                handle,
                answer(200, { ProgressEvent: { OperationStatus: "FAILED", ErrorCode: "InvalidRequest" } }),
                NOW,
            );
            assert.equal(failed.resubmit, undefined);
            assert.equal(
                dialect.polled(handle, answer(200, { ProgressEvent: { OperationStatus: "CANCEL_COMPLETE" } }), NOW)
                    .state,
                "canceled",
            );
        });

        it("reads the resource from ResourceDescription.Properties, and exceptions from __type", () => {
            assert.deepEqual(
                dialect.record(
                    answer(200, {
                        TypeName: "T",
                        ResourceDescription: { Identifier: "w1", Properties: '{"Name":"w1","Size":2}' },
                    }),
                ),
                { Name: "w1", Size: 2 },
            );
            assert.equal(
                dialect.meaning(400, { __type: "com.amazonaws.cloudcontrol#ThrottlingException" }),
                "throttled",
            );
            assert.equal(dialect.meaning(400, { __type: "ResourceNotFoundException" }), "not-found");
            assert.equal(dialect.meaning(400, { __type: "ClientTokenConflictException" }), "token-reused");
            assert.equal(dialect.meaning(400, { __type: "AlreadyExistsException" }), "conflict");
        });

        it("finds a delete still running in ListResourceRequests, checking each summary whatever the filter did, page by page", () => {
            const lists = dialect.runningDeletes;
            assert.ok(lists, "Cloud Control lists its operations");
            const first = lists.call(TARGET, undefined);
            assert.equal(first.headers?.["x-amz-target"], "CloudApiService.ListResourceRequests");
            assert.deepEqual(first.body, {
                ResourceRequestStatusFilter: {
                    Operations: ["DELETE"],
                    OperationStatuses: ["PENDING", "IN_PROGRESS", "CANCEL_IN_PROGRESS"],
                },
            });
            assert.deepEqual((lists.call(TARGET, "page-2").body as { NextToken?: string }).NextToken, "page-2");
            const summary = (fields: Record<string, unknown>) => ({
                TypeName: "Test::Widgets::Widget",
                Identifier: "w1",
                Operation: "DELETE",
                OperationStatus: "IN_PROGRESS",
                RequestToken: "r1",
                ...fields,
            });
            const page = answer(200, {
                ResourceRequestStatusSummaries: [
                    summary({}),
                    summary({ RequestToken: "other-id", Identifier: "w2" }),
                    summary({ RequestToken: "other-type", TypeName: "AWS::S3::Bucket" }),
                    summary({ RequestToken: "a-create", Operation: "CREATE" }),
                    summary({ RequestToken: "ended", OperationStatus: "SUCCESS" }),
                    summary({ RequestToken: undefined }),
                    "not an event",
                ],
                NextToken: "page-2",
            });
            assert.deepEqual(lists.read(TARGET, "w1", page), {
                running: [{ kind: "request-token", ref: "r1" }],
                next: "page-2",
            });
            assert.deepEqual(lists.read(TARGET, "w1", answer(200, {})), { running: [] });
        });
    });
});
