// Pure state builders of the Datastore provider: natural keys, the create request, the outputs recorded
// after each operation, adoption, and which failures leave a create's outcome unknown.

import { type DatastoreInputs, type DatastoreOutputs, type NaturalKey, parseNaturalKeyId } from "../datastoreSchema";
import { CrossOriginError } from "../errors/crossOriginError";
import { DatastoreAdoptMismatchError } from "../errors/datastoreAdoptMismatchError";
import { DatastoreIdError } from "../errors/datastoreIdError";
import { MalformedResponseError } from "../errors/malformedResponseError";
import { TaskApiConfigError } from "../errors/taskApiConfigError";
import { TaskApiContractError } from "../errors/taskApiContractError";
import { TaskApiError } from "../errors/taskApiError";
import { TaskApiUnreachableError } from "../errors/taskApiUnreachableError";
import type { DatastoreRecord } from "../protocol/wire";

/** Inputs as the engine hands them over: the checked inputs plus `__provider`. */
export type RawInputs = DatastoreInputs & Record<string, unknown>;

export function naturalKeyOf(values: NaturalKey): NaturalKey {
    return { hciClusterUuid: values.hciClusterUuid, clusterId: values.clusterId, name: values.name };
}

/** The key of a known datastore: from its state when there is one (read, delete), else from its id (import). */
export function keyOf(id: string, props: DatastoreOutputs | undefined): NaturalKey {
    const key = props?.name ? naturalKeyOf(props) : parseNaturalKeyId(id);
    if (!key) throw new DatastoreIdError(id);
    return key;
}

export function createRequestOf(inputs: DatastoreInputs) {
    return {
        name: inputs.name,
        hciClusterUuid: inputs.hciClusterUuid,
        clusterId: inputs.clusterId,
        sizeInBytes: inputs.sizeInBytes,
        datastoreType: inputs.datastoreType,
    };
}

/** State from inputs and what the API says (the API wins for what it knows). */
export function outputsOf(
    inputs: DatastoreInputs,
    found: DatastoreRecord | undefined,
    extra: { taskId?: string | undefined; tainted: boolean; taintReason?: string },
): DatastoreOutputs {
    const outputs: DatastoreOutputs = {
        hciClusterUuid: inputs.hciClusterUuid,
        clusterId: inputs.clusterId,
        name: inputs.name,
        sizeInBytes: found?.sizeInBytes ?? inputs.sizeInBytes,
        datastoreType: found?.datastoreType ?? inputs.datastoreType,
        adopt: inputs.adopt,
        untaint: inputs.untaint,
        tainted: extra.tainted,
    };
    if (inputs.createToken !== undefined) outputs.createToken = inputs.createToken;
    if (inputs.timeouts !== undefined) outputs.timeouts = inputs.timeouts;
    if (found) {
        outputs.datastoreId = found.id;
        outputs.state = found.state;
    }
    if (extra.taskId !== undefined) outputs.taskId = extra.taskId;
    if (extra.taintReason !== undefined) outputs.taintReason = extra.taintReason;
    return outputs;
}

/** The outputs a failed update leaves on record: the old state, with the new inputs' settings. */
export function keptOutputs(olds: DatastoreOutputs, news: DatastoreInputs): DatastoreOutputs {
    const { __provider: _, ...rest } = olds as DatastoreOutputs & { __provider?: unknown };
    return { ...rest, createToken: news.createToken ?? rest.createToken, untaint: news.untaint } as DatastoreOutputs;
}

/** Refresh: the API's view of the datastore, with the settings and taint only the state knows. */
export function refreshed(props: Partial<DatastoreOutputs> | undefined, found: DatastoreRecord): DatastoreOutputs {
    const outputs: DatastoreOutputs = {
        hciClusterUuid: found.hciClusterUuid,
        clusterId: found.clusterInfo.id,
        name: found.name,
        sizeInBytes: found.sizeInBytes,
        datastoreType: found.datastoreType,
        adopt: props?.adopt ?? false,
        untaint: props?.untaint ?? false,
        tainted: props?.tainted ?? false,
        datastoreId: found.id,
        state: found.state,
    };
    for (const key of ["createToken", "timeouts", "taskId", "taintReason"] as const) {
        if (props?.[key] !== undefined) (outputs as unknown as Record<string, unknown>)[key] = props[key];
    }
    return outputs;
}

/** `adopt: true`: take over an existing datastore that matches the program, or name each difference. */
export function adopted(label: string, inputs: DatastoreInputs, found: DatastoreRecord): DatastoreOutputs {
    const differences: string[] = [];
    if (found.sizeInBytes !== inputs.sizeInBytes) {
        differences.push(`sizeInBytes: the API has ${found.sizeInBytes}, the program has ${inputs.sizeInBytes}`);
    }
    if (found.datastoreType !== inputs.datastoreType) {
        differences.push(`datastoreType: the API has ${found.datastoreType}, the program has ${inputs.datastoreType}`);
    }
    if (found.state !== "OK") differences.push(`state: it is ${found.state}; adopt it once it is OK`);
    if (differences.length > 0) {
        throw new DatastoreAdoptMismatchError(label, found.id, differences);
    }
    return outputsOf(inputs, found, { tainted: false });
}

export function single(label: string, found: readonly DatastoreRecord[]): DatastoreRecord {
    if (found.length > 1) {
        throw new TaskApiContractError(
            `${label} matches ${found.length} datastores (ids ${found.map((d) => d.id).join(", ")}); the natural key must name one`,
        );
    }
    return found[0] as DatastoreRecord;
}

/**
 * Whether a failed request may still have been carried out by the server: no answer, a 5xx or 408, an
 * accepted answer that cannot be read (no Location, not JSON), or an abort while it was in flight.
 */
export function outcomeUnknown(error: unknown): boolean {
    if (error instanceof TaskApiUnreachableError || error instanceof MalformedResponseError) return true;
    if (error instanceof TaskApiError) return error.status >= 500 || error.status === 408;
    return !(error instanceof TaskApiConfigError || error instanceof CrossOriginError);
}
