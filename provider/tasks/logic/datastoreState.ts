// Pure state builders of the Datastore provider: natural keys, the create request, the outputs recorded
// after each operation, adoption, and which failures leave a create's outcome unknown.

import { LifecycleError } from "../../shared/errors/lifecycleError";
import { messageOf } from "../../shared/text";
import {
    type DatastoreInputs,
    type DatastoreOutputs,
    describeDatastore,
    formatNaturalKeyId,
    type NaturalKey,
    parseNaturalKeyId,
} from "../datastoreSchema";
import { DatastoreAdoptMismatchError } from "../errors/datastoreAdoptMismatchError";
import { DatastoreExistsError } from "../errors/datastoreExistsError";
import { DatastoreIdError } from "../errors/datastoreIdError";
import { MalformedResponseError } from "../errors/malformedResponseError";
import { PartialStateError } from "../errors/partialStateError";
import { TaskApiContractError } from "../errors/taskApiContractError";
import { TaskApiError } from "../errors/taskApiError";
import { TaskApiUnreachableError } from "../errors/taskApiUnreachableError";
import type { CreateDatastoreRequest, DatastoreRecord } from "../protocol/wire";

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

/**
 * State from inputs and what the API says (the API wins for what it knows). The API's record gives the
 * size as `capacityInBytes`: recorded as the resource's `sizeInBytes`, the name a program sets it by.
 */
export function outputsOf(
    inputs: DatastoreInputs,
    found: DatastoreRecord | undefined,
    extra: { taskId?: string | undefined; tainted: boolean; taintReason?: string },
): DatastoreOutputs {
    const outputs: DatastoreOutputs = {
        hciClusterUuid: inputs.hciClusterUuid,
        clusterId: inputs.clusterId,
        name: inputs.name,
        sizeInBytes: found?.capacityInBytes ?? inputs.sizeInBytes,
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

/**
 * The outputs a failed update leaves on record: the old state, with the new inputs' settings. A pending
 * create keeps the createToken it was sent with (see resumedInputs).
 */
export function keptOutputs(olds: DatastoreOutputs, news: DatastoreInputs): DatastoreOutputs {
    const { __provider: _, ...rest } = olds as DatastoreOutputs & { __provider?: unknown };
    const createToken = isPendingCreate(olds) ? rest.createToken : (news.createToken ?? rest.createToken);
    return { ...rest, createToken, untaint: news.untaint } as DatastoreOutputs;
}

/** A create that was interrupted, or whose outcome was unknown: no datastore on record, not tainted. */
export function isPendingCreate(olds: Partial<DatastoreOutputs>): boolean {
    return !olds.datastoreId && !olds.tainted;
}

/**
 * The inputs a pending create is resumed with: the program's settings, and the request as it was sent
 * (its createToken, size and type). Only a replay of that request with its key tells whether a datastore
 * listed with the name (`found`) is what it made: a token set since is a key never seen (409: the
 * resource's own datastore refused as someone else's), and the key with another body is refused (422),
 * not replayed. A size changed since is resized by the next up. A create sent without a token is told by
 * its name; with none listed, the program's token makes the new create a keyed one.
 */
export function resumedInputs(olds: DatastoreOutputs, news: RawInputs, found: boolean): RawInputs {
    const { createToken: _, ...rest } = news;
    if (olds.createToken !== undefined) {
        const { createToken, sizeInBytes, datastoreType } = olds;
        return { ...rest, createToken, sizeInBytes, datastoreType } as RawInputs;
    }
    return (found || news.createToken === undefined ? rest : { ...rest, createToken: news.createToken }) as RawInputs;
}

/**
 * Refresh: the API's view of the datastore, with the settings and taint only the state knows. A datastore
 * in ERROR never becomes OK: it comes back tainted (with the reason of a taint already on record), so the
 * next up replaces it, as create and update record one. Else a pending create whose task failed since
 * would be recorded healthy, the engine would drop its init errors, and no up would ever replace it.
 */
export function refreshed(props: Partial<DatastoreOutputs> | undefined, found: DatastoreRecord): DatastoreOutputs {
    const outputs: DatastoreOutputs = {
        // Lowercase, as check writes the program's: an API answering capitals is no change of natural key.
        hciClusterUuid: found.hciClusterUuid.toLowerCase(),
        clusterId: found.clusterInfo.id.toLowerCase(),
        name: found.name,
        sizeInBytes: found.capacityInBytes,
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
    if (found.state === "ERROR" && !outputs.tainted) {
        outputs.tainted = true;
        outputs.taintReason = inErrorReason(describeDatastore(outputs), outputs.untaint);
    }
    return outputs;
}

/** Why a datastore in ERROR is tainted: it never becomes OK, and the API refuses to resize it. */
export function inErrorReason(label: string, untaint: boolean | undefined): string {
    const next = untaint
        ? "remove untaint so the next up replaces it"
        : "the next `pulumi up` replaces it (set `untaint: true` to keep it)";
    return `${label} is in state ERROR at the API; ${next}`;
}

/** `adopt: true`: take over an existing datastore that matches the program, or name each difference. */
export function adopted(label: string, inputs: DatastoreInputs, found: DatastoreRecord): DatastoreOutputs {
    const differences: string[] = [];
    if (found.capacityInBytes !== inputs.sizeInBytes) {
        differences.push(`sizeInBytes: the API has ${found.capacityInBytes}, the program has ${inputs.sizeInBytes}`);
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
 * Whether a failed request may still have been carried out by the server. A positive list: no answer
 * (network error, timeout), a 5xx or 408, a success answer that cannot be read (not JSON, no usable
 * Location), an abort while it was in flight (`aborted`), or any error answer to a retry after an attempt
 * of unknown outcome (a 400, a 409 while the key is in progress, a 429 past the deadline: the last
 * answer does not undo what the earlier attempt may have done). Anything else is definite: a 4xx says
 * the request was refused, and an error of our own (a bug, a stack overflow) is no reason to think it was not.
 */
export function outcomeUnknown(error: unknown, aborted = false): boolean {
    if (error instanceof TaskApiError) {
        return error.earlierOutcomeUnknown || error.status >= 500 || error.status === 408;
    }
    if (error instanceof TaskApiUnreachableError) return true;
    if (error instanceof MalformedResponseError) {
        return error.status !== undefined && error.status >= 200 && error.status < 300;
    }
    if (error instanceof LifecycleError) return false;
    return aborted;
}

/** A datastore with this natural key exists, not made by this resource: adopt it, or refuse with DatastoreExistsError. */
export function takeOver(inputs: RawInputs, key: NaturalKey, label: string, found: DatastoreRecord): DatastoreOutputs {
    if (!inputs.adopt) throw new DatastoreExistsError(label, found, !!inputs.createToken);
    // A datastore in ERROR never becomes OK: take it over tainted, so the next up replaces it.
    if (found.state === "ERROR") throw takenInError(inputs, key, `adopted in state ERROR (id ${found.id})`, found);
    return adopted(label, inputs, found);
}

/** A create without a token whose outcome was unknown, resumed: the datastore with its name is the one. */
export function resumedByName(
    inputs: RawInputs,
    key: NaturalKey,
    label: string,
    found: DatastoreRecord,
): DatastoreOutputs {
    if (found.state === "ERROR") throw takenInError(inputs, key, `${label} (id ${found.id}) is in state ERROR`, found);
    return outputsOf(inputs, found, { tainted: false });
}

/** A datastore in ERROR taken as this resource's: partial state, tainted, so the next up replaces it. */
export function takenInError(
    inputs: RawInputs,
    key: NaturalKey,
    what: string,
    found: DatastoreRecord,
): PartialStateError {
    const reason = `${what}; the next \`pulumi up\` replaces it`;
    return partialState(inputs, key, outputsOf(inputs, found, { tainted: true, taintReason: reason }), reason);
}

/**
 * A POST whose outcome is unknown (no answer, a 5xx, an answer without a task, SIGINT while it was in
 * flight): the datastore may exist. Recorded as partial state without a datastore id, which the next
 * `up` resolves (by replaying the token, or by the natural key).
 */
export function pendingCreate(
    inputs: RawInputs,
    key: NaturalKey,
    error: unknown,
    idempotencyKey: string | undefined,
): PartialStateError {
    const how = idempotencyKey ? "replaying its createToken" : "its name";
    const reason =
        `the create request's outcome is unknown (${messageOf(error)}). The datastore may exist: the next ` +
        `\`pulumi up\` finds it by ${how} and records it, or creates it`;
    return partialState(inputs, key, outputsOf(inputs, undefined, { tainted: false }), reason);
}

/**
 * Partial state for the engine: the raw inputs (with `__provider`) and what is known. Undefined values
 * are left out: the SDK server cannot encode them, and would never answer the engine.
 */
export function partialState(
    inputs: RawInputs,
    key: NaturalKey,
    outputs: DatastoreOutputs,
    reason: string,
): PartialStateError {
    const message = `${describeDatastore(key)}: ${reason}`;
    const properties = Object.fromEntries(
        Object.entries({ ...inputs, ...outputs }).filter(([, value]) => value !== undefined),
    );
    return new PartialStateError(message, formatNaturalKeyId(key), properties, [message]);
}
