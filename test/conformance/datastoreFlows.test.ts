// Guards the flows of seed 003 (a resource created by an asynchronous task) for tasks.Datastore at the
// level users meet them: programs run by the harness (the engine's step rules, state between runs),
// the real provider process, the real task API server. A full create; a failed task leaving tainted
// state that the next up replaces; untaint finding or re-creating it; refresh forgetting what is gone;
// a create whose provider was killed resumed by its token (no duplicate) or refused like row 4 without
// one; a delete task that reports success while the datastore stays (issue 18), kept in the stack; a pending
// create whose task failed since, which refresh records tainted and the next up replaces (issue 18, chaos
// finding 4-state-refresh-keeps-failed-datastore); the API token passed as a secret and never stored.

import { strict as assert } from "node:assert";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as random from "@pulumi/random";
import { tasks } from "pulumi-lifecycle";
import type { TaskApiServer } from "../../provider/taskApiServer/taskApiServer";
import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../provider/tasks/protocol/wire";
import { Harness, type RunResult } from "../harness/harness";
import { CLUSTER, GIB, HCI, startTaskApiServerOn, TOKEN } from "../support/datastoreFixture";
import { makeProject, resetProject, type TempDir } from "../support/projects";
import type { ProviderServer } from "../support/providerServer";

/** The program of the issue, with a create token from @pulumi/random. */
function program(overrides: Partial<tasks.DatastoreArgs> = {}, withToken = true) {
    return () => {
        const token = withToken ? new random.RandomUuid("ds19-token").result : undefined;
        const ds = new tasks.Datastore("ds19", {
            hciClusterUuid: HCI,
            clusterId: CLUSTER,
            name: "ds19",
            sizeInBytes: 16 * GIB,
            datastoreType: "VMFS",
            ...(token ? { createToken: token } : {}),
            ...overrides,
        });
        return { datastoreId: ds.datastoreId, state: ds.state, tainted: ds.tainted };
    };
}

function callsOf(result: RunResult): string[] {
    return result.calls.map((call) => `${call.method}${call.outcome === "ok" ? "" : ` (${call.outcome})`}`);
}

function datastoreState(result: RunResult) {
    return result.state.resources.find((r) => r.name === "ds19");
}

describe("seed 003 flows for tasks.Datastore, through programs", () => {
    let api: TaskApiServer;
    let project: TempDir;
    let harness: Harness;
    let port: number | undefined;

    // One project for the suite, each test with a new server on the same port and the project reset
    // after it: the runs of consecutive tests then share the provider process the harness parks.
    before(async () => {
        project = await makeProject("datastore-flows");
    });
    after(() => project?.cleanup());
    beforeEach(async () => {
        api = await startTaskApiServerOn(port, { token: TOKEN, taskCompleteAfterPolls: 3 });
        port = api.port;
        harness = new Harness({
            projectDir: project.dir,
            stateFile: join(project.dir, "state.json"),
            config: { "pulumi-lifecycle:taskApiUrl": api.url, "pulumi-lifecycle:taskApiToken": { secret: TOKEN } },
            env: { TASK_POLL_INITIAL_MS: "2", TASK_POLL_MAX_MS: "10" },
        });
    });
    afterEach(async () => {
        const state = await readFile(join(project.dir, "state.json"), "utf8").catch(() => "");
        assert.ok(!state.includes(TOKEN), "the API token is never stored");
        await api.close();
        await resetProject(project);
    });

    /** Makes the next create's polls fail until the client gives up, leaving its task running. */
    function failPolls(): void {
        api.addFault({ match: { method: "GET", path: ASYNC_OPERATIONS_PATH }, times: 100, fault: { status: 500 } });
    }

    it("creates through POST, task and GET; up again changes nothing; destroy deletes", async () => {
        const created = await harness.up({ program: program() });
        assert.ok(created.ok, created.plan);
        assert.deepEqual(callsOf(created), ["Check", "Create"]);
        assert.equal(created.outputs.state, "OK");
        assert.equal(created.outputs.tainted, false);
        assert.equal(created.outputs.datastoreId, api.datastores()[0]?.id);
        const posts = api.requests().filter((r) => r.method === "POST");
        assert.deepEqual(
            posts.map((r) => r.idempotencyKey),
            [datastoreState(created)?.inputs.createToken],
        );
        const again = await harness.up({ program: program() });
        assert.deepEqual(callsOf(again), ["Check", "Diff"]);
        const destroyed = await harness.destroy();
        assert.ok(destroyed.ok, destroyed.plan);
        assert.deepEqual(api.datastores(), []);
    });

    it("records a failed task as tainted partial state; the next up deletes what exists and creates afresh", async () => {
        api.addFault({ match: { method: "POST" }, fault: { task: { fails: "no space on the array" } } });
        const failed = await harness.up({ program: program() });
        assert.equal(failed.ok, false);
        assert.deepEqual(callsOf(failed), ["Check", "Create (partial)"]);
        const partial = datastoreState(failed);
        assert.equal(partial?.outputs.tainted, true);
        assert.match(String(partial?.initErrors), /no space on the array/);
        const broken = api.datastores()[0];
        assert.equal(broken?.state, "ERROR");

        const replaced = await harness.up({ program: program() });
        assert.ok(replaced.ok, replaced.plan);
        assert.deepEqual(callsOf(replaced), ["Check", "Diff", "Check", "Delete", "Create"]);
        assert.equal(replaced.steps.find((s) => s.name === "ds19")?.detail, "tainted; delete before replace");
        const [fresh] = api.datastores();
        assert.equal(api.datastores().length, 1);
        assert.equal(fresh?.state, "OK");
        assert.notEqual(fresh?.id, broken?.id);
        assert.equal(datastoreState(replaced)?.initErrors, undefined);
        // The token's first create was spent on the failed one (its replay names a datastore that is
        // gone): the replacement used the next key.
        const token = datastoreState(replaced)?.inputs.createToken;
        const posts = api.requests().filter((r) => r.method === "POST" && r.status === 202);
        assert.deepEqual(
            posts.map((r) => r.idempotencyKey),
            [token, token, `${token}~1`],
        );
    });

    it("updates a partial datastore on the next up: Diff marks the unresolved create a change (init errors force it too)", async () => {
        // Reading back the datastore the task names fails, so the create is partial but not tainted.
        api.addFault({ match: { method: "GET", path: `${DATASTORES_PATH}/` }, times: 100, fault: { status: 500 } });
        const partial = await harness.up({ program: program() });
        api.clearFaults();
        assert.equal(partial.ok, false);
        assert.deepEqual(callsOf(partial), ["Check", "Create (partial)"]);
        assert.equal(datastoreState(partial)?.outputs.tainted, false);
        assert.match(String(datastoreState(partial)?.initErrors), /ended succeeded, but reading what it made failed/);

        const healed = await harness.up({ program: program() });
        assert.ok(healed.ok, healed.plan);
        assert.deepEqual(callsOf(healed), ["Check", "Diff", "Update"]);
        assert.equal(
            healed.calls[1]?.changes,
            "some",
            "a create not resolved yet is a change: a refresh clearing the init errors cannot strand it",
        );
        assert.equal(datastoreState(healed)?.initErrors, undefined);
        assert.equal(healed.outputs.datastoreId, api.datastores()[0]?.id);
        assert.equal(api.datastores().length, 1);
    });

    it("a pending create whose task failed since: refresh records it tainted, and the next up replaces it", async () => {
        // The POST's answers are lost (a gateway's 502 after the API acted): a pending create, not tainted.
        api.addFault({ match: { method: "POST" }, fault: { task: { fails: "no space on the array" } } });
        const gateway = await losingPostAnswers(api);
        try {
            const through = new Harness({
                projectDir: project.dir,
                stateFile: join(project.dir, "state.json"),
                config: {
                    "pulumi-lifecycle:taskApiUrl": gateway.url,
                    "pulumi-lifecycle:taskApiToken": { secret: TOKEN },
                },
                env: { TASK_POLL_INITIAL_MS: "2", TASK_POLL_MAX_MS: "10" },
            });
            const pending = await through.up({ program: program({}, false) });
            assert.deepEqual(callsOf(pending), ["Check", "Create (partial)"]);
            assert.equal(datastoreState(pending)?.outputs.tainted, false);
            assert.equal(datastoreState(pending)?.outputs.datastoreId, undefined);
            gateway.stopLosing();
            await finishTask(api, gateway.taskLocation());
            const broken = api.datastores()[0];
            assert.equal(broken?.state, "ERROR");

            const refreshed = await through.refresh();
            assert.deepEqual(callsOf(refreshed), ["Read"]);
            const recorded = datastoreState(refreshed);
            assert.equal(recorded?.initErrors, undefined, "the engine drops init errors on a successful read");
            assert.equal(recorded?.outputs.datastoreId, broken?.id);
            assert.equal(recorded?.outputs.tainted, true);
            assert.match(
                String(recorded?.outputs.taintReason),
                /in state ERROR at the API; the next `pulumi up` replaces it/,
            );

            const replaced = await through.up({ program: program({}, false) });
            assert.ok(replaced.ok, replaced.plan);
            assert.deepEqual(callsOf(replaced), ["Check", "Diff", "Check", "Delete", "Create"]);
            const [fresh] = api.datastores();
            assert.equal(api.datastores().length, 1);
            assert.equal(fresh?.state, "OK");
            assert.notEqual(fresh?.id, broken?.id);
            assert.equal(replaced.outputs.tainted, false);
        } finally {
            await gateway.close();
        }
    });

    it("untaint keeps a tainted datastore: the next up finds it and records it in full", async () => {
        failPolls();
        const failed = await harness.up({ program: program() });
        api.clearFaults();
        assert.equal(datastoreState(failed)?.outputs.tainted, true);
        const kept = await harness.up({ program: program({ untaint: true }) });
        assert.ok(kept.ok, kept.plan);
        assert.deepEqual(callsOf(kept), ["Check", "Diff", "Update"]);
        assert.equal(kept.outputs.tainted, false);
        assert.equal(kept.outputs.state, "OK");
        assert.equal(api.datastores().length, 1);
    });

    it("untaint when the datastore is gone: the next up creates it again", async () => {
        failPolls();
        const failed = await harness.up({ program: program() });
        api.clearFaults();
        const gone = api.datastores()[0];
        assert.ok(gone);
        // Its create task ends, then someone deletes it.
        await finishTask(api, `${ASYNC_OPERATIONS_PATH}/${datastoreState(failed)?.outputs.taskId}`);
        await deleteOutsidePulumi(api, gone.id);
        const recreated = await harness.up({ program: program({ untaint: true }) });
        assert.ok(recreated.ok, recreated.plan);
        assert.equal(recreated.outputs.state, "OK");
        assert.notEqual(recreated.outputs.datastoreId, gone.id);
    });

    it("refresh forgets a datastore deleted outside Pulumi; the next up creates it", async () => {
        await harness.up({ program: program() });
        const [ds] = api.datastores();
        assert.ok(ds);
        await deleteOutsidePulumi(api, ds.id);
        const refreshed = await harness.refresh();
        assert.deepEqual(callsOf(refreshed), ["Read"]);
        assert.equal(datastoreState(refreshed), undefined);
        const created = await harness.up({ program: program() });
        assert.deepEqual(callsOf(created), ["Check", "Create"]);
        assert.equal(api.datastores().length, 1);
    });

    it("resumes a create whose provider was killed (nothing in state) by its token: no duplicate", async () => {
        api.addFault({ match: { method: "POST" }, fault: { task: { completeAfterPolls: 40 } } });
        const killed = await harness.up({ program: program(), onProvider: killAfterPolls(api, 3) });
        assert.equal(killed.ok, false);
        assert.equal(datastoreState(killed), undefined, "the engine recorded nothing for it");
        assert.equal(api.datastores().length, 1);

        const resumed = await harness.up({ program: program(), onProvider: () => undefined });
        assert.ok(resumed.ok, resumed.plan);
        assert.deepEqual(callsOf(resumed), ["Check", "Create"]);
        assert.equal(api.datastores().length, 1, "no duplicate");
        assert.equal(resumed.outputs.datastoreId, api.datastores()[0]?.id);
    });

    it("without a token, refuses what a killed provider created, like row 4, saying how to adopt it", async () => {
        api.addFault({ match: { method: "POST" }, fault: { task: { completeAfterPolls: 40 } } });
        await harness.up({ program: program({}, false), onProvider: killAfterPolls(api, 3) });
        const refused = await harness.up({ program: program({}, false), onProvider: () => undefined });
        assert.equal(refused.ok, false);
        assert.match(refused.errors.map((e) => e.message).join("\n"), /already exists .* set `adopt: true`/);
        assert.equal(api.datastores().length, 1);
    });

    it("a delete task that reports success while the datastore stays: destroy fails and the stack keeps it; once the API deletes, destroy ends", async () => {
        const proxy = await lyingAboutDeletes(api);
        try {
            const through = new Harness({
                projectDir: project.dir,
                stateFile: join(project.dir, "state.json"),
                config: {
                    "pulumi-lifecycle:taskApiUrl": proxy.url,
                    "pulumi-lifecycle:taskApiToken": { secret: TOKEN },
                },
                env: { TASK_POLL_INITIAL_MS: "2", TASK_POLL_MAX_MS: "10" },
            });
            const created = await through.up({ program: program() });
            assert.ok(created.ok, created.plan);
            const kept = await through.destroy();
            assert.equal(kept.ok, false);
            assert.deepEqual(callsOf(kept), ["Delete (failed)"]);
            assert.match(
                kept.errors.map((e) => e.message).join("\n"),
                /the API said the delete \(operation lie-1\) ended well, but the resource still exists\. It stays in the stack's state/,
            );
            assert.equal(datastoreState(kept)?.outputs.datastoreId, api.datastores()[0]?.id, "still in the stack");
            assert.equal(api.datastores().length, 1);
            proxy.honest = true;
            const destroyed = await through.destroy();
            assert.ok(destroyed.ok, destroyed.plan);
            assert.equal(datastoreState(destroyed), undefined);
            assert.deepEqual(api.datastores(), []);
        } finally {
            await proxy.close();
        }
    });

    it("Datastore.get reads one by id in HostEntry.get's shape, keeping the settings given as state", async () => {
        const created = await harness.up({ program: program() });
        assert.ok(created.ok, created.plan);
        const id = `${HCI}/${CLUSTER}/ds19`;
        const read = await new Harness({
            projectDir: project.dir,
            stateFile: join(project.dir, "state-get.json"),
            config: { "pulumi-lifecycle:taskApiUrl": api.url, "pulumi-lifecycle:taskApiToken": { secret: TOKEN } },
        }).up({
            program: () => {
                const found = tasks.Datastore.get("found", id, { timeouts: { delete: "5m" } });
                return { datastoreId: found.datastoreId, size: found.sizeInBytes, timeouts: found.timeouts };
            },
        });
        assert.ok(read.ok, read.plan);
        assert.deepEqual(callsOf(read), ["Read"]);
        assert.equal(read.outputs.datastoreId, api.datastores()[0]?.id);
        assert.equal(read.outputs.size, 16 * GIB);
        assert.deepEqual(read.outputs.timeouts, { delete: "5m" });
    });
});

/**
 * A proxy in front of the task API server that, until `honest` is set, answers every DELETE with a task
 * of its own that reports success at once, while the datastore stays: a server breaking its contract.
 */
async function lyingAboutDeletes(
    api: TaskApiServer,
): Promise<{ url: string; honest: boolean; close(): Promise<void> }> {
    const lie = `${ASYNC_OPERATIONS_PATH}/lie-1`;
    const proxy = {
        url: "",
        honest: false,
        close: async () => {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        },
    };
    const server = createServer(async (request, response) => {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
            response.writeHead(status, { "content-type": "application/json", ...headers });
            response.end(JSON.stringify(body));
        };
        if (!proxy.honest && request.method === "DELETE") return answer(202, { taskUri: lie }, { location: lie });
        if (!proxy.honest && request.url === lie) {
            return answer(200, {
                id: "lie-1",
                type: "task",
                name: "Delete datastore ds19",
                state: "SUCCEEDED",
                progressPercent: 100,
                associatedResources: [],
                error: null,
                logMessages: [],
                createdAt: new Date().toISOString(),
                updatedAt: new Date().toISOString(),
            });
        }
        const forwarded = await fetch(`${api.url}${request.url}`, {
            method: request.method ?? "GET",
            headers: Object.fromEntries(
                ["authorization", "content-type", "idempotency-key"].flatMap((name) => {
                    const value = request.headers[name];
                    return typeof value === "string" ? [[name, value]] : [];
                }),
            ),
            ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        });
        const headers: Record<string, string> = {};
        for (const name of ["content-type", "location", "retry-after"]) {
            const value = forwarded.headers.get(name);
            if (value !== null) headers[name] = value;
        }
        response.writeHead(forwarded.status, headers);
        response.end(Buffer.from(await forwarded.arrayBuffer()));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return proxy;
}

/**
 * A gateway in front of the task API server that forwards every request, but answers the first POST 502
 * after the API acted on it (its upstream went away), keeping the task's Location it did not pass on.
 */
async function losingPostAnswers(
    api: TaskApiServer,
): Promise<{ url: string; taskLocation(): string; stopLosing(): void; close(): Promise<void> }> {
    let location: string | undefined;
    let losing = true;
    const server = createServer(async (request, response) => {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        const forwarded = await fetch(`${api.url}${request.url}`, {
            method: request.method ?? "GET",
            headers: Object.fromEntries(
                ["authorization", "content-type", "idempotency-key"].flatMap((name) => {
                    const value = request.headers[name];
                    return typeof value === "string" ? [[name, value]] : [];
                }),
            ),
            ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        });
        const body = Buffer.from(await forwarded.arrayBuffer());
        // Every answer to a POST is lost: its retries (with the key the engine sends) are replayed by the
        // API and lost again, so the create's outcome stays unknown.
        if (request.method === "POST" && losing) {
            location ??= forwarded.headers.get("location") ?? "";
            response.writeHead(502, { "content-type": "application/json" });
            response.end(JSON.stringify({ error: "bad_gateway", message: "upstream went away" }));
            return;
        }
        const headers: Record<string, string> = {};
        for (const name of ["content-type", "location", "retry-after"]) {
            const value = forwarded.headers.get(name);
            if (value !== null) headers[name] = value;
        }
        response.writeHead(forwarded.status, headers);
        response.end(body);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        taskLocation: () => {
            assert.ok(location, "no POST reached the gateway");
            return location;
        },
        stopLosing: () => {
            losing = false;
        },
        close: async () => {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        },
    };
}

/** Kills the provider process (SIGKILL, as a crash) once the API has seen `polls` polls of a task. */
function killAfterPolls(api: TaskApiServer, polls: number): (provider: ProviderServer) => void {
    return (provider) => {
        const timer = setInterval(() => {
            if (api.requests().filter((r) => r.path.startsWith(ASYNC_OPERATIONS_PATH)).length >= polls) {
                clearInterval(timer);
                provider.kill("SIGKILL");
            }
        }, 2);
        void provider.waitForExit().then(() => clearInterval(timer));
    };
}

/** Polls a task until it ends (tasks here end after a few polls). */
async function finishTask(api: TaskApiServer, location: string): Promise<void> {
    for (let i = 0; i < 50; i++) {
        const answer = await fetch(`${api.url}${location}`, { headers: { authorization: api.authorization } });
        if (["SUCCEEDED", "FAILED"].includes(((await answer.json()) as { state: string }).state)) return;
    }
    assert.fail(`task ${location} did not end`);
}

/** Deletes a datastore through the API, as someone outside Pulumi would, and waits for it to go. */
async function deleteOutsidePulumi(api: TaskApiServer, id: string): Promise<void> {
    const answer = await fetch(`${api.url}${DATASTORES_PATH}/${id}`, {
        method: "DELETE",
        headers: { authorization: api.authorization },
    });
    assert.equal(answer.status, 202);
    await finishTask(api, answer.headers.get("location") ?? "");
}
