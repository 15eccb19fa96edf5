// Pure: `tasks.Datastore` as a definition on the async engine. The GreenLake dialect, where datastores
// live and how one is looked up by its natural key, what a record must hold before anything in it is
// used, what a datastore in ERROR means, what may change in place; and the Datastore's state (the shape
// programs and existing stacks know) translated to and from the engine's.

import type { AsyncResourceOutputs, PendingOperation } from "../asyncResourceSchema";
import {
    type DatastoreInputs,
    type DatastoreOutputs,
    describeDatastore,
    formatNaturalKeyId,
    type NaturalKey,
} from "../datastoreSchema";
import { DatastoreAdoptMismatchError } from "../errors/datastoreAdoptMismatchError";
import { MalformedResponseError } from "../errors/malformedResponseError";
import { TaskApiContractError } from "../errors/taskApiContractError";
import { datastoreOfUri, describeValue } from "../protocol/answers";
import { checkedApiId, greenlakeDialect } from "../protocol/dialects/greenlake";
import { formatFilter } from "../protocol/filter";
import {
    type CreateDatastoreRequest,
    DATASTORES_PATH,
    type DatastoreRecord,
    datastoreRecordProblem,
    datastoreUri,
    isApiId,
} from "../protocol/wire";
import type { AsyncSpec, KindRules } from "./asyncSpec";
import type { RawAsyncInputs } from "./asyncState";

/** How the engine's handle of a GreenLake operation is recorded: the task id alone is in the Datastore's state. */
const OPERATION_KIND = "greenlake-operation";

/** A Datastore's inputs (or state) as the engine works with them: its own fields kept, the create request as the body. */
export type EngineDatastore = RawAsyncInputs & DatastoreInputs;

/** Where and how a datastore with this natural key lives at the task API. */
export function datastoreSpec(key: NaturalKey): AsyncSpec {
    const naturalKey = formatNaturalKeyId(key);
    const label = describeDatastore(key);
    const filter = formatFilter([
        { field: "hciClusterUuid", value: key.hciClusterUuid },
        { field: "clusterInfo/id", value: key.clusterId },
        { field: "name", value: key.name },
    ]);
    return {
        dialect: greenlakeDialect(),
        key: naturalKey,
        target: { collectionPath: DATASTORES_PATH, itemPath: itemPathOf },
        keyIsId: false,
        idOf: (record) =>
            isApiId((record as { id?: unknown } | undefined)?.id) ? (record as { id: string }).id : undefined,
        keyOf: keyOfRecord,
        listPath: `${DATASTORES_PATH}?filter=${encodeURIComponent(filter)}`,
        listItems: (answer) => {
            const items = (answer as { items?: unknown } | undefined)?.items;
            return Array.isArray(items) ? items : undefined;
        },
        // GreenLake pages by offset: `{items, count, offset, total}` (HPE's client reads `total`).
        nextPage: (answer) => {
            const { items, offset, total } = (answer ?? {}) as { items?: unknown; offset?: unknown; total?: unknown };
            if (!Array.isArray(items) || items.length === 0) return undefined;
            if (typeof offset !== "number" || typeof total !== "number") return undefined;
            const next = offset + items.length;
            return next < total ? `${DATASTORES_PATH}?filter=${encodeURIComponent(filter)}&offset=${next}` : undefined;
        },
        label,
        rules: datastoreRules(label),
    };
}

/** The natural key a record carries, as the resource id writes it: UUIDs lowercased (check lowercases the program's), the name as it is. */
function keyOfRecord(record: unknown): string | undefined {
    const r = record as Partial<DatastoreRecord> | undefined;
    if (typeof r?.hciClusterUuid !== "string" || typeof r.clusterInfo?.id !== "string" || typeof r.name !== "string")
        return undefined;
    return formatNaturalKeyId({
        hciClusterUuid: r.hciClusterUuid.toLowerCase(),
        clusterId: r.clusterInfo.id.toLowerCase(),
        name: r.name,
    });
}

/** The path of a datastore; an id from the stack's state not of the API's shape sends no request. */
function itemPathOf(id: string): string {
    return datastoreUri(checkedApiId(id, "datastore"));
}

/** What a Datastore adds to the wire: record shapes, ERROR, adoption that must match, a resize as the only update. */
function datastoreRules(label: string): KindRules {
    return {
        exactLookup: true,
        uniqueKey: true,
        readsByKey: true,
        memberId: (uri, baseUrl) => datastoreOfUri(uri, baseUrl),
        adoptNote: (record) => {
            const { state } = record as DatastoreRecord;
            if (state === "ERROR")
                return "in state ERROR it is taken over tainted, and the next `pulumi up` replaces it";
            return state === "OK"
                ? "its size and type must match the program"
                : `its size and type must match the program, once it is OK instead of ${state}`;
        },
        recordError: recordError,
        brokenReason: (record) =>
            (record as DatastoreRecord).state === "ERROR" ? `${label} is in state ERROR at the API` : undefined,
        beingDeleted: (record) => (record as DatastoreRecord).state === "DELETING",
        atRest: (record) => {
            const { state } = record as DatastoreRecord;
            return state === "OK" || state === "ERROR";
        },
        adoptRefusal: (body, record, id) => {
            const request = body as unknown as CreateDatastoreRequest;
            const found = record as DatastoreRecord;
            const differences: string[] = [];
            if (found.capacityInBytes !== request.sizeInBytes)
                differences.push(
                    `sizeInBytes: the API has ${found.capacityInBytes}, the program has ${request.sizeInBytes}`,
                );
            if (found.datastoreType !== request.datastoreType)
                differences.push(
                    `datastoreType: the API has ${found.datastoreType}, the program has ${request.datastoreType}`,
                );
            if (found.state !== "OK" && found.state !== "ERROR")
                differences.push(`state: it is ${found.state}; adopt it once it is OK`);
            return differences.length > 0 ? new DatastoreAdoptMismatchError(label, id, differences) : undefined;
        },
        updateBody: (body) => ({ sizeInBytes: (body as unknown as CreateDatastoreRequest).sizeInBytes }),
        bodyAsRecorded: (body, record) => {
            const found = record as DatastoreRecord;
            return { ...body, sizeInBytes: found.capacityInBytes, datastoreType: found.datastoreType };
        },
        existsDetail: (record) => {
            const found = record as DatastoreRecord;
            return `${found.state}, ${found.capacityInBytes} bytes ${found.datastoreType}`;
        },
    };
}

/**
 * Why `value` cannot be used as a datastore record (see datastoreRecordProblem), as the error to fail
 * with; undefined when it can. Fields the provider does not read are kept and never looked at. Not an
 * object, or an id not of the API's shape: a MalformedResponseError (the answer is not a datastore at
 * all). A record without a field the provider reads: a TaskApiContractError naming the field.
 */
function recordError(value: unknown, method: string, path: string): Error | undefined {
    const problem = datastoreRecordProblem(value);
    if (!problem) return undefined;
    if (problem.field === "" || problem.field === "id") {
        const subject = problem.field === "" ? "it" : "its id";
        const found = problem.field === "id" ? ` ${describeValue((value as { id?: unknown }).id)}` : "";
        return new MalformedResponseError(
            method,
            path,
            `the answer is not a datastore: ${subject}${found} is not ${problem.expected}`,
        );
    }
    const id = (value as { id: string }).id;
    const instead =
        problem.field === "capacityInBytes" && Object.hasOwn(value as object, "sizeInBytes")
            ? " It has `sizeInBytes` instead: the name a create sends the size by, which the API's records " +
              "give as `capacityInBytes` (a server of another version of the API, or not the GreenLake API?)."
            : "";
    return new TaskApiContractError(
        `the task API answered ${method} ${path} with datastore ${id} without a usable \`${problem.field}\` ` +
            `(${problem.found}; it must be ${problem.expected}), which the provider reads, so nothing of it was used.` +
            `${instead} Check the API's version (or what stands between us and it).`,
    );
}

/**
 * The body of the create, as HPE's own provider builds it (hpegl-pcbe-terraform-resources
 * `internal/resources/datastore/resource.go`, doCreate): the storage system is the HCI cluster
 * (`SetStorageSystemId(&hciClusterUUID)`), the target hypervisor cluster the one `clusterInfo.id` will
 * name. `volumeInfo` is left out, as HPE's provider leaves it (FF-29512): the API then picks its defaults.
 */
export function createRequestOf(inputs: DatastoreInputs): CreateDatastoreRequest {
    return {
        name: inputs.name,
        sizeInBytes: inputs.sizeInBytes,
        storageSystemId: inputs.hciClusterUuid,
        targetHypervisorClusterId: inputs.clusterId,
        datastoreType: inputs.datastoreType,
    };
}

/** A Datastore's inputs as the engine takes them. */
export function engineInputs(inputs: DatastoreInputs & Record<string, unknown>): EngineDatastore {
    return { ...inputs, body: createRequestOf(inputs) as unknown as Record<string, unknown> } as EngineDatastore;
}

/**
 * A Datastore's state as the engine takes it. The state records the last task Pulumi started, not
 * whether its end was seen: a task is one to follow on when nothing was recorded of what it made (an
 * interrupted or timed-out create), or the datastore was last seen in the middle of it.
 */
export function engineState(props: DatastoreOutputs & Record<string, unknown>): AsyncResourceOutputs & EngineDatastore {
    const state: Record<string, unknown> = { ...engineInputs(props), tainted: props.tainted };
    for (const [from, to] of [
        ["datastoreId", "resourceId"],
        ["taintReason", "taintReason"],
        ["createKey", "createKey"],
        ["keyHeldBy", "keyHeldBy"],
    ] as const) {
        if (props[from] !== undefined) state[to] = props[from];
    }
    const operation = operationOf(props);
    if (operation) state.operation = operation;
    return state as unknown as AsyncResourceOutputs & EngineDatastore;
}

function operationOf(props: DatastoreOutputs): PendingOperation | undefined {
    if (props.taskId === undefined) return undefined;
    const ref = props.taskId;
    if (props.datastoreId === undefined || props.state === "CREATING")
        return { write: "create", kind: OPERATION_KIND, ref };
    if (props.state === "UPDATING") return { write: "update", kind: OPERATION_KIND, ref };
    return undefined;
}

/**
 * The engine's state as a Datastore's: what the API's record says wins (its `capacityInBytes` recorded
 * as the `sizeInBytes` a program sets), with the settings only the state knows. `lastTask`: the task the
 * operation followed, when the state names none still running.
 */
export function datastoreState(state: Record<string, unknown>, lastTask: string | undefined): DatastoreOutputs {
    const engine = state as unknown as AsyncResourceOutputs & EngineDatastore;
    const record = engine.resource as DatastoreRecord | undefined;
    const request = engine.body as unknown as CreateDatastoreRequest;
    const outputs: DatastoreOutputs = {
        hciClusterUuid: record ? record.hciClusterUuid.toLowerCase() : engine.hciClusterUuid,
        clusterId: record ? record.clusterInfo.id.toLowerCase() : engine.clusterId,
        name: record ? record.name : engine.name,
        sizeInBytes: record?.capacityInBytes ?? request.sizeInBytes,
        datastoreType: record?.datastoreType ?? request.datastoreType,
        adopt: engine.adopt ?? false,
        untaint: engine.untaint ?? false,
        tainted: engine.tainted ?? false,
    };
    if (engine.createToken !== undefined) outputs.createToken = engine.createToken;
    if (engine.timeouts !== undefined) outputs.timeouts = engine.timeouts;
    if (engine.customTimeouts !== undefined) outputs.customTimeouts = engine.customTimeouts;
    if (engine.resourceId !== undefined) outputs.datastoreId = engine.resourceId;
    const pending = engine.operation;
    const seen = pending?.write === "update" ? "UPDATING" : record?.state;
    if (seen !== undefined && engine.resourceId !== undefined) outputs.state = seen;
    const taskId = pending?.ref ?? lastTask ?? (state.taskId as string | undefined);
    if (taskId !== undefined) outputs.taskId = taskId;
    if (engine.taintReason !== undefined) outputs.taintReason = engine.taintReason;
    if (engine.createKey !== undefined) outputs.createKey = engine.createKey;
    if (engine.keyHeldBy !== undefined) outputs.keyHeldBy = engine.keyHeldBy;
    return outputs;
}
