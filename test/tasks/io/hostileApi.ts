// A task API that breaks its contract on purpose, for the tests of what the provider does with answers
// it must not trust: lists that ignore the filter, ids such as "../../admin/users/1", Locations with
// credentials, bodies nested 100,000 levels, tasks that report a delete that did not happen. A plain
// node:http server on port 0 whose answers each test writes; it records every request it receives
// (method, raw path and query, the Authorization header), so a test can prove where the token went.
// Also: a Datastore lifecycle wired to it on fake time, as the provider wires one to the real API.

import { strict as assert } from "node:assert";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { seededRandom } from "../../../provider/shared/random";
import { TaskApiClient } from "../../../provider/tasks/client/taskApiClient";
import { DatastoreProvider } from "../../../provider/tasks/datastoreProvider";
import type { DatastoreInputs, DatastoreOutputs } from "../../../provider/tasks/datastoreSchema";
import { SENT_CREATES_DIR_ENV } from "../../../provider/tasks/io/sentCreates";
import type { TaskProcessContext } from "../../../provider/tasks/processContext";
import {
    ASYNC_OPERATIONS_PATH,
    type AsyncOperation,
    DATASTORE_TYPE,
    DATASTORES_PATH,
    type DatastoreRecord,
} from "../../../provider/tasks/protocol/wire";
import { recordsDirectory } from "../../support/recordsDirectory";
import { CLUSTER, type FakeTime, GIB, HCI, REQUEST_TIMEOUT_MS, TOKEN } from "../client/support";

/** A request as the hostile server received it. */
export interface Received {
    readonly method: string;
    /** The raw request target: path and query, exactly as sent. */
    readonly url: string;
    readonly authorization: string | undefined;
    /** The Idempotency-Key header, when the request carried one. */
    readonly idempotencyKey: string | undefined;
    readonly body: string;
}

/** Answers one request. */
export type Handler = (request: Received, response: ServerResponse) => void | Promise<void>;

/** A running hostile server. */
export interface HostileApi {
    readonly url: string;
    readonly received: Received[];
    close(): Promise<void>;
}

const running = new Set<Server>();

/** Starts a hostile server on port 0 answering with `handler`. */
export async function hostileApi(handler: Handler): Promise<HostileApi> {
    const received: Received[] = [];
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
            const entry = {
                method: request.method ?? "",
                url: request.url ?? "",
                authorization: request.headers.authorization,
                idempotencyKey: headerOf(request, "idempotency-key"),
                body: Buffer.concat(chunks).toString("utf8"),
            };
            received.push(entry);
            Promise.resolve(handler(entry, response)).catch((error: unknown) => {
                response.writeHead(599);
                response.end(String(error));
            });
        });
    });
    running.add(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        received,
        close: () => closeServer(server),
    };
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
    const value = request.headers[name];
    return typeof value === "string" ? value : undefined;
}

/** Closes every hostile server still running (for afterEach). */
export async function closeHostileApis(): Promise<void> {
    await Promise.all([...running].map(closeServer));
}

async function closeServer(server: Server): Promise<void> {
    if (!running.delete(server)) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
}

/** Answers JSON. */
export function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(typeof body === "string" ? body : JSON.stringify(body));
}

/**
 * A datastore as the API answers it: "ds19" in the test clusters, 16 GiB VMFS, OK. The fields of the
 * bundled server's records, which are the real API's (wire.ts, DatastoreRecord).
 */
export function record(overrides: Partial<Record<keyof DatastoreRecord, unknown>> = {}): DatastoreRecord {
    const id = typeof overrides.id === "string" ? overrides.id : "d1";
    return {
        id,
        type: DATASTORE_TYPE,
        name: "ds19",
        displayName: "ds19",
        resourceUri: `${DATASTORES_PATH}/${id}`,
        hciClusterUuid: HCI,
        clusterInfo: {
            id: CLUSTER,
            name: "cluster-1",
            displayName: "cluster-1",
            type: "virtualization/hypervisor-cluster",
            resourceUri: `/virtualization/v1beta1/hypervisor-clusters/${CLUSTER}`,
        },
        datacentersInfo: [{ id: "7d8051ab-4224-5075-93be-c1c0fa645e7d", name: "datacenter-1" }],
        capacityInBytes: 16 * GIB,
        datastoreType: "VMFS",
        state: "OK",
        status: "OK",
        createdAt: "2030-01-01T00:00:00.000Z",
        updatedAt: "2030-01-01T00:00:00.000Z",
        generation: 1,
        ...overrides,
    } as DatastoreRecord;
}

/** An async operation as the API answers it. */
export function operation(id: string, state: string, overrides: Partial<AsyncOperation> = {}): AsyncOperation {
    return {
        id,
        type: "task",
        name: "Create datastore ds19",
        state,
        progressPercent: state === "SUCCEEDED" ? 100 : 0,
        associatedResources: [],
        error: null,
        logMessages: [],
        createdAt: "2030-01-01T00:00:00.000Z",
        updatedAt: "2030-01-01T00:00:00.000Z",
        ...overrides,
    };
}

/** A task's associated resource naming a datastore by `resourceUri`. */
export function resource(resourceUri: string) {
    return [{ type: DATASTORE_TYPE, resourceUri }] as const;
}

/** The path of a request target, without its query. */
export function pathOf(url: string): string {
    return url.split("?")[0] ?? "";
}

/** A list answer. */
export function list(items: unknown[]): { items: unknown[]; count: number } {
    return { items, count: items.length };
}

const ID = "[A-Za-z0-9][A-Za-z0-9._~-]{0,127}";
const INSIDE = [
    new RegExp(`^${DATASTORES_PATH}\\?filter=[^&#]*$`),
    new RegExp(`^${DATASTORES_PATH}$`),
    new RegExp(`^${DATASTORES_PATH}/${ID}$`),
    new RegExp(`^${ASYNC_OPERATIONS_PATH}/${ID}$`),
];

/** Fails unless every request the server received (each carrying the token) stayed inside the collections. */
export function assertOnlyInsideTheCollections(api: HostileApi): void {
    for (const request of api.received) {
        assert.ok(
            INSIDE.some((pattern) => pattern.test(request.url)),
            `${request.method} ${request.url} left the collections (with ${request.authorization ? "the token" : "no token"})`,
        );
    }
}

/** The Datastore's operations, as the provider runs them, called as the engine calls them. */
export interface DatastoreOperations {
    create(inputs: DatastoreInputs): Promise<{ id: string; outs: DatastoreOutputs }>;
    read(id: string, props?: DatastoreOutputs): Promise<{ id?: string; props?: DatastoreOutputs }>;
    update(olds: DatastoreOutputs, news: DatastoreInputs): Promise<{ outs: DatastoreOutputs }>;
    delete(id: string, props: DatastoreOutputs): Promise<void>;
}

/** A lifecycle under test, what it reported, and the abort controller of its context. */
export interface LifecycleUnderTest {
    readonly lifecycle: DatastoreOperations;
    readonly reports: string[];
    readonly controller: AbortController;
}

/** A Datastore lifecycle talking to `baseUrl` on fake time, as runtime.ts wires one for the provider. */
export function lifecycleOf(
    baseUrl: string,
    time: FakeTime,
    options: { maxAttempts?: number } = {},
): LifecycleUnderTest {
    const client = new TaskApiClient({
        baseUrl,
        token: TOKEN,
        clock: time.clock,
        sleep: time.sleep,
        timeout: time.timeout,
        random: seededRandom(18),
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
    });
    const reports: string[] = [];
    const controller = new AbortController();
    const context: TaskProcessContext = {
        clock: time.clock,
        sleep: time.sleep,
        random: seededRandom(19),
        signal: controller.signal,
        report: (message) => reports.push(message),
        track: (work) => work,
    };
    return {
        lifecycle: operationsOf(
            new DatastoreProvider(context, { [SENT_CREATES_DIR_ENV]: recordsDirectory() }, () => client),
        ),
        reports,
        controller,
    };
}

function operationsOf(provider: DatastoreProvider): DatastoreOperations {
    return {
        create: async (inputs) => {
            const { id, outs } = await provider.create(inputs);
            return { id, outs: outs as DatastoreOutputs };
        },
        read: async (id, props) => {
            const read = await provider.read(id, props);
            return { ...(read.id ? { id: read.id } : {}), ...(read.props ? { props: read.props } : {}) };
        },
        update: async (olds, news) => ({ outs: (await provider.update("", olds, news)).outs as DatastoreOutputs }),
        delete: (id, props) => provider.delete(id, props),
    };
}
