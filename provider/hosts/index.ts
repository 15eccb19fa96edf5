// The `hosts` namespace of the package: what users may rely on (the resource, the read helpers, the
// errors). The file model and the import planner stay internal; `pulumi-lifecycle hosts import` is their
// interface.

export { AdoptMismatchError } from "./errors/adoptMismatchError";
export { ConnectionSettingsError } from "./errors/connectionSettingsError";
export { EntryConflictError } from "./errors/entryConflictError";
export { EntryMachineError } from "./errors/entryMachineError";
export { EntryMissingError } from "./errors/entryMissingError";
export { EntryNotFoundError } from "./errors/entryNotFoundError";
export { HostEntryIdError } from "./errors/hostEntryIdError";
export { HostsFileError } from "./errors/hostsFileError";
export { HostsFileNotFoundError } from "./errors/hostsFileNotFoundError";
export { SshConnectionError, type SshFailure } from "./errors/sshConnectionError";
export { SshHostKeyError } from "./errors/sshHostKeyError";
export { UnsupportedHostsFileError } from "./errors/unsupportedHostsFileError";
export { HostEntry, type HostEntryArgs, type HostEntryConnection, type HostEntryState } from "./hostEntry";
export type { HostEntryInputs, HostEntryOutputs } from "./hostEntrySchema";
export {
    findHostEntries,
    type HostEntryQuery,
    type HostsFileConnection,
    type HostsFileEntry,
    type ListHostEntriesOptions,
    listHostEntries,
} from "./io/lookup";
export type { AddressFamily } from "./logic/address";
export { HOSTS_FILE_CONFIG_KEY, osHostsFile } from "./logic/defaultFile";
