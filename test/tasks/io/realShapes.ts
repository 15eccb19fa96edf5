// The datastore API's answers in the real API's shapes, as HPE's own provider captured them for its
// simulator (hpegl-pcbe-terraform-resources `internal/simulator/fixtures/datastores/create/`): a record
// (`get.json`), an async operation (`async1.json` .. `async5.json`) and a list page. For tests that point
// the Datastore at a server answering as the real API does.

import { ASYNC_OPERATIONS_PATH, DATASTORES_PATH } from "../../../provider/tasks/protocol/wire";
import { CLUSTER, GIB, HCI } from "../client/support";

/** The id of the datastore in the captured record. */
export const API_DATASTORE_ID = "698de955-87b5-5fe6-b683-78c3948beede";
/** The id of the captured create operation. */
export const API_OPERATION_ID = "be55685c-f84f-4ad5-a3d1-2d7692ed47b1";

/**
 * A datastore as the real API answers it: the record HPE's provider captured after a create
 * (`internal/simulator/fixtures/datastores/create/get.json`): every top-level field, some nested objects
 * shortened, with the test's clusters and name. Its size is `capacityInBytes`; a `sizeInBytes` appears only inside `volumesInfo`, and is the
 * volume's (larger) size, not the datastore's.
 */
export function apiRecord(hci = HCI, cluster = CLUSTER): Record<string, unknown> {
    return {
        allowedOperations: ["DATASTORE_CREATE", "DATASTORE_DELETE"],
        appType: "VMWARE",
        capacityFree: 15670968320,
        capacityInBytes: 16 * GIB,
        capacityUncommitted: 0,
        clusterInfo: {
            displayName: "5305-CL",
            id: cluster,
            name: "5305-CL",
            resourceUri: `/virtualization/v1beta1/hypervisor-clusters/${cluster}`,
            type: "virtualization/hypervisor-cluster",
        },
        createdAt: "2024-07-29T12:43:02Z",
        customerId: "bb20052ac81011ed895f7a6e2fba2c57",
        datacentersInfo: [
            { displayName: "", id: "7d8051ab-4224-5075-93be-c1c0fa645e7d", moref: "datacenter-3", name: "5305-DC" },
        ],
        datastoreClassification: "",
        datastoreType: "VMFS",
        displayName: "ds19",
        folderInfo: { displayName: "datastore", id: "980201dd-c93a-5861-b0d1-d2d632696003", name: "datastore" },
        generation: 1,
        hciClusterUuid: hci,
        hostsInfo: [{ displayName: "16.182.105.217", id: "530b1894-9bd0-5627-9362-565aff1e5cbd" }],
        hypervisorManagerInfo: { displayName: "16.182.107.157", id: "c47b89e9-3a66-4fb9-9a22-cdec3c51604d" },
        id: API_DATASTORE_ID,
        moref: "datastore-43",
        name: "ds19",
        protected: false,
        protectionJobInfo: { id: "", protectionPolicyInfo: { id: "", name: "", resourceUri: "", type: "" } },
        protectionPolicyAppliedAtInfo: { id: "", name: "", resourceUri: "", type: "" },
        provisioningPolicyInfo: { id: "", name: "", resourceUri: "", type: "" },
        replicationInfo: { id: "", name: "", partnerDetails: null, resourceUri: "" },
        resourceUri: `${DATASTORES_PATH}/${API_DATASTORE_ID}`,
        services: ["hci-manager"],
        state: "OK",
        stateReason: "OK",
        status: "OK",
        type: "virtualization/datastore",
        uid: "66a78e56-bc8d57b4-f50e-bc97e1e94000",
        updatedAt: "2024-07-29T12:43:02Z",
        vmCount: 0,
        vmProtectionGroupsInfo: null,
        volumesInfo: [
            { displayName: "ds19", id: "0672c65541fc2058ba00000000000000000000000a", sizeInBytes: 17448304640 },
        ],
    };
}

/** An async operation as the real API answers it (the same fixtures, `create/async1.json` and `async5.json`). */
export function apiOperation(state: "RUNNING" | "SUCCEEDED"): Record<string, unknown> {
    const done = state === "SUCCEEDED";
    return {
        associatedResources: [],
        createdAt: "2024-07-29T12:42:46.443256231Z",
        displayName: "Create Datastore: 'ds19'",
        endedAt: done ? "2024-07-29T12:43:31.699429406Z" : null,
        error: null,
        generation: done ? 6 : 1,
        healthStatus: "OK",
        id: API_OPERATION_ID,
        logMessages: [{ message: "Create Datastore task is running", timestamp: "2024-07-29T12:42:46.443261567Z" }],
        name: "Create-Datastore: 'ds19'",
        progressPercent: done ? 100 : 0,
        resourceUri: `${ASYNC_OPERATIONS_PATH}/${API_OPERATION_ID}`,
        services: ["private-cloud-business-edition"],
        sourceResourceUri: done ? `${DATASTORES_PATH}/${API_DATASTORE_ID}` : null,
        state,
        suggestedPollingIntervalSeconds: 30,
        type: "task",
    };
}

/** A real list answer: the page, and `total` (HPE's provider refuses a list without it). */
export function apiList(items: unknown[]): Record<string, unknown> {
    return { items, count: items.length, offset: 0, total: items.length };
}
