// A task API server and a provider process configured to use it, for Datastore tests: the real server
// (in this process, port 0) and the real dynamic-provider process, talking HTTP and gRPC as in use.

import { rm } from "node:fs/promises";
import { join } from "node:path";
import { codeOf } from "../../provider/shared/files/errno";
import {
    startTaskApiServer,
    type TaskApiServer,
    type TaskApiServerOptions,
} from "../../provider/taskApiServer/taskApiServer";
import { SENT_CREATES_DIR_ENV } from "../../provider/tasks/io/sentCreates";
import { closedPort, startCuttingProxy } from "./cuttingProxy";
import { type EngineLogServer, startEngineLogServer } from "./engineLogServer";
import { makeProject, type TempDir } from "./projects";
import { type Props, ProviderServer } from "./providerServer";
import { providerTextOf } from "./providerTextOf";

export const HCI = "126fd201-9e6e-5e31-9ffb-a766265b1fd3";
export const CLUSTER = "298a299e-78f5-5acb-86ce-4e9fdc290ab7";
export const GIB = 2 ** 30;
/** A token that must never show up in state, logs or messages. */
export const TOKEN = "tok-SECRET-7f3a9c";

/** The natural-key id of a datastore named `name` in the test clusters. */
export function datastoreId(name: string): string {
    return `${HCI}/${CLUSTER}/${name}`;
}

/** Everything a Datastore test needs. */
export interface DatastoreFixture {
    readonly api: TaskApiServer;
    readonly provider: ProviderServer;
    readonly engine: EngineLogServer;
    urn(name: string): string;
    /** Raw inputs as a program would send them (with `__provider`). */
    args(name: string, overrides?: Props): Promise<Props>;
    /** Check then Create, as the engine does for a new resource. */
    create(name: string, overrides?: Props): Promise<{ id: string; properties: Props }>;
    /** Check (with the old inputs) then Update. */
    update(name: string, olds: Props, overrides: Props): Promise<{ properties: Props }>;
    close(): Promise<void>;
}

/** Fast polls, so waits take milliseconds; tasks end by poll count unless a test says otherwise. */
const FAST_POLLS = { TASK_POLL_INITIAL_MS: "2", TASK_POLL_MAX_MS: "10" };

/** The provider process's side of a fixture: the engine's Log service, the project and the process. */
interface ProviderSide {
    readonly engine: EngineLogServer;
    readonly project: TempDir;
    readonly provider: ProviderServer;
    /** Where the process records its creates in flight (sentCreates.ts): the project's, never the user's. */
    readonly sentCreates: string;
}

/** Starts a provider process, as the engine does, configured to use the task API at `apiUrl`. */
async function startProviderSide(apiUrl: string, providerEnv: NodeJS.ProcessEnv): Promise<ProviderSide> {
    const engine = await startEngineLogServer();
    const project: TempDir = await makeProject("datastore-test");
    const sentCreates = join(project.dir, "sent-creates");
    const provider = await ProviderServer.start({
        projectDir: project.dir,
        engineAddress: engine.address,
        env: { ...FAST_POLLS, [SENT_CREATES_DIR_ENV]: sentCreates, ...providerEnv },
    });
    await provider.configure({ "pulumi-lifecycle:taskApiUrl": apiUrl, "pulumi-lifecycle:taskApiToken": TOKEN });
    return { engine, project, provider, sentCreates };
}

async function stopProviderSide(side: ProviderSide): Promise<void> {
    await side.provider.stop();
    await side.engine.close();
    await side.project.cleanup();
}

/**
 * A fresh task API server on `port` (the suite's previous server's, closed since) when that port is free,
 * else on one the kernel picks. A provider process configured with the old URL then reaches the new
 * server, so a suite's tests share the process the harness parks (starting one costs about a CPU-second).
 */
export async function startTaskApiServerOn(
    port: number | undefined,
    options: TaskApiServerOptions,
): Promise<TaskApiServer> {
    if (port !== undefined) {
        try {
            return await startTaskApiServer({ ...options, port });
        } catch (error) {
            if (codeOf(error) !== "EADDRINUSE") throw error;
        }
    }
    return startTaskApiServer(options);
}

/** Starts a task API server with the options every fixture's server has. */
function startApi(serverOptions: TaskApiServerOptions): Promise<TaskApiServer> {
    return startTaskApiServer({ token: TOKEN, testApi: true, taskCompleteAfterPolls: 3, ...serverOptions });
}

/** Starts a task API server and a provider process pointed at it. */
export async function datastoreFixture(
    serverOptions: TaskApiServerOptions = {},
    providerEnv: NodeJS.ProcessEnv = {},
): Promise<DatastoreFixture> {
    const api = await startApi(serverOptions);
    const side = await startProviderSide(api.url, providerEnv);
    return fixtureOf(api, side, async () => {
        await stopProviderSide(side);
        await api.close();
    });
}

/**
 * One provider process for many tests, as one `pulumi up` uses one for all its resources: each test's
 * fixture has its own task API server, behind one URL (a relay the process is configured with, since a
 * dynamic provider is configured once), an empty engine log and an empty record of creates in flight.
 * For tests that neither stop the process nor configure it again.
 */
export interface SharedProvider {
    fixture(serverOptions?: TaskApiServerOptions): Promise<DatastoreFixture>;
    close(): Promise<void>;
}

export async function sharedProvider(): Promise<SharedProvider> {
    // Nothing listens behind the relay until the first fixture points it at its server.
    const relay = await startCuttingProxy({ host: "127.0.0.1", port: await closedPort() });
    const side = await startProviderSide(`http://127.0.0.1:${relay.port}`, {});
    return {
        async fixture(serverOptions = {}) {
            const api = await startApi(serverOptions);
            relay.retarget({ host: "127.0.0.1", port: Number(new URL(api.url).port) });
            side.engine.messages.length = 0;
            await rm(side.sentCreates, { recursive: true, force: true });
            return fixtureOf(api, side, async () => {
                relay.dropAll();
                await api.close();
            });
        },
        async close() {
            await stopProviderSide(side);
            await relay.close();
        },
    };
}

function fixtureOf(api: TaskApiServer, side: ProviderSide, close: () => Promise<void>): DatastoreFixture {
    const { provider, engine } = side;
    const urn = (name: string) => `urn:pulumi:dev::datastore-test::pulumi-nodejs:dynamic/tasks:Datastore::${name}`;
    const args = async (name: string, overrides: Props = {}) => ({
        __provider: providerTextOf("tasks:Datastore"),
        hciClusterUuid: HCI,
        clusterId: CLUSTER,
        name,
        sizeInBytes: 16 * GIB,
        datastoreType: "VMFS",
        ...overrides,
    });
    const checked = async (name: string, olds: Props, overrides: Props) => {
        const result = await provider.check(urn(name), olds, await args(name, overrides));
        if (result.failures.length > 0) throw new Error(`check failed: ${JSON.stringify(result.failures)}`);
        return result.inputs;
    };
    return {
        api,
        provider,
        engine,
        urn,
        args,
        create: async (name, overrides) => provider.create(urn(name), await checked(name, {}, overrides ?? {})),
        update: async (name, olds, overrides) =>
            provider.update(urn(name), datastoreId(name), olds, await checked(name, olds, overrides)),
        close,
    };
}
