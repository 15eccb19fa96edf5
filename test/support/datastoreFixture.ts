// A task API server and a provider process configured to use it, for Datastore tests: the real server
// (in this process, port 0) and the real dynamic-provider process, talking HTTP and gRPC as in use.

import {
    startTaskApiServer,
    type TaskApiServer,
    type TaskApiServerOptions,
} from "../../provider/taskApiServer/taskApiServer";
import { type EngineLogServer, startEngineLogServer } from "./engineLogServer";
import { makeProject, type TempDir } from "./projects";
import { type Props, ProviderServer } from "./providerServer";
import { serializedProvider } from "./serializedProvider";

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

/** Starts a task API server and a provider process pointed at it. */
export async function datastoreFixture(
    serverOptions: TaskApiServerOptions = {},
    providerEnv: NodeJS.ProcessEnv = {},
): Promise<DatastoreFixture> {
    const api = await startTaskApiServer({ token: TOKEN, testApi: true, taskCompleteAfterPolls: 3, ...serverOptions });
    const engine = await startEngineLogServer();
    const project: TempDir = await makeProject("datastore-test");
    const provider = await ProviderServer.start({
        projectDir: project.dir,
        engineAddress: engine.address,
        env: { ...FAST_POLLS, ...providerEnv },
    });
    await provider.configure({ "pulumi-lifecycle:taskApiUrl": api.url, "pulumi-lifecycle:taskApiToken": TOKEN });
    const __provider = await serializedProvider("tasks:Datastore");
    const urn = (name: string) => `urn:pulumi:dev::datastore-test::pulumi-nodejs:dynamic/tasks:Datastore::${name}`;
    const args = async (name: string, overrides: Props = {}) => ({
        __provider,
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
        close: async () => {
            await provider.stop();
            await engine.close();
            await api.close();
            await project.cleanup();
        },
    };
}
