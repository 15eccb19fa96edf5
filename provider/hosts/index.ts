// The `hosts` namespace of the package.

export { AdoptMismatchError } from "./adoptMismatchError";
export { HOSTS_FILE_CONFIG_KEY, osHostsFile } from "./defaultFile";
export { EntryConflictError } from "./entryConflictError";
export { EntryMissingError } from "./entryMissingError";
export { HostEntry, type HostEntryArgs, type HostEntryState } from "./hostEntry";
export { HostsFileError } from "./hostsFileError";
export type { HostEntryInputs, HostEntryOutputs } from "./schema";
