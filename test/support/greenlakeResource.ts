// A tasks.AsyncResource of the greenlake dialect whose API is the package's own task API server: a
// datastore declared through the generic resource, as a program that speaks GreenLake itself would.

import { DATASTORES_PATH, GIB } from "../../provider/tasks/protocol/wire";
import { CLUSTER, HCI } from "./datastoreFixture";

/** The AsyncResource arguments of datastore `name` at `url`; `api` adds to (or replaces) the API settings. */
export function greenlakeArgs(
    url: string,
    name: string,
    api: Record<string, unknown> = { tokenEnv: "GREENLAKE_TOKEN" },
): Record<string, unknown> {
    return {
        api: { url, dialect: "greenlake", ...api },
        collectionPath: DATASTORES_PATH,
        itemPath: `${DATASTORES_PATH}/{id}`,
        body: {
            name,
            sizeInBytes: 16 * GIB,
            storageSystemId: HCI,
            targetHypervisorClusterId: CLUSTER,
            datastoreType: "VMFS",
        },
        naturalKey: "name",
        idField: "id",
        lookup: { query: `filter=name eq '{key}' and clusterInfo/id eq '${CLUSTER}'` },
    };
}
