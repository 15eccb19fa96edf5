// Guards the package's public surface: what `import ... from "pulumi-lifecycle"` offers at run time is
// exactly the list below, and every name on it is in the README, so that nothing is exported by accident
// (an internal module a user would come to rely on) and nothing exported goes undocumented.

import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as lifecycle from "../provider";
import { REPO_ROOT } from "./support/projects";

const SURFACE = {
    "": ["LifecycleError", "LockTimeoutError", "NewerStateError", "UnknownResourceKindError", "hosts", "tasks"],
    hosts: [
        "AdoptMismatchError",
        "ConnectionSettingsError",
        "EntryConflictError",
        "EntryMachineError",
        "EntryMissingError",
        "EntryNotFoundError",
        "HOSTS_FILE_CONFIG_KEY",
        "HostEntry",
        "HostEntryIdError",
        "HostsFileError",
        "HostsFileNotFoundError",
        "SshConnectionError",
        "SshHostKeyError",
        "UnsupportedHostsFileError",
        "findHostEntries",
        "listHostEntries",
        "osHostsFile",
    ],
    tasks: [
        "AsyncApiTokenError",
        "AsyncResource",
        "AsyncResourceDefinitionError",
        "AsyncResourceOperationError",
        "CreateOutcomeUnknownError",
        "CreateTokenSpentError",
        "CrossOriginError",
        "Datastore",
        "DatastoreAdoptMismatchError",
        "DatastoreDeleteUnconfirmedError",
        "DatastoreExistsError",
        "DatastoreIdError",
        "DatastoreMissingError",
        "DatastoreOperationError",
        "DeleteUnconfirmedError",
        "DeletionUnderWayError",
        "MalformedResponseError",
        "OperationFailedError",
        "OperationWaitError",
        "ResourceExistsError",
        "ResourceMissingError",
        "TaskApiConfigError",
        "TaskApiContractError",
        "TaskApiError",
        "TaskApiUnreachableError",
    ],
} as const;

describe("the package's public surface", () => {
    const namespaces: Record<keyof typeof SURFACE, object> = {
        "": lifecycle,
        hosts: lifecycle.hosts,
        tasks: lifecycle.tasks,
    };

    for (const [name, expected] of Object.entries(SURFACE) as [keyof typeof SURFACE, readonly string[]][]) {
        it(`exports exactly the deliberate names ${name ? `of \`${name}\`` : "at the top level"}`, () => {
            assert.deepEqual(Object.keys(namespaces[name]).sort(), [...expected].sort());
        });
    }

    it("names every export in the README", () => {
        const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
        const missing = Object.values(SURFACE)
            .flat()
            .filter((name) => !readme.includes(`\`${name}`) && !readme.includes(`.${name}`));
        assert.deepEqual(missing, []);
    });
});
