// Guards every path of seed 003 (a resource created by an asynchronous task) for tasks.Datastore, through
// the real dynamic-provider process and the real task API server: a failed POST records nothing; an
// accepted one is followed to full state; a failed task, a passed deadline, failing polls and SIGINT each
// end in partial, tainted state; untaint finds, re-creates or stays partial; refresh removes what is
// gone; a pending create is resumed by its token or refused like row 4; a lost POST answer never makes a
// duplicate or a zombie; resize, replace and delete; progress reaches the engine; the token never leaks.

import { strict as assert } from "node:assert";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../provider/tasks/protocol/wire";
import {
    CLUSTER,
    type DatastoreFixture,
    datastoreFixture,
    datastoreId,
    GIB,
    HCI,
    type SharedProvider,
    sharedProvider,
    TOKEN,
} from "../support/datastoreFixture";
import { type Props, ProviderCallError } from "../support/providerServer";
import { API_DATASTORE_ID, apiList, apiRecord } from "./io/realShapes";

/** The error of a call that must fail. */
async function failure(call: Promise<unknown>): Promise<ProviderCallError> {
    const error = await call.then(
        () => assert.fail("the call succeeded"),
        (e: unknown) => e,
    );
    assert.ok(error instanceof ProviderCallError, String(error));
    return error;
}

/** Polls an operation over HTTP until it ends (tasks in these tests end after a number of polls). */
async function finishTask(f: DatastoreFixture, taskId: string): Promise<void> {
    for (let i = 0; i < 10; i++) {
        const answer = await fetch(`${f.api.url}${ASYNC_OPERATIONS_PATH}/${taskId}`, {
            headers: { authorization: f.api.authorization },
        });
        const { state } = (await answer.json()) as { state: string };
        if (state === "SUCCEEDED" || state === "FAILED") return;
    }
    assert.fail(`task ${taskId} did not end`);
}

/** Creates a datastore directly through the API, as another tool (or a killed process) would. */
async function createDirectly(f: DatastoreFixture, name: string, idempotencyKey?: string): Promise<string> {
    const answer = await fetch(`${f.api.url}${DATASTORES_PATH}`, {
        method: "POST",
        headers: {
            authorization: f.api.authorization,
            "content-type": "application/json",
            ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
        },
        body: JSON.stringify({
            name,
            sizeInBytes: 16 * GIB,
            storageSystemId: HCI,
            targetHypervisorClusterId: CLUSTER,
            datastoreType: "VMFS",
        }),
    });
    assert.equal(answer.status, 202);
    return (answer.headers.get("location") ?? "").split("/").at(-1) ?? "";
}

function assertNoToken(...texts: unknown[]): void {
    for (const text of texts) assert.ok(!JSON.stringify(text ?? "").includes(TOKEN), "the API token leaked");
}

describe("tasks.Datastore through the provider process (seed 003)", () => {
    let f: DatastoreFixture;
    afterEach(async () => {
        assertNoToken(f.provider.stderr, f.provider.stdout, f.engine.messages);
        await f.close();
    });
    // The tests that neither stop the provider process nor configure it again share one, as the
    // resources of one `pulumi up` do; each has its own task API server.
    let shared: SharedProvider;
    before(async () => {
        shared = await sharedProvider();
    });
    after(() => shared.close());

    for (const echoIdempotencyKey of [false, true]) {
        describe(`create (${echoIdempotencyKey ? "a server that echoes the Idempotency-Key in the datastore" : "a server that keeps no key on the datastore, as the real API"})`, () => {
            beforeEach(async () => {
                f = await shared.fixture({ echoIdempotencyKey });
            });

            it("POST accepted, task succeeds, GET by natural key: full state, id = natural key", async () => {
                const { id, properties } = await f.create("ds19", { createToken: "create-1" });
                assert.equal(id, datastoreId("ds19"));
                const [made] = f.api.datastores();
                assert.equal(properties.datastoreId, made?.id);
                assert.equal(properties.state, "OK");
                assert.equal(properties.tainted, false);
                assert.equal(typeof properties.taskId, "string");
                assert.equal(made?.idempotencyKey, echoIdempotencyKey ? "create-1" : undefined);
                assertNoToken(properties);
            });

            it("POST answered 500 once: sent again with the key it went with; one datastore, nothing partial", async () => {
                f.api.addFault({ match: { method: "POST", path: DATASTORES_PATH }, fault: { status: 500 } });
                const { properties } = await f.create("ds19");
                assert.equal(properties.state, "OK");
                const posts = f.api.requests().filter((r) => r.method === "POST");
                assert.deepEqual(
                    posts.map((r) => r.status),
                    [500, 202],
                );
                assert.equal(
                    posts[0]?.idempotencyKey,
                    posts[1]?.idempotencyKey,
                    "one key: a replay, never a second create",
                );
                assert.equal(f.api.datastores().length, 1);
            });

            it("POST answered 500 every time (outcome unknown): partial state without a datastore id; the next up creates it", async () => {
                f.api.addFault({ match: { method: "POST", path: DATASTORES_PATH }, times: 50, fault: { status: 500 } });
                const error = await failure(f.create("ds19"));
                const partial = error.initFailure;
                assert.ok(partial, "recorded: the server may have made it");
                assert.equal(partial.properties.datastoreId, undefined);
                assert.equal(partial.properties.tainted, false);
                assert.match(error.details, /answered POST \/virtualization\/v1beta1\/datastores with 500/);
                assert.match(error.details, /outcome is unknown .* the next `pulumi up` finds it by its natural key/);
                assert.equal(f.api.datastores().length, 0);
                f.api.clearFaults();
                const { properties } = await f.update("ds19", partial.properties, {});
                assert.equal(properties.state, "OK");
                assert.equal(properties.datastoreId, f.api.datastores()[0]?.id);
                assert.equal(f.api.datastores().length, 1);
            });

            it("POST refused with 409 by a datastore made elsewhere: nothing is recorded, and the error says how to adopt", async () => {
                await createDirectly(f, "ds19");
                const error = await failure(f.create("ds19", { createToken: "mine" }));
                assert.equal(error.initFailure, undefined, "nothing of ours exists");
                assert.match(error.details, /none of the creates of this resource's createToken made it/);
                assert.equal(f.api.datastores().length, 1);
            });

            it("task FAILED: partial state, tainted, with the task and its reason", async () => {
                f.api.addFault({ match: { method: "POST" }, fault: { task: { fails: "disk array offline" } } });
                const error = await failure(f.create("ds19"));
                const partial = error.initFailure;
                assert.ok(partial, "partial state");
                assert.equal(partial.id, datastoreId("ds19"));
                assert.equal(partial.properties.tainted, true);
                assert.match(String(partial.properties.taintReason), /disk array offline/);
                assert.equal(typeof partial.properties.taskId, "string");
                assert.equal(typeof partial.properties.__provider, "string", "later operations can still run");
                assert.match(
                    partial.reasons.join("\n"),
                    /ended failed \(FAILED\): INJECTED_FAILURE: disk array offline/,
                );
            });

            it("deadline passed: partial state, tainted, saying to raise the timeout", async () => {
                f.api.addFault({ match: { method: "POST" }, fault: { task: { completeAfterPolls: 1_000_000 } } });
                const error = await failure(f.create("ds19", { timeouts: { create: "150ms" } }));
                assert.equal(error.initFailure?.properties.tainted, true);
                assert.match(
                    String(error.initFailure?.properties.taintReason),
                    /gave up waiting for the create of datastore "ds19" .* raise `timeouts.create` if it needs longer/,
                );
            });

            it("polling keeps failing: partial state, tainted", async () => {
                f.api.addFault({
                    match: { method: "GET", path: ASYNC_OPERATIONS_PATH },
                    times: 100,
                    fault: { status: 500 },
                });
                const error = await failure(f.create("ds19"));
                assert.equal(error.initFailure?.properties.tainted, true);
                assert.match(
                    String(error.initFailure?.properties.taintReason),
                    /could not look at the create of datastore "ds19" .*async-operations\/[0-9a-f-]+ with 500/,
                );
            });

            it("a create token makes a lost POST answer harmless: retried, one datastore", async () => {
                f.api.addFault({ match: { method: "POST" }, fault: { loseResponse: true } });
                const { properties } = await f.create("ds19", { createToken: "create-lost" });
                assert.equal(properties.state, "OK");
                assert.equal(f.api.datastores().length, 1);
                const posts = f.api.requests().filter((r) => r.method === "POST");
                assert.deepEqual(
                    posts.map((r) => r.status),
                    [null, 202],
                    "the lost POST, then its replay",
                );
            });

            it("without a token, a lost POST answer is replayed by the key the create went with: one datastore, never a zombie", async () => {
                f.api.addFault({ match: { method: "POST" }, fault: { loseResponse: true } });
                const { properties } = await f.create("ds19");
                const [made] = f.api.datastores();
                assert.equal(properties.datastoreId, made?.id, "the one the lost POST made");
                const posts = f.api.requests().filter((r) => r.method === "POST");
                assert.deepEqual(
                    posts.map((r) => r.status),
                    [null, 202],
                );
                assert.equal(posts[0]?.idempotencyKey, posts[1]?.idempotencyKey);
                assert.equal(f.api.datastores().length, 1);
            });

            it("without a token, every answer lost: partial state the next up resolves by the key it went with, never a zombie", async () => {
                f.api.addFault({ match: { method: "POST" }, times: 50, fault: { loseResponse: true } });
                const error = await failure(f.create("ds19"));
                const partial = error.initFailure;
                assert.ok(partial, "recorded: the datastore was made");
                assert.equal(partial.properties.datastoreId, undefined);
                assert.equal(typeof partial.properties.createKey, "string", "the key it went with, to replay");
                assert.match(partial.reasons.join("\n"), /outcome is unknown/);
                f.api.clearFaults();
                const [made] = f.api.datastores();
                const { properties } = await f.update("ds19", partial.properties, {});
                assert.equal(properties.datastoreId, made?.id, "the one the lost POST made");
                assert.equal(properties.createKey, undefined, "resolved: nothing left to replay");
                assert.equal(f.api.datastores().length, 1);
            });

            for (const [what, fault] of [
                ["a 202 without Location", { omitLocation: true }],
                ["a 202 whose body is not JSON", { invalidJson: true }],
            ] as const) {
                it(`with a token, ${what} is partial state; the next up replays the token and records it`, async () => {
                    f.api.addFault({ match: { method: "POST" }, fault });
                    const error = await failure(f.create("ds19", { createToken: "unreadable" }));
                    const partial = error.initFailure;
                    assert.ok(partial, "recorded: the datastore was made");
                    assert.equal(partial.properties.datastoreId, undefined);
                    assert.match(partial.reasons.join("\n"), /outcome is unknown .* by replaying its createToken/);
                    const { properties } = await f.update("ds19", partial.properties, {});
                    assert.equal(properties.datastoreId, f.api.datastores()[0]?.id);
                    assert.equal(f.api.datastores().length, 1, "no duplicate");
                });
            }

            it("moves past a spent key (its datastore deleted since) with one POST per key, never a loop", async () => {
                const first = await f.create("ds19", { createToken: "chain" });
                const deleted = await fetch(`${f.api.url}${DATASTORES_PATH}/${first.properties.datastoreId}`, {
                    method: "DELETE",
                    headers: { authorization: f.api.authorization },
                });
                await finishTask(f, (deleted.headers.get("location") ?? "").split("/").at(-1) ?? "");
                f.api.clearRequests();
                const again = await f.create("ds19", { createToken: "chain" });
                assert.notEqual(again.properties.datastoreId, first.properties.datastoreId);
                const posts = f.api.requests().filter((r) => r.method === "POST");
                assert.deepEqual(
                    posts.map((r) => r.status),
                    [202, 202],
                    "the spent key's replay, then one new create",
                );
                assert.equal(f.api.datastores().length, 1);
            });

            it("resumes a pending create that carries its token: the same task, no duplicate", async () => {
                const taskId = await createDirectly(f, "ds19", "pending-token");
                const { properties } = await f.create("ds19", { createToken: "pending-token" });
                assert.equal(properties.taskId, taskId, "followed the task the first POST started");
                assert.equal(f.api.datastores().length, 1);
            });

            it("refuses a datastore it did not create, like row 4, saying how to adopt it", async () => {
                await createDirectly(f, "ds19");
                const error = await failure(f.create("ds19", { createToken: "mine" }));
                assert.equal(error.initFailure, undefined);
                assert.match(error.details, /datastore "ds19" .* already exists \(id [0-9a-f-]+, CREATING/);
                assert.match(error.details, /set `adopt: true`/);
                assert.equal(f.api.datastores().length, 1);
            });

            it("adopts a matching datastore with adopt: true, without a POST", async () => {
                const taskId = await createDirectly(f, "ds19");
                await finishTask(f, taskId);
                f.api.clearRequests();
                const { properties } = await f.create("ds19", { adopt: true });
                assert.equal(properties.state, "OK");
                assert.deepEqual(
                    f.api.requests().map((r) => r.method),
                    ["GET"],
                );
            });

            it("refuses to adopt a datastore that differs, naming each difference", async () => {
                await finishTask(f, await createDirectly(f, "ds19"));
                const error = await failure(
                    f.create("ds19", { adopt: true, sizeInBytes: 32 * GIB, datastoreType: "NFS" }),
                );
                assert.match(error.details, /sizeInBytes: the API has 17179869184, the program has 34359738368/);
                assert.match(error.details, /datastoreType: the API has VMFS, the program has NFS/);
            });

            it("reports the task's progress to the engine, as ephemeral info messages", async () => {
                await f.create("ds19");
                const lines = f.engine.messages.map((m) => m.message);
                assert.ok(
                    lines.some((line) => /^the create of datastore "ds19" \(.*\): INITIALIZED 0%$/.test(line)),
                    lines.join("\n"),
                );
                assert.ok(lines.some((line) => /^the create of datastore "ds19" \(.*\): RUNNING \d+%$/.test(line)));
                assert.ok(lines.some((line) => /^the create of datastore "ds19" \(.*\): SUCCEEDED 100%$/.test(line)));
                assert.ok(f.engine.messages.every((m) => m.ephemeral && m.severity === 1));
            });
        });
    }

    describe("untaint, update, refresh and delete", () => {
        beforeEach(async () => {
            f = await shared.fixture();
        });

        /**
         * A tainted datastore whose create task is still running: every poll failed, so the create gave up.
         * The fault is then lifted, so the task can end under the next operation.
         */
        async function tainted(): Promise<Props> {
            f.api.addFault({
                match: { method: "GET", path: ASYNC_OPERATIONS_PATH },
                times: 100,
                fault: { status: 500 },
            });
            const error = await failure(f.create("ds19"));
            f.api.clearFaults();
            assert.ok(error.initFailure);
            assert.equal(f.api.datastores()[0]?.state, "CREATING");
            return error.initFailure.properties;
        }

        it("untaint, datastore found: full state, no longer tainted", async () => {
            const olds = await tainted();
            const ds = f.api.datastores()[0];
            assert.ok(ds);
            // The task is still running at the API: untaint follows it to its end.
            const { properties } = await f.update("ds19", olds, { untaint: true });
            assert.equal(properties.tainted, false);
            assert.equal(properties.state, "OK");
            assert.equal(properties.datastoreId, ds.id);
            assert.equal(f.api.datastores().length, 1);
        });

        it("untaint, datastore gone: created again", async () => {
            const olds = await tainted();
            const gone = f.api.datastores()[0];
            assert.ok(gone);
            // Its create ends, then someone deletes it through the API.
            await finishTask(f, String(olds.taskId));
            const deleted = await fetch(`${f.api.url}${DATASTORES_PATH}/${gone.id}`, {
                method: "DELETE",
                headers: { authorization: f.api.authorization },
            });
            await finishTask(f, (deleted.headers.get("location") ?? "").split("/").at(-1) ?? "");
            const { properties } = await f.update("ds19", olds, { untaint: true });
            assert.equal(properties.tainted, false);
            assert.equal(properties.state, "OK");
            assert.notEqual(properties.datastoreId, gone.id, "a new datastore");
        });

        it("untaint, lookup failing: stays partial, still tainted", async () => {
            const olds = await tainted();
            f.api.addFault({ match: { method: "GET", path: DATASTORES_PATH }, times: 100, fault: { status: 500 } });
            const error = await failure(f.update("ds19", olds, { untaint: true }));
            assert.equal(error.initFailure?.properties.tainted, true);
            assert.match(error.details, /datastore "ds19" .*: could not look it up: the task API answered GET/);
        });

        it("grows the size through a PATCH task, keeping the id", async () => {
            const created = await f.create("ds19");
            const { properties } = await f.update("ds19", created.properties, { sizeInBytes: 32 * GIB });
            assert.equal(properties.sizeInBytes, 32 * GIB);
            assert.equal(properties.datastoreId, created.properties.datastoreId);
            assert.ok(f.api.requests().some((r) => r.method === "PATCH" && r.status === 202));
        });

        it("refuses to shrink in check, before any request", async () => {
            const created = await f.create("ds19");
            const checked = await f.provider.check(
                f.urn("ds19"),
                created.properties,
                await f.args("ds19", { sizeInBytes: 8 * GIB }),
            );
            assert.deepEqual(
                checked.failures.map((failure) => failure.property),
                ["sizeInBytes"],
            );
            assert.match(checked.failures[0]?.reason ?? "", /cannot shrink in place/);
        });

        it("replaces on a natural-key change (create first) and on a type change (delete first)", async () => {
            const created = await f.create("ds19");
            const urn = f.urn("ds19");
            const renamed = (await f.provider.check(urn, created.properties, await f.args("ds20"))).inputs;
            assert.deepEqual(await f.provider.diff(urn, created.id, created.properties, renamed), {
                changes: "some",
                replaces: ["name"],
                deleteBeforeReplace: false,
            });
            const retyped = (
                await f.provider.check(urn, created.properties, await f.args("ds19", { datastoreType: "NFS" }))
            ).inputs;
            assert.deepEqual(await f.provider.diff(urn, created.id, created.properties, retyped), {
                changes: "some",
                replaces: ["datastoreType"],
                deleteBeforeReplace: true,
            });
        });

        it("replaces a tainted datastore unless untaint is set", async () => {
            const olds = await tainted();
            const news = (await f.provider.check(f.urn("ds19"), olds, await f.args("ds19"))).inputs;
            assert.deepEqual(await f.provider.diff(f.urn("ds19"), datastoreId("ds19"), olds, news), {
                changes: "some",
                replaces: ["tainted"],
                deleteBeforeReplace: true,
            });
            const kept = (await f.provider.check(f.urn("ds19"), olds, await f.args("ds19", { untaint: true }))).inputs;
            const diff = await f.provider.diff(f.urn("ds19"), datastoreId("ds19"), olds, kept);
            assert.deepEqual(diff.replaces, []);
        });

        it("refresh: gone means no id (removed from state); present means refreshed", async () => {
            const created = await f.create("ds19");
            const read = await f.provider.read(f.urn("ds19"), created.id, created.properties);
            assert.equal(read.id, created.id);
            assert.equal(read.properties.datastoreId, created.properties.datastoreId);
            await f.provider.delete(f.urn("ds19"), created.id, created.properties);
            const gone = await f.provider.read(f.urn("ds19"), created.id, created.properties);
            assert.equal(gone.id, "");
        });

        it("deletes through a DELETE task, after a create task of its own that is still running", async () => {
            const olds = await tainted();
            await f.provider.delete(f.urn("ds19"), datastoreId("ds19"), olds);
            assert.equal(f.api.datastores().length, 0);
        });

        it("treats a datastore already gone as deleted", async () => {
            const created = await f.create("ds19");
            await f.provider.delete(f.urn("ds19"), created.id, created.properties);
            await f.provider.delete(f.urn("ds19"), created.id, created.properties);
            assert.equal(f.api.datastores().length, 0);
        });
    });

    describe("any server of the contract: throttling everywhere, lagging lists, ERROR, an interrupted POST", () => {
        // Retry-After: 0, so that the process never waits on the wall clock: that a client waits the
        // Retry-After a server asks for is taskApiClient.test.ts's, on injected time.
        it("creates 6 datastores with 30% of every request answered 429 + Retry-After: 0", async () => {
            f = await datastoreFixture({ seed: 7 });
            f.api.addFault({ probability: 0.3, times: 1_000_000, fault: { status: 429, retryAfterSeconds: 0 } });
            const names = ["t1", "t2", "t3", "t4", "t5"];
            const made = await Promise.all([
                ...names.map((name) => f.create(name, { createToken: `tok-${name}` })),
                f.create("plain"),
            ]);
            assert.ok(made.every(({ properties }) => properties.state === "OK"));
            const statuses = f.api.requests().map((r) => r.status);
            assert.ok(statuses.filter((status) => status === 429).length > 0, "the server did throttle");
            assert.ok(
                f.api.requests().some((r) => r.status === 429 && r.method === "GET" && r.path === DATASTORES_PATH),
                "lookups were throttled too",
            );
            assert.equal(f.api.datastores().length, 6, "no duplicate");
        });

        it("makes one POST and one datastore when the list lags far behind (identity from the task)", async () => {
            f = await datastoreFixture({ listLagMs: 600_000, taskCompleteAfterPolls: 1 });
            const { properties } = await f.create("ds19", { createToken: "lagging" });
            assert.equal(properties.datastoreId, f.api.datastores()[0]?.id);
            assert.equal(f.api.requests().filter((r) => r.method === "POST").length, 1);
            assert.equal(f.api.datastores().length, 1);
            // Another resource with the same name: the list hides the datastore, the 409 names it.
            const error = await failure(f.create("ds19", { createToken: "someone-else" }));
            assert.match(error.details, /already exists \(id [0-9a-f-]+, OK/);
            assert.equal(f.api.datastores().length, 1);
        });

        it("offers a way out of a datastore in ERROR: adopt takes it over tainted, so the next up replaces it", async () => {
            f = await datastoreFixture();
            f.api.addFault({ match: { method: "POST" }, fault: { task: { fails: "array offline" } } });
            const taskId = await createDirectly(f, "ds19");
            await finishTask(f, taskId);
            const [broken] = f.api.datastores();
            assert.equal(broken?.state, "ERROR");
            const refused = await failure(f.create("ds19"));
            assert.match(
                refused.details,
                /set `adopt: true` \(in state ERROR it is taken over tainted, and the next `pulumi up` replaces it\)/,
            );
            const error = await failure(f.create("ds19", { adopt: true }));
            const partial = error.initFailure;
            assert.equal(partial?.properties.datastoreId, broken?.id);
            assert.equal(partial?.properties.tainted, true);
            assert.match(String(partial?.properties.taintReason), /the next `pulumi up` replaces it/);
        });

        for (const token of ["in-flight", undefined]) {
            it(`records SIGINT while the POST is in flight (${token ? "with" : "without"} a token) as partial state, never a zombie`, async () => {
                f = await datastoreFixture();
                f.api.addFault({ match: { method: "POST" }, fault: { delayMs: 60_000 } });
                const create = failure(f.create("ds19", token ? { createToken: token } : {}));
                while (f.api.datastores().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
                f.provider.kill("SIGINT");
                const error = await create;
                assert.equal(await f.provider.waitForExit(), 130);
                const partial = error.initFailure;
                assert.ok(partial, "the stack records the create");
                assert.equal(partial.properties.datastoreId, undefined);
                assert.equal(partial.properties.tainted, false);
                assert.match(partial.reasons.join("\n"), /outcome is unknown/);
                assert.equal(f.api.datastores().length, 1, "made by the POST the SIGINT cut off");
            });
        }
    });

    describe("SIGINT while polling", () => {
        beforeEach(async () => {
            f = await datastoreFixture();
        });

        it("answers the create as partial state to resume and exits well within the engine's 5 s", async () => {
            f.api.addFault({ match: { method: "POST" }, fault: { task: { completeAfterPolls: 1_000_000 } } });
            const create = failure(f.create("ds19"));
            while (f.api.requests().filter((r) => r.path.startsWith(ASYNC_OPERATIONS_PATH)).length < 3) {
                await new Promise((resolve) => setTimeout(resolve, 5));
            }
            const interrupted = Date.now();
            f.provider.kill("SIGINT");
            const error = await create;
            const exitCode = await f.provider.waitForExit();
            const elapsed = Date.now() - interrupted;
            console.log(`      answered and exited ${elapsed} ms after SIGINT`);
            assert.equal(error.initFailure?.properties.tainted, false, "not tainted: the task runs on");
            assert.equal(typeof error.initFailure?.properties.taskId, "string");
            assert.match(
                String(error.initFailure?.reasons),
                /stopped following the create of datastore "ds19" .*interrupted; it runs on at the API; the next `pulumi up` follows it to its end/,
            );
            assert.equal(exitCode, 130);
            assert.ok(elapsed < 4000, `${elapsed} ms`);
        });
    });

    describe("refresh against a server answering the real API's record (issue 19, greenlake)", () => {
        it("records capacityInBytes as sizeInBytes, through the provider process to the engine", async () => {
            // HPE's captured record: capacityInBytes, clusterInfo {id, name, ...}, datacentersInfo, and the
            // volumes' own sizeInBytes nested in volumesInfo. What `pulumi refresh` reads from the real API.
            const record = { ...apiRecord(HCI, CLUSTER), capacityInBytes: 48 * GIB };
            const server = createServer((request, response) => {
                response.setHeader("content-type", "application/json");
                const list = (request.url ?? "").startsWith(`${DATASTORES_PATH}?`);
                response.end(JSON.stringify(list ? apiList([record]) : record));
            });
            server.listen(0, "127.0.0.1");
            await once(server, "listening");
            f = await datastoreFixture();
            try {
                await f.provider.configure({
                    "pulumi-lifecycle:taskApiUrl": `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
                    "pulumi-lifecycle:taskApiToken": TOKEN,
                });
                const state = { ...(await f.args("ds19")), datastoreId: API_DATASTORE_ID, state: "OK", tainted: false };
                const { id, properties } = await f.provider.read(f.urn("ds19"), datastoreId("ds19"), state);
                assert.equal(id, datastoreId("ds19"));
                assert.deepEqual(
                    [properties.sizeInBytes, properties.datastoreId, properties.clusterId, properties.state],
                    [48 * GIB, API_DATASTORE_ID, CLUSTER, "OK"],
                );
            } finally {
                server.close();
            }
        });
    });

    describe("refresh of an ambiguous natural key", () => {
        it("fails, naming every datastore that matches", async () => {
            // The API keeps names unique per cluster; a server that does not must not be papered over.
            const two = (id: string) => ({ ...apiRecord(HCI, CLUSTER), id });
            const server = createServer((_request, response) => {
                response.setHeader("content-type", "application/json");
                response.end(JSON.stringify(apiList([two("id-one"), two("id-two")])));
            });
            server.listen(0, "127.0.0.1");
            await once(server, "listening");
            f = await datastoreFixture();
            try {
                await f.provider.configure({
                    "pulumi-lifecycle:taskApiUrl": `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
                    "pulumi-lifecycle:taskApiToken": TOKEN,
                });
                const error = await failure(f.provider.read(f.urn("ds19"), datastoreId("ds19"), await f.args("ds19")));
                assert.match(
                    error.details,
                    /matches 2 resources \(ids id-one, id-two\); the natural key must name one/,
                );
            } finally {
                server.close();
            }
        });
    });
});
