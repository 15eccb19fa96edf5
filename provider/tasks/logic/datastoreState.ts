// Pure: the natural key of a Datastore, from its inputs, its state or its resource id.

import { type DatastoreInputs, type DatastoreOutputs, type NaturalKey, parseNaturalKeyId } from "../datastoreSchema";
import { DatastoreIdError } from "../errors/datastoreIdError";

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
