// The datastore endpoints of the task API, on top of TaskApiClient: natural-key lookup, get, the three
// operations that start tasks (create, resize, delete), and following such a task to its end. Answers
// are checked against the protocol.

import type { TaskApiClient, TaskApiResponse } from "../client/taskApiClient";
import { type TaskOutcome, type WaitForTaskOptions, waitForTask } from "../client/waitForTask";
import type { NaturalKey } from "../datastoreSchema";
import { MalformedResponseError } from "../errors/malformedResponseError";
import { TaskApiError } from "../errors/taskApiError";
import { formatFilter } from "../protocol/filter";
import {
    type CreateDatastoreRequest,
    DATASTORES_PATH,
    type DatastoreList,
    type DatastoreRecord,
    datastoreUri,
    type ResizeDatastoreRequest,
} from "../protocol/wire";

/** Per-call settings: abort signal and the deadline of the operation it belongs to. */
export interface CallOptions {
    readonly signal?: AbortSignal | undefined;
    readonly deadline?: number | undefined;
}

/** Datastore calls of one task API. */
export class DatastoreApi {
    constructor(private readonly client: TaskApiClient) {}

    /** Polls the task a 202 named until it ends, the deadline passes or the signal aborts (see waitForTask). */
    followTask(taskUri: string, options: Omit<WaitForTaskOptions, "client" | "taskUri">): Promise<TaskOutcome> {
        return waitForTask({ ...options, client: this.client, taskUri });
    }

    /** Every datastore with this natural key (the API keeps names unique per cluster, so 0 or 1). */
    async findByNaturalKey(key: NaturalKey, options: CallOptions = {}): Promise<DatastoreRecord[]> {
        const filter = formatFilter([
            { field: "hciClusterUuid", value: key.hciClusterUuid },
            { field: "clusterInfo/id", value: key.clusterId },
            { field: "name", value: key.name },
        ]);
        const path = `${DATASTORES_PATH}?filter=${encodeURIComponent(filter)}`;
        const { body } = await this.client.send<DatastoreList>({ method: "GET", path, ...options });
        if (!body || !Array.isArray(body.items))
            throw new MalformedResponseError("GET", path, "the answer has no items list");
        return [...body.items];
    }

    /** The datastore with this id, or undefined when there is none (404). */
    async get(id: string, options: CallOptions = {}): Promise<DatastoreRecord | undefined> {
        try {
            const { body } = await this.client.send<DatastoreRecord>({
                method: "GET",
                path: datastoreUri(id),
                ...options,
            });
            if (!body || typeof body.id !== "string") {
                throw new MalformedResponseError("GET", datastoreUri(id), "the answer is not a datastore");
            }
            return body;
        } catch (error) {
            if (error instanceof TaskApiError && error.status === 404) return undefined;
            throw error;
        }
    }

    /** Starts a create task; resolves with the task URI. The same token and body replay the same task. */
    async create(
        request: CreateDatastoreRequest,
        createToken: string | undefined,
        options: CallOptions = {},
    ): Promise<string> {
        const response = await this.client.send({
            method: "POST",
            path: DATASTORES_PATH,
            body: request,
            ...(createToken ? { idempotencyKey: createToken } : {}),
            ...options,
        });
        return taskUriOf(response, "POST", DATASTORES_PATH);
    }

    /** Starts a resize task; resolves with the task URI. */
    async resize(id: string, sizeInBytes: number, idempotencyKey: string, options: CallOptions = {}): Promise<string> {
        const body: ResizeDatastoreRequest = { sizeInBytes };
        const response = await this.client.send({
            method: "PATCH",
            path: datastoreUri(id),
            body,
            idempotencyKey,
            ...options,
        });
        return taskUriOf(response, "PATCH", datastoreUri(id));
    }

    /** Starts a delete task; resolves with its URI, or undefined when the datastore is already gone (404). */
    async delete(id: string, options: CallOptions = {}): Promise<string | undefined> {
        try {
            const response = await this.client.send({ method: "DELETE", path: datastoreUri(id), ...options });
            return taskUriOf(response, "DELETE", datastoreUri(id));
        } catch (error) {
            if (error instanceof TaskApiError && error.status === 404) return undefined;
            throw error;
        }
    }
}

function taskUriOf(response: TaskApiResponse<unknown>, method: string, path: string): string {
    if (response.status !== 202) {
        throw new MalformedResponseError(method, path, `expected 202 Accepted for a task, got ${response.status}`);
    }
    if (!response.location) throw new MalformedResponseError(method, path, "202 Accepted without a Location header");
    return response.location;
}
