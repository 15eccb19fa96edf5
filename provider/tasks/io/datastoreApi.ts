// The datastore endpoints of the task API, on top of TaskApiClient: natural-key lookup, get, the three
// operations that start tasks (create, resize, delete), and following such a task to its end. Answers
// are checked against the protocol (protocol/answers.ts) before anything in them is used: every record
// a lookup answers must have the natural key asked for, every id must be of the API's shape, and every
// URI must name one member of its collection on the API's origin. So a server that ignores a filter or
// answers ids such as `../../admin/users/1` makes a call fail; it never makes the provider read, adopt or
// delete another datastore, nor send a request (and the token) outside the collection.

import type { TaskApiClient, TaskApiResponse } from "../client/taskApiClient";
import { type TaskOutcome, type WaitForTaskOptions, waitForTask } from "../client/waitForTask";
import type { NaturalKey } from "../datastoreSchema";
import { describeDatastore } from "../datastoreSchema";
import { MalformedResponseError } from "../errors/malformedResponseError";
import { TaskApiContractError } from "../errors/taskApiContractError";
import { TaskApiError } from "../errors/taskApiError";
import { datastoreOfUri, describeValue, matchesNaturalKey, taskOfUri } from "../protocol/answers";
import { formatFilter } from "../protocol/filter";
import {
    type CreateDatastoreRequest,
    DATASTORES_PATH,
    type DatastoreList,
    type DatastoreRecord,
    datastoreRecordProblem,
    datastoreUri,
    isApiId,
    operationUri,
    type ResizeDatastoreRequest,
} from "../protocol/wire";

/** Per-call settings: abort signal and the deadline of the operation it belongs to. */
export interface CallOptions {
    readonly signal?: AbortSignal | undefined;
    readonly deadline?: number | undefined;
    /** What sets the deadline, for messages: `timeouts.read`. */
    readonly deadlineSetting?: string | undefined;
}

/** Datastore calls of one task API. */
export class DatastoreApi {
    constructor(private readonly client: TaskApiClient) {}

    /** Polls the task a 202 named until it ends, the deadline passes or the signal aborts (see waitForTask). */
    followTask(taskUri: string, options: Omit<WaitForTaskOptions, "client" | "taskUri">): Promise<TaskOutcome> {
        return waitForTask({ ...options, client: this.client, taskUri });
    }

    /**
     * Every datastore with this natural key (the API keeps names unique per cluster, so 0 or 1). An answer
     * holding any datastore that does not match the whole key is a TaskApiContractError: never a candidate.
     */
    async findByNaturalKey(key: NaturalKey, options: CallOptions = {}): Promise<DatastoreRecord[]> {
        const filter = formatFilter([
            { field: "hciClusterUuid", value: key.hciClusterUuid },
            { field: "clusterInfo/id", value: key.clusterId },
            { field: "name", value: key.name },
        ]);
        const path = `${DATASTORES_PATH}?filter=${encodeURIComponent(filter)}`;
        const { body } = await this.client.send<DatastoreList>({ method: "GET", path, ...options });
        const request = `GET ${this.client.redact(path)}`;
        if (!body || !Array.isArray(body.items)) {
            throw new MalformedResponseError("GET", this.client.redact(path), "the answer has no items list");
        }
        const items = (body.items as unknown[]).map((item, index) =>
            this.record(item, "GET", this.client.redact(path), `item ${index}`),
        );
        const foreign = items.filter((item) => !matchesNaturalKey(item, key)).length;
        if (foreign > 0) {
            throw new TaskApiContractError(
                `the task API answered a lookup of ${describeDatastore(key)} (${request}) with ${foreign} of ` +
                    `${items.length} datastores that do not match the filter (another hciClusterUuid, clusterInfo.id ` +
                    "or name), so nothing was read, adopted or deleted. Check that the API honours the `filter` parameter.",
            );
        }
        return items;
    }

    /** The datastore with this id, or undefined when there is none (404). */
    async get(id: string, options: CallOptions = {}): Promise<DatastoreRecord | undefined> {
        const path = this.datastorePath(id);
        let body: DatastoreRecord | undefined;
        try {
            ({ body } = await this.client.send<DatastoreRecord>({ method: "GET", path, ...options }));
        } catch (error) {
            if (error instanceof TaskApiError && error.status === 404) return undefined;
            throw error;
        }
        const record = this.record(body, "GET", path, "the answer");
        if (record.id !== id) {
            throw new TaskApiContractError(
                `the task API answered GET ${path} with datastore ${describeValue(record.id)}, ` +
                    "not the one asked for, so nothing of it was used. Check the API (or what stands between us and it).",
            );
        }
        return record;
    }

    /**
     * The datastore with an id an answer named (a task's resource, a 409's existingId), checked to be of
     * the API's shape and to have this natural key; undefined when it is gone. `namedBy` names the answer.
     */
    async getWithKey(
        id: unknown,
        key: NaturalKey,
        namedBy: string,
        options: CallOptions = {},
    ): Promise<DatastoreRecord | undefined> {
        if (!isApiId(id)) {
            throw new TaskApiContractError(
                `${namedBy} names datastore ${describeValue(id)}, which is not an id of the task API, so nothing was read, ` +
                    "adopted or deleted. Check the API (or what stands between us and it).",
            );
        }
        const record = await this.get(id, options);
        if (record && !matchesNaturalKey(record, key)) {
            throw new TaskApiContractError(
                `${namedBy} names datastore ${id}, which is not ${describeDatastore(key)}: the API answered for ` +
                    "another datastore, so nothing was recorded, adopted or deleted. Check the API (or what stands between us and it).",
            );
        }
        return record;
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
        return this.taskUriOf(response, "POST", DATASTORES_PATH);
    }

    /** Starts a resize task; resolves with the task URI. */
    async resize(id: string, sizeInBytes: number, idempotencyKey: string, options: CallOptions = {}): Promise<string> {
        const body: ResizeDatastoreRequest = { sizeInBytes };
        const path = this.datastorePath(id);
        const response = await this.client.send({ method: "PATCH", path, body, idempotencyKey, ...options });
        return this.taskUriOf(response, "PATCH", path);
    }

    /** Starts a delete task; resolves with its URI, or undefined when the datastore is already gone (404). */
    async delete(id: string, options: CallOptions = {}): Promise<string | undefined> {
        const path = this.datastorePath(id);
        try {
            const response = await this.client.send({ method: "DELETE", path, ...options });
            return this.taskUriOf(response, "DELETE", path);
        } catch (error) {
            if (error instanceof TaskApiError && error.status === 404) return undefined;
            throw error;
        }
    }

    /** The id of the datastore a task's associated resource names; a URI outside the collection is refused. */
    datastoreIdOf(resourceUri: unknown, taskId: string): string {
        const member = datastoreOfUri(resourceUri, this.client.baseUrl);
        if ("problem" in member) {
            throw new TaskApiContractError(
                `task ${taskId} names its datastore as ${this.client.redact(member.problem)}; nothing was read or changed. ` +
                    "Check the API (or what stands between us and it).",
            );
        }
        return member.id;
    }

    /** The path of a task the stack's state names (a task id the API gave earlier). */
    taskPath(taskId: string): string {
        if (!isApiId(taskId)) throw stateIdError("task", taskId);
        return operationUri(taskId);
    }

    private datastorePath(id: string): string {
        if (!isApiId(id)) throw stateIdError("datastore", id);
        return datastoreUri(id);
    }

    /**
     * `value` as a datastore record, checked field by field for what the provider reads (see
     * datastoreRecordProblem): fields it does not know are kept and never looked at. Not an object, or
     * an id not of the API's shape: a MalformedResponseError (the answer is not a datastore at all). A
     * record without a field the provider reads (say `capacityInBytes`, where a record of another shape
     * has `sizeInBytes`): a TaskApiContractError naming the field.
     */
    private record(value: unknown, method: string, path: string, what: string): DatastoreRecord {
        const problem = datastoreRecordProblem(value);
        if (!problem) return value as DatastoreRecord;
        if (problem.field === "" || problem.field === "id") {
            const subject = problem.field === "" ? "it" : "its id";
            const found = problem.field === "id" ? ` ${describeValue((value as { id?: unknown }).id)}` : "";
            throw new MalformedResponseError(
                method,
                path,
                `${what} is not a datastore: ${subject}${found} is not ${problem.expected}`,
            );
        }
        const id = (value as { id: string }).id;
        const instead =
            problem.field === "capacityInBytes" && Object.hasOwn(value as object, "sizeInBytes")
                ? " It has `sizeInBytes` instead: the name a create sends the size by, which the API's records " +
                  "give as `capacityInBytes` (a server of another version of the API, or not the GreenLake API?)."
                : "";
        throw new TaskApiContractError(
            `the task API answered ${method} ${path} with datastore ${id} without a usable \`${problem.field}\` ` +
                `(${problem.found}; it must be ${problem.expected}), which the provider reads, so nothing of it was used.` +
                `${instead} Check the API's version (or what stands between us and it).`,
        );
    }

    /** The task a 202 names in its Location: `<ASYNC_OPERATIONS_PATH>/<id>` on the API's origin, resolved. */
    private taskUriOf(response: TaskApiResponse<unknown>, method: string, path: string): string {
        const malformed = (problem: string) =>
            new MalformedResponseError(method, this.client.redact(path), problem, response.status);
        if (response.status !== 202) throw malformed(`expected 202 Accepted for a task, got ${response.status}`);
        if (!response.location) throw malformed("202 Accepted without a Location header");
        const task = taskOfUri(response.location, this.client.baseUrl);
        if ("problem" in task) throw malformed(`202 Accepted names its task as ${this.client.redact(task.problem)}`);
        return task.url;
    }
}

/** An id that is not of the API's shape, about to go into a path (it came from the stack's state). */
function stateIdError(what: string, id: string): TaskApiContractError {
    return new TaskApiContractError(
        `the ${what} id ${describeValue(id)} is not an id of the task API (one path segment of letters, digits, ` +
            `".", "_", "~", "-"), so no request was sent for it. Run \`pulumi refresh\` to look the datastore up again.`,
    );
}
