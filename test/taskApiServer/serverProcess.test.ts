// Guards what the task API server keeps across processes: the data file holds every acknowledged change
// before the answer leaves (datastores, tasks, idempotency keys survive a restart; a kill -9 in the middle
// of a stream of writes leaves a parseable file holding everything acknowledged), writes coalesce, a file
// the server did not write is never overwritten. And `pulumi-lifecycle task-api` as users run it: the built
// dist/cli/main.js in its own process, its flags, its messages, and a clean stop on SIGINT and SIGTERM.

import { strict as assert } from "node:assert";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { DataFileError } from "../../provider/taskApiServer/dataFileError";
import { DataFileUnwritableError } from "../../provider/taskApiServer/dataFileUnwritableError";
import { startTaskApiServer, type TaskApiServer } from "../../provider/taskApiServer/taskApiServer";
import type { AsyncOperation, DatastoreList, DatastoreRecord } from "../../provider/tasks/protocol/wire";
import { makeTempDir, REPO_ROOT, type TempDir } from "../support/projects";

const MAIN = join(REPO_ROOT, "dist", "cli", "main.js");
const DATASTORES = "/virtualization/v1beta1/datastores";
const HCI = "a1b2c3d4-0000-4000-8000-000000000001";
const CLUSTER = "c0ffee00-0000-4000-8000-000000000002";
const GIB = 1024 ** 3;
const START = Date.parse("2030-01-01T00:00:00.000Z");

interface Reply {
    readonly status: number;
    readonly location: string | null;
    // biome-ignore lint/suspicious/noExplicitAny: tests read the JSON of many shapes
    readonly json: any;
}

/** A request with the bearer token; JSON in, JSON out. */
async function call(
    base: string,
    token: string,
    method: string,
    path: string,
    options: { body?: unknown; key?: string } = {},
): Promise<Reply> {
    const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (options.key !== undefined) headers["Idempotency-Key"] = options.key;
    const response = await fetch(`${base}${path}`, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await response.text();
    let json: unknown;
    try {
        json = JSON.parse(text);
    } catch {
        json = text;
    }
    return { status: response.status, location: response.headers.get("location"), json };
}

function createRequest(name: string, sizeInBytes = 16 * GIB) {
    return { name, sizeInBytes, storageSystemId: HCI, targetHypervisorClusterId: CLUSTER, datastoreType: "VVOL" };
}

/** The data file as JSON, read from disk. */
async function readDataFile(file: string): Promise<{
    datastores: DatastoreRecord[];
    tasks: { id: string; endedAtMs?: number }[];
    idempotencyKeys: { key: string; location: string }[];
    counters: { datastoresCreated: number };
}> {
    return JSON.parse(await readFile(file, "utf8"));
}

describe("task API server across processes", () => {
    let temp: TempDir;
    let file: string;

    beforeEach(async () => {
        temp = await makeTempDir("task-api-test-");
        file = join(temp.dir, "data.json");
    });
    afterEach(() => temp.cleanup());

    describe("data file", () => {
        let server: TaskApiServer | undefined;
        let now: number;

        async function start(options: { taskCompleteAfterPolls?: number } = {}): Promise<TaskApiServer> {
            server = await startTaskApiServer({ dataFile: file, token: "t", clock: () => now, ...options });
            return server;
        }
        const api = (method: string, path: string, options?: { body?: unknown; key?: string }) =>
            call(server?.url ?? "", "t", method, path, options);

        beforeEach(() => {
            now = START;
        });
        afterEach(async () => {
            await server?.close();
            server = undefined;
        });

        it("keeps datastores, tasks, idempotency keys and counters across a restart", async () => {
            await start();
            const done = await api("POST", DATASTORES, { body: createRequest("done"), key: "k-done" });
            now += 2000;
            const [ready] = server?.datastores() ?? [];
            const resizing = await api("PATCH", `${DATASTORES}/${ready?.id}`, { body: { sizeInBytes: 32 * GIB } });
            const pending = await api("POST", DATASTORES, { body: createRequest("pending"), key: "k-pending" });
            now += 1000;
            const before = {
                list: (await api("GET", DATASTORES)).json as DatastoreList,
                done: (await api("GET", done.location ?? "")).json as AsyncOperation,
                resizing: (await api("GET", resizing.location ?? "")).json as AsyncOperation,
            };
            assert.equal(before.resizing.state, "RUNNING");
            await server?.close();

            await start();
            assert.deepEqual((await api("GET", DATASTORES)).json, before.list);
            assert.deepEqual((await api("GET", done.location ?? "")).json, before.done);
            assert.deepEqual((await api("GET", resizing.location ?? "")).json, before.resizing);
            const replay = await api("POST", DATASTORES, { body: createRequest("done"), key: "k-done" });
            assert.equal(replay.status, 202);
            assert.equal(replay.location, done.location);
            assert.equal(
                (await api("POST", DATASTORES, { body: createRequest("other"), key: "k-pending" })).status,
                422,
            );
            assert.equal(server?.stats().datastoresCreated, 2);
            assert.equal(server?.stats().tasksCreated, 3);

            now += 1000;
            assert.equal(((await api("GET", resizing.location ?? "")).json as AsyncOperation).state, "SUCCEEDED");
            assert.equal(((await api("GET", pending.location ?? "")).json as AsyncOperation).state, "SUCCEEDED");
            const resized = (await api("GET", `${DATASTORES}/${ready?.id}`)).json as DatastoreRecord;
            assert.equal(resized.capacityInBytes, 32 * GIB);
        });

        it("continues counting polls across a restart", async () => {
            await start({ taskCompleteAfterPolls: 3 });
            const created = await api("POST", DATASTORES, { body: createRequest("polled") });
            await api("GET", created.location ?? "");
            await api("GET", created.location ?? "");
            await server?.close();
            await start({ taskCompleteAfterPolls: 3 });
            assert.equal(((await api("GET", created.location ?? "")).json as AsyncOperation).state, "SUCCEEDED");
        });

        it("reads a version 1 data file, whose records had sizeInBytes, in the API's shape, and writes version 2", async () => {
            const old = {
                id: "0b9e5a52-6a0e-4a47-8f55-2d7f3e1c1a01",
                type: "virtualization/datastore",
                name: "ds19",
                hciClusterUuid: HCI,
                clusterInfo: { id: CLUSTER },
                sizeInBytes: 16 * GIB,
                datastoreType: "VMFS",
                state: "ERROR",
                createdAt: "2030-01-01T00:00:00.000Z",
                updatedAt: "2030-01-01T00:00:05.000Z",
                generation: 2,
            };
            const v1 = {
                format: "pulumi-lifecycle/task-api",
                version: 1,
                counters: { datastoresCreated: 1, tasksCreated: 1 },
            };
            await writeFile(file, JSON.stringify({ ...v1, datastores: [old], tasks: [], idempotencyKeys: [] }));
            await start();
            const record = (await api("GET", `${DATASTORES}/${old.id}`)).json as DatastoreRecord;
            assert.deepEqual(
                [record.capacityInBytes, record.clusterInfo.id, record.hciClusterUuid, record.state, record.status],
                [16 * GIB, CLUSTER, HCI, "ERROR", "ERROR"],
            );
            assert.deepEqual([record.updatedAt, record.generation], [old.updatedAt, old.generation]);
            assert.equal(typeof record.clusterInfo.name, "string");
            assert.equal(record.datacentersInfo.length, 1);
            assert.equal("sizeInBytes" in record, false);
            await api("DELETE", `${DATASTORES}/${old.id}`);
            assert.equal((JSON.parse(await readFile(file, "utf8")) as { version: number }).version, 2);
        });

        it("has every acknowledged change on disk when the answer arrives", async () => {
            await start();
            const created = await api("POST", DATASTORES, { body: createRequest("ds19"), key: "k" });
            const onDisk = await readDataFile(file);
            assert.equal(onDisk.datastores[0]?.name, "ds19");
            assert.equal(onDisk.datastores[0]?.state, "CREATING");
            assert.equal(onDisk.idempotencyKeys[0]?.location, created.location);
            now += 2000;
            assert.equal(((await api("GET", created.location ?? "")).json as AsyncOperation).state, "SUCCEEDED");
            const afterPoll = await readDataFile(file);
            assert.equal(afterPoll.datastores[0]?.state, "OK");
            assert.equal(afterPoll.tasks[0]?.endedAtMs, START + 2000);
        });

        it("coalesces the writes of concurrent requests", async () => {
            const running = await start();
            // The burst comes from another process, as clients' requests do: a client sharing the server's
            // event loop would hand it one request per turn.
            const burst = `
                const bodies = ${JSON.stringify(Array.from({ length: 40 }, (_, n) => createRequest(`ds${n}`)))};
                Promise.all(bodies.map((body) => fetch(${JSON.stringify(running.url + DATASTORES)}, {
                    method: "POST",
                    headers: { authorization: ${JSON.stringify(running.authorization)}, "content-type": "application/json" },
                    body: JSON.stringify(body),
                }).then((reply) => reply.status))).then((statuses) => process.stdout.write(JSON.stringify(statuses)));
            `;
            const { stdout } = await promisify(execFile)(process.execPath, ["-e", burst]);
            const replies = (JSON.parse(stdout) as number[]).map((status) => ({ status }));
            assert.ok(replies.every((reply) => reply.status === 202));
            const writes = server?.stats().dataFileWrites ?? 0;
            assert.ok(writes >= 1 && writes < 40, `${writes} writes for 40 creates`);
            assert.equal((await readDataFile(file)).datastores.length, 40);
        });

        it("answers 500 and acknowledges nothing when the file cannot be written, and recovers", async () => {
            const directory = join(temp.dir, "sub");
            await mkdir(directory);
            file = join(directory, "data.json");
            const errors: unknown[] = [];
            server = await startTaskApiServer({ dataFile: file, token: "t", onError: (error) => errors.push(error) });
            await rm(directory, { recursive: true });
            const failed = await api("POST", DATASTORES, { body: createRequest("ds19") });
            assert.equal(failed.status, 500);
            assert.equal(failed.json.error, "internal_error");
            assert.match(failed.json.message, /ENOENT/);
            assert.equal(errors.length, 1);
            await mkdir(directory);
            assert.equal((await api("GET", DATASTORES)).status, 200);
            assert.equal((await readDataFile(file)).datastores[0]?.name, "ds19", "the next write carries it");
        });

        it("starts empty without a file, and writes none until something changes", async () => {
            await start();
            await api("GET", DATASTORES);
            await server?.close();
            assert.deepEqual(await readdir(temp.dir), []);
        });

        it("refuses to start when the data file's directory does not exist, instead of failing the first write", async () => {
            const missing = join(temp.dir, "no-such-dir", "data.json");
            await assert.rejects(startTaskApiServer({ dataFile: missing }), (error: unknown) => {
                assert.ok(error instanceof DataFileUnwritableError);
                assert.match(
                    error.message,
                    /no-such-dir does not exist\. Create that directory .* or pass another --data file/,
                );
                return true;
            });
        });

        it("refuses to start on a file it did not write, and leaves it alone", async () => {
            for (const content of [
                "not json",
                '{"datastores": []}',
                '{"format":"pulumi-lifecycle/task-api","version":99}',
            ]) {
                await writeFile(file, content);
                await assert.rejects(startTaskApiServer({ dataFile: file }), (error: unknown) => {
                    assert.ok(error instanceof DataFileError);
                    assert.match(error.message, /is not a task API data file .* does not overwrite/);
                    return true;
                });
                assert.equal(await readFile(file, "utf8"), content);
            }
        });
    });

    describe("command line", () => {
        /** A `task-api` process, once it has printed its URL. */
        interface Running {
            readonly child: ChildProcess;
            readonly url: string;
            stderr(): string;
            readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
        }
        const running: ChildProcess[] = [];

        /** Starts `task-api` with `args` and waits for its URL on stderr; rejects if it exits first. */
        function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Running> {
            const childEnv = { ...process.env, ...env };
            if (!("TASK_API_TOKEN" in env)) delete childEnv.TASK_API_TOKEN;
            const child = spawn(process.execPath, [MAIN, "task-api", ...args], { env: childEnv, cwd: temp.dir });
            running.push(child);
            let stderr = "";
            const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
                child.on("exit", (code, signal) => resolve({ code, signal })),
            );
            return new Promise((resolve, reject) => {
                child.stderr.on("data", (chunk: Buffer) => {
                    stderr += chunk.toString();
                    const url = /task API listening on (http:\/\/\S+)\n/.exec(stderr)?.[1];
                    if (url && /stop with Ctrl-C\n/.test(stderr)) resolve({ child, url, stderr: () => stderr, exited });
                });
                void exited.then(({ code }) => reject(new Error(`task-api exited with ${code}: ${stderr}`)));
            });
        }

        function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
            return new Promise((resolve) => {
                execFile(
                    process.execPath,
                    [MAIN, ...args],
                    { encoding: "utf8", cwd: temp.dir },
                    (error, stdout, stderr) => {
                        resolve({
                            code: error ? (typeof error.code === "number" ? error.code : -1) : 0,
                            stdout,
                            stderr,
                        });
                    },
                );
            });
        }

        afterEach(() => {
            for (const child of running.splice(0))
                if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        });

        it("prints its URL and a random token, serves with it, and stops on SIGINT with exit code 0", async () => {
            const cli = await startCli(["--port", "0", "--data", file]);
            assert.match(cli.url, /^http:\/\/127\.0\.0\.1:\d+$/);
            const token = /Authorization: Bearer (\S+) \(random/.exec(cli.stderr())?.[1] ?? "";
            assert.ok(token.length >= 20, cli.stderr());
            assert.equal(cli.stderr().split(token).length, 2, "the random token is printed once");
            assert.equal((await call(cli.url, "wrong", "GET", DATASTORES)).status, 401);
            const created = await call(cli.url, token, "POST", DATASTORES, { body: createRequest("ds19") });
            assert.equal(created.status, 202);
            cli.child.kill("SIGINT");
            assert.deepEqual(await cli.exited, { code: 0, signal: null });
            assert.match(cli.stderr(), /POST \/virtualization\/v1beta1\/datastores -> 202\n/);
            assert.match(cli.stderr(), /SIGINT: stopping the task API\ntask API stopped/);
            assert.equal((await readDataFile(file)).datastores[0]?.name, "ds19");
        });

        it("takes the token from TASK_API_TOKEN, --token before it, without printing it; stops on SIGTERM", async () => {
            const fromEnv = await startCli(["--port", "0", "--data", file], { TASK_API_TOKEN: "env-token" });
            assert.match(fromEnv.stderr(), /Authorization: Bearer \$TASK_API_TOKEN/);
            assert.doesNotMatch(fromEnv.stderr(), /env-token/);
            assert.equal((await call(fromEnv.url, "env-token", "GET", DATASTORES)).status, 200);
            fromEnv.child.kill("SIGTERM");
            assert.deepEqual(await fromEnv.exited, { code: 0, signal: null });

            const fromOption = await startCli(["-p", "0", "-d", file, "--token", "flag-token"], {
                TASK_API_TOKEN: "env-token",
            });
            assert.doesNotMatch(fromOption.stderr(), /flag-token/);
            assert.equal((await call(fromOption.url, "flag-token", "GET", DATASTORES)).status, 200);
            assert.equal((await call(fromOption.url, "env-token", "GET", DATASTORES)).status, 401);
            fromOption.child.kill("SIGINT");
            assert.equal((await fromOption.exited).code, 0);
        });

        it("defaults the data file to ./task-api-data.json", async () => {
            const cli = await startCli(["--port", "0", "--token", "t", "--quiet"]);
            await call(cli.url, "t", "POST", DATASTORES, { body: createRequest("ds19") });
            cli.child.kill("SIGINT");
            await cli.exited;
            assert.equal((await readDataFile(join(temp.dir, "task-api-data.json"))).datastores.length, 1);
            assert.doesNotMatch(cli.stderr(), /-> 202/, "--quiet prints no request lines");
        });

        it("applies its task, polling, failure, rate and test-API flags", async () => {
            const polled = await startCli([
                "--port",
                "0",
                "--data",
                file,
                "--token",
                "t",
                "--task-polls",
                "2",
                "--poll-interval",
                "3",
                "--test-api",
            ]);
            assert.match(polled.stderr(), /tasks end on their poll number 2/);
            assert.match(polled.stderr(), /test control API: .*\/_test\/faults/);
            const created = await call(polled.url, "t", "POST", DATASTORES, { body: createRequest("a") });
            const first = (await call(polled.url, "t", "GET", created.location ?? "")).json as AsyncOperation;
            assert.equal(first.state, "INITIALIZED");
            assert.equal(first.suggestedPollingIntervalSeconds, 3);
            assert.equal(
                ((await call(polled.url, "t", "GET", created.location ?? "")).json as AsyncOperation).state,
                "SUCCEEDED",
            );
            assert.equal(
                (await call(polled.url, "t", "POST", "/_test/faults", { body: { fault: { status: 503 } } })).status,
                201,
            );
            polled.child.kill("SIGINT");
            await polled.exited;

            const failing = await startCli([
                ...["--port", "0", "--data", join(temp.dir, "b.json"), "--token", "t"],
                ...["--task-duration", "0", "--failure-rate", "1", "--seed", "4", "--rate-limit", "2/min"],
            ]);
            assert.match(failing.stderr(), /tasks take 0 s/);
            assert.match(failing.stderr(), /test control API off \(--test-api turns it on\)/, "off unless asked for");
            const failed = await call(failing.url, "t", "POST", DATASTORES, { body: createRequest("b") });
            const op = (await call(failing.url, "t", "GET", failed.location ?? "")).json as AsyncOperation;
            assert.equal(op.state, "FAILED");
            assert.equal(op.error?.errorCode, "SIMULATED_FAILURE");
            assert.equal((await call(failing.url, "t", "GET", "/_test/stats")).status, 404);
            const limited = await call(failing.url, "t", "GET", DATASTORES);
            assert.equal(limited.status, 429, "two requests a minute, and this is the third");
            assert.match(limited.json.message, /retry after \d+ s/);
            failing.child.kill("SIGINT");
            assert.equal((await failing.exited).code, 0);
        });

        it("reports wrong usage in one line with exit code 2", async () => {
            for (const [args, message] of [
                [["--port", "abc"], /--port "abc": expected a whole number/],
                [["--port", "70000"], /expected a number from 0 to 65535/],
                [["--failure-rate", "2"], /--failure-rate "2": expected a probability/],
                [["--task-duration", "soon"], /--task-duration "soon": expected a duration such as 2s/],
                [["--rate-limit", "0/s"], /--rate-limit "0\/s": expected requests per second/],
                [["--task-duration", "1s", "--task-polls", "2"], /exclude each other/],
                [["--frobnicate"], /Unknown option '--frobnicate'/],
                [["--data", ""], /--data needs the path of a file/],
                [["--token", "two words"], /--token must be printable ASCII without spaces/],
            ] as const) {
                const result = await runCli(["task-api", ...args]);
                assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
                assert.match(
                    result.stderr,
                    /^pulumi-lifecycle: [^\n]+ Run `pulumi-lifecycle task-api --help` for usage\.\n$/,
                );
                assert.match(result.stderr, message);
            }
        });

        it("reports a taken port and an unreadable data file in one line with exit code 1", async () => {
            const blocker = createServer();
            await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
            const port = (blocker.address() as { port: number }).port;
            try {
                const taken = await runCli(["task-api", "--port", String(port), "--data", file]);
                assert.equal(taken.code, 1);
                assert.equal(
                    taken.stderr,
                    `pulumi-lifecycle: port ${port} is in use; pass another --port (0 picks a free one).\n`,
                );
            } finally {
                blocker.close();
            }
            await writeFile(file, "{ broken");
            const corrupt = await runCli(["task-api", "--port", "0", "--data", file]);
            assert.equal(corrupt.code, 1);
            assert.match(
                corrupt.stderr,
                /^pulumi-lifecycle: \S+data\.json is not a task API data file \(not JSON: [^\n]+\n$/,
            );
        });

        it("prints its help, and is listed by pulumi-lifecycle --help", async () => {
            const help = await runCli(["task-api", "--help"]);
            assert.equal(help.code, 0);
            assert.match(help.stdout, /^Usage: pulumi-lifecycle task-api \[options\]/);
            assert.match(help.stdout, /--rate-limit N\/s/);
            assert.match(
                (await runCli(["--help"])).stdout,
                /\n {2}task-api {4,}run a GreenLake-style async task API server/,
            );
        });

        for (const killAfter of [5, 40, 150]) {
            it(`leaves a parseable data file holding every acknowledged create when killed -9 after ${killAfter}`, async () => {
                const cli = await startCli([
                    "--port",
                    "0",
                    "--data",
                    file,
                    "--token",
                    "t",
                    "--quiet",
                    "--task-duration",
                    "0",
                ]);
                const acknowledged: { n: number; location: string }[] = [];
                let next = 0;
                let stop = false;
                const worker = async () => {
                    while (!stop) {
                        const n = next++;
                        const body = createRequest(`ds${n}`);
                        const reply = await call(cli.url, "t", "POST", DATASTORES, { body, key: `k${n}` }).catch(
                            () => undefined,
                        );
                        if (!reply) return; // the process is gone
                        assert.equal(reply.status, 202);
                        acknowledged.push({ n, location: reply.location ?? "" });
                    }
                };
                const workers = Promise.all(Array.from({ length: 8 }, worker));
                while (acknowledged.length < killAfter) await new Promise((resolve) => setImmediate(resolve));
                cli.child.kill("SIGKILL");
                stop = true;
                assert.equal((await cli.exited).signal, "SIGKILL");
                await workers;

                const onDisk = await readDataFile(file);
                const taskIds = new Set(onDisk.tasks.map((task) => task.id));
                for (const { location } of acknowledged)
                    assert.ok(taskIds.has(location.split("/").pop() ?? ""), location);
                assert.equal(onDisk.counters.datastoresCreated, onDisk.datastores.length);

                const restarted = await startTaskApiServer({ dataFile: file, token: "t" });
                try {
                    assert.ok(
                        !(await readdir(temp.dir)).some((name) => name.endsWith(".tmp")),
                        "temporaries are swept",
                    );
                    for (const { n, location } of acknowledged.slice(-10)) {
                        assert.equal((await call(restarted.url, "t", "GET", location)).status, 200);
                        const replay = await call(restarted.url, "t", "POST", DATASTORES, {
                            body: createRequest(`ds${n}`),
                            key: `k${n}`,
                        });
                        assert.equal(replay.location, location, "the key survived the crash");
                    }
                    assert.equal(restarted.stats().datastoresCreated, onDisk.datastores.length);
                } finally {
                    await restarted.close();
                }
            });
        }
    });
});
