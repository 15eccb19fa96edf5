// The wire facts of the greenlake dialect (REFERENCE.md, "Long-running REST operations"; HPE's own
// provider, hpegl-pcbe-terraform-resources), one answer at a time: the calls it builds, what a write's
// answer means (a 202's Location of an async operation, read by its id), what each look at an operation
// says (its states, progressPercent, suggestedPollingIntervalSeconds, what it made, why it failed), and
// what error statuses mean. The operations are those HPE's provider captured from the API
// (`internal/simulator/fixtures/datastores/create/async1.json` .. `async5.json`). Pure.

import { strict as assert } from "node:assert";
import { MalformedResponseError } from "../../../../provider/tasks/errors/malformedResponseError";
import type { OperationHandle } from "../../../../provider/tasks/protocol/dialects/dialect";
import { greenlakeDialect } from "../../../../provider/tasks/protocol/dialects/greenlake";
import { answer, NOW, TARGET } from "./support";

const dialect = greenlakeDialect();
const OPERATION_ID = "be55685c-f84f-4ad5-a3d1-2d7692ed47b1";
const OPERATION_PATH = `/data-services/v1beta1/async-operations/${OPERATION_ID}`;
const HANDLE: OperationHandle = { kind: "greenlake-operation", ref: OPERATION_ID };
const DATASTORE_ID = "698de955-87b5-5fe6-b683-78c3948beede";

/** An async operation as the API answers it: HPE's capture of a datastore create, with `changes`. */
function operation(changes: Record<string, unknown> = {}): Record<string, unknown> {
    return {
        associatedResources: [],
        createdAt: "2024-07-29T12:42:46.443256231Z",
        customerId: "bb20052ac81011ed895f7a6e2fba2c57",
        displayName: "Create Datastore: 'ds19'",
        endedAt: null,
        error: null,
        estimatedRunningDurationMinutes: 300,
        generation: 1,
        groups: [{ id: "bb20052ac81011ed895f7a6e2fba2c57", name: "Default Group" }],
        hasChildOperations: false,
        healthStatus: "OK",
        id: OPERATION_ID,
        logMessages: [
            { message: "Create Datastore task is created", timestamp: "2024-07-29T12:42:46.44326043Z" },
            { message: "Create Datastore task is running", timestamp: "2024-07-29T12:42:46.443261567Z" },
        ],
        name: "Create-Datastore: 'ds19'",
        parent: null,
        progressPercent: 0,
        recommendations: [],
        resourceUri: OPERATION_PATH,
        rootOperation: { id: OPERATION_ID, name: "", resourceUri: OPERATION_PATH, type: "task" },
        services: ["private-cloud-business-edition"],
        sourceResourceUri: null,
        startedAt: "2024-07-29T12:42:46.443256695Z",
        state: "RUNNING",
        subtreeOperationCount: 0,
        suggestedPollingIntervalSeconds: 30,
        type: "task",
        updatedAt: "2024-07-29T12:42:46.465872829Z",
        ...changes,
    };
}

/** The operation once it succeeded, as captured (async5.json): no associated resource, a sourceResourceUri. */
const SUCCEEDED = operation({
    endedAt: "2024-07-29T12:43:31.699429406Z",
    progressPercent: 100,
    sourceResourceUri: `/virtualization/v1beta1/datastores/${DATASTORE_ID}`,
    state: "SUCCEEDED",
});

describe("the greenlake dialect", () => {
    describe("the calls it builds", () => {
        it("is named greenlake, and a create sent again with its token replays (IETF Idempotency-Key, key chain)", () => {
            assert.equal(dialect.name, "greenlake");
            assert.equal(dialect.tokenReplaysCreate, true);
            assert.deepEqual(
                [0, 1, 2].map((generation) => dialect.createKey("tok", generation, "ds19")),
                ["tok", "tok~1", "tok~2"],
            );
        });

        it("creates with POST to the collection and the Idempotency-Key header, repeatable only with a key", () => {
            const body = { name: "ds19", sizeInBytes: 17179869184 };
            const keyed = dialect.create(TARGET, body, "tok-1");
            assert.deepEqual(keyed, {
                method: "POST",
                path: "/widgets",
                body,
                headers: { "Idempotency-Key": "tok-1" },
                repeatable: true,
            });
            const bare = dialect.create(TARGET, body, undefined);
            assert.deepEqual([bare.headers, bare.repeatable], [{}, false]);
        });

        it("reads with GET, updates with PATCH (repeatable with a key), deletes with DELETE, at the item's path", () => {
            assert.deepEqual(dialect.read(TARGET, "d 1"), { method: "GET", path: "/widgets/d%201", repeatable: true });
            const update = dialect.update(TARGET, "d1", { sizeInBytes: 1 }, "k");
            assert.deepEqual(
                [update.method, update.path, update.headers, update.repeatable],
                ["PATCH", "/widgets/d1", { "Idempotency-Key": "k" }, true],
            );
            assert.equal(dialect.update(TARGET, "d1", {}, undefined).repeatable, false);
            assert.deepEqual(dialect.delete(TARGET, "d1"), { method: "DELETE", path: "/widgets/d1", repeatable: true });
        });

        it("looks at an operation by its id under /data-services/v1beta1/async-operations, never reading its errors as its end", () => {
            assert.deepEqual(dialect.poll(HANDLE), { method: "GET", path: OPERATION_PATH, repeatable: true });
            // A handle from the stack's state that is not an id of the API's shape sends no request.
            for (const ref of ["a b", "..", "../admin", ""])
                assert.throws(
                    () => dialect.poll({ kind: "greenlake-operation", ref }),
                    /is not an id of the task API .* so no request was sent for it/,
                );
            assert.equal(dialect.pollsReadErrors(HANDLE), false);
        });

        it("reads a record as the API answers it", () => {
            assert.deepEqual(dialect.record(answer(200, { id: DATASTORE_ID })), { id: DATASTORE_ID });
        });
    });

    describe("what a write's answer means", () => {
        for (const [what, location] of [
            ["relative", OPERATION_PATH],
            ["absolute", `https://us1.data.cloud.hpe.com${OPERATION_PATH}`],
            [
                "on another host (only the id is kept, and read on the API's own origin)",
                `https://elsewhere.example${OPERATION_PATH}`,
            ],
        ]) {
            it(`follows the operation a 202's ${what} Location names, by its id`, () => {
                // The real API answers the POST with an empty object (create/post-response.json).
                const submitted = dialect.submitted("create", answer(202, {}, { Location: location }), NOW);
                assert.deepEqual(submitted, {
                    kind: "operation",
                    handle: HANDLE,
                    view: { state: "pending", status: "202 Accepted" },
                });
            });
        }

        it("has nothing to follow for a 202 without a Location: pending, so the engine looks the resource up", () => {
            assert.deepEqual(dialect.submitted("create", answer(202, { taskUri: OPERATION_PATH }), NOW), {
                kind: "done",
                view: { state: "pending", status: "202 without a Location" },
            });
        });

        for (const location of [
            "/widgets/w1",
            "/data-services/v1beta1/async-operations/",
            "/data-services/v1beta1/async-operations/a/b",
            "/data-services/v1beta1/async-operations/a%2Fb",
            "/data-services/v1beta1/async-operations/..",
            "/data-services/v1beta1/async-operations/%2e%2e",
            `${OPERATION_PATH}?force=true`,
            `${OPERATION_PATH}#x`,
            "/data-services/v1beta1/async-operations/%E0%A4%A",
            "http://[::1",
        ]) {
            it(`follows nothing a 202's Location ${JSON.stringify(location)} names: no async operation by an id of the API's shape`, () => {
                assert.deepEqual(dialect.submitted("create", answer(202, {}, { Location: location }), NOW), {
                    kind: "done",
                    view: { state: "pending", status: "202 whose Location names no async operation" },
                });
            });
        }

        it("takes a write answered at once as done: the record of a create or update, nothing of a delete", () => {
            assert.deepEqual(dialect.submitted("update", answer(200, { id: "d1" }), NOW), {
                kind: "done",
                view: { state: "succeeded", status: "200", record: { id: "d1" } },
            });
            assert.deepEqual(dialect.submitted("delete", answer(204), NOW), {
                kind: "done",
                view: { state: "succeeded", status: "204" },
            });
        });
    });

    describe("what a look at an operation says", () => {
        it("reads a running operation (async1.json): pending, its progress, and its suggested interval as the wait", () => {
            assert.deepEqual(dialect.polled(HANDLE, answer(200, operation()), NOW), {
                state: "pending",
                status: "RUNNING",
                progressPercent: 0,
                retryAfterMs: 30_000,
            });
        });

        for (const state of ["INITIALIZED", "RUNNING", "PAUSED", "UNSPECIFIED", "running", "Paused"]) {
            it(`reads ${state} as pending (states compared case-insensitively)`, () => {
                const view = dialect.polled(HANDLE, answer(200, operation({ state, progressPercent: 40 })), NOW);
                assert.deepEqual([view.state, view.status, view.progressPercent], ["pending", state, 40]);
                assert.equal(view.resourceId, undefined);
            });
        }

        it("leaves out a progress outside 0-100 and a negative or absent interval", () => {
            const odd = dialect.polled(
                HANDLE,
                answer(200, operation({ progressPercent: 140, suggestedPollingIntervalSeconds: -5 })),
                NOW,
            );
            assert.deepEqual(odd, { state: "pending", status: "RUNNING" });
            const { suggestedPollingIntervalSeconds: _, ...without } = operation();
            assert.equal(dialect.polled(HANDLE, answer(200, without), NOW).retryAfterMs, undefined);
            assert.equal(
                dialect.polled(HANDLE, answer(200, operation({ suggestedPollingIntervalSeconds: 0 })), NOW)
                    .retryAfterMs,
                0,
            );
        });

        it("reads what a create made from sourceResourceUri when associatedResources is empty (async5.json, FF-31311)", () => {
            assert.deepEqual(dialect.polled(HANDLE, answer(200, SUCCEEDED), NOW), {
                state: "succeeded",
                status: "SUCCEEDED",
                progressPercent: 100,
                retryAfterMs: 30_000,
                resourceId: DATASTORE_ID,
                resourceLocation: `/virtualization/v1beta1/datastores/${DATASTORE_ID}`,
            });
        });

        it("reads it from the one associated resource first, as HPE's provider will once FF-31311 is fixed", () => {
            const named = operation({
                ...SUCCEEDED,
                associatedResources: [
                    { name: "ds19", type: "datastore", resourceUri: "/virtualization/v1beta1/datastores/d-assoc" },
                ],
            });
            assert.equal(dialect.polled(HANDLE, answer(200, named), NOW).resourceId, "d-assoc");
        });

        it("names nothing when several resources are associated, or a URI's last segment is no id of the API", () => {
            const several = operation({
                ...SUCCEEDED,
                associatedResources: [
                    { type: "datastore", resourceUri: "/virtualization/v1beta1/datastores/d1" },
                    { type: "volume", resourceUri: "/api/v1/volumes/v1" },
                ],
            });
            assert.equal(dialect.polled(HANDLE, answer(200, several), NOW).resourceId, undefined);
            for (const uri of [
                "/virtualization/v1beta1/datastores/",
                "/virtualization/v1beta1/datastores/..",
                "/virtualization/v1beta1/datastores/a%2F..%2Fb",
                "/virtualization/v1beta1/datastores/d1?force=true",
                "/virtualization/v1beta1/datastores/%E0%A4%A",
            ]) {
                const view = dialect.polled(
                    HANDLE,
                    answer(200, operation({ ...SUCCEEDED, sourceResourceUri: uri })),
                    NOW,
                );
                assert.deepEqual([view.state, view.resourceId], ["succeeded", undefined], uri);
            }
            const none = operation({ ...SUCCEEDED, sourceResourceUri: null });
            assert.equal(dialect.polled(HANDLE, answer(200, none), NOW).resourceId, undefined);
        });

        it("keeps only the id of a resource URI, so it is read at the item's own path (HPE's path.Base)", () => {
            const elsewhere = operation({
                ...SUCCEEDED,
                sourceResourceUri: `https://elsewhere.example/virtualization/v1beta1/datastores/${DATASTORE_ID}`,
            });
            assert.equal(dialect.polled(HANDLE, answer(200, elsewhere), NOW).resourceId, DATASTORE_ID);
        });

        it("reads FAILED as failed, with the error's code and message, and what it made (to be replaced)", () => {
            const failed = operation({
                state: "FAILED",
                progressPercent: 100,
                error: { errorCode: "HPE_GL_DATASTORE_CREATE_FAILED", message: "no space on the array" },
                associatedResources: [
                    { type: "datastore", resourceUri: `/virtualization/v1beta1/datastores/${DATASTORE_ID}` },
                ],
            });
            assert.deepEqual(dialect.polled(HANDLE, answer(200, failed), NOW), {
                state: "failed",
                status: "FAILED",
                progressPercent: 100,
                retryAfterMs: 30_000,
                resourceId: DATASTORE_ID,
                resourceLocation: `/virtualization/v1beta1/datastores/${DATASTORE_ID}`,
                error: "HPE_GL_DATASTORE_CREATE_FAILED: no space on the array",
            });
        });

        it("says why from the operation's last log line when its error is null", () => {
            const failed = operation({
                state: "FAILED",
                logMessages: [
                    { message: "Create Datastore task is running", timestamp: "2024-07-29T12:42:46Z" },
                    { message: "Failed to create the datastore: LUN busy", timestamp: "2024-07-29T12:43:31Z" },
                ],
            });
            assert.equal(
                dialect.polled(HANDLE, answer(200, failed), NOW).error,
                "Failed to create the datastore: LUN busy",
            );
            const silent = operation({ state: "FAILED", logMessages: [] });
            assert.equal(dialect.polled(HANDLE, answer(200, silent), NOW).error, 'state "FAILED"');
        });

        it("reads TIMEDOUT as failed and CANCELLED (or Canceled) as canceled", () => {
            assert.equal(dialect.polled(HANDLE, answer(200, operation({ state: "TIMEDOUT" })), NOW).state, "failed");
            for (const state of ["CANCELLED", "Canceled"]) {
                const view = dialect.polled(HANDLE, answer(200, operation({ state })), NOW);
                assert.deepEqual([view.state, view.status], ["canceled", state]);
            }
        });

        it("ends an operation with a state the API does not document as failed, naming the states it knows", () => {
            const view = dialect.polled(HANDLE, answer(200, operation({ state: "QUEUED" })), NOW);
            assert.equal(view.state, "failed");
            assert.match(
                view.error ?? "",
                /^the operation's state "QUEUED" is none of INITIALIZED, RUNNING, PAUSED, UNSPECIFIED, SUCCEEDED, FAILED, TIMEDOUT, CANCELLED$/,
            );
        });

        for (const [what, body, problem] of [
            ["no state", operation({ state: undefined }), "it has no state"],
            ["a state that is not a string", operation({ state: 3 }), "it has no state"],
            ["a body that is no operation", ["RUNNING"], "it is not an object"],
            ["no body", undefined, "it is not an object"],
        ] as const) {
            it(`refuses an answer with ${what} as no operation: the look failed, the operation is not ended`, () => {
                assert.throws(
                    () => dialect.polled(HANDLE, answer(200, body), NOW),
                    (error: unknown) =>
                        error instanceof MalformedResponseError &&
                        error.status === 200 &&
                        error.problem === `the answer is not an async operation: ${problem}`,
                );
            });
        }
    });

    describe("what error statuses mean", () => {
        it("404 is not found, 409 a conflict (a name taken), 422 a token reused, 429 throttling; others nothing", () => {
            assert.deepEqual(
                [404, 409, 422, 429, 400, 401, 500, 503].map((status) => dialect.meaning(status, undefined)),
                ["not-found", "conflict", "token-reused", "throttled", undefined, undefined, undefined, undefined],
            );
            assert.equal(dialect.meaning(409, { error: "conflict", existingId: "d1" }), "conflict");
        });
    });
});
