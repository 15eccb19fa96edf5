// The `hosts` namespace of the package.

export type { AddressFamily } from "./address";
export { AdoptMismatchError } from "./adoptMismatchError";
export { HOSTS_FILE_CONFIG_KEY, osHostsFile } from "./defaultFile";
export { EntryConflictError } from "./entryConflictError";
export { EntryMissingError } from "./entryMissingError";
export { EntryNotFoundError } from "./entryNotFoundError";
export { HostEntry, type HostEntryArgs, type HostEntryState } from "./hostEntry";
export { HostsDocument } from "./hostsDocument";
export { HostsFileError } from "./hostsFileError";
export { HostsFileNotFoundError } from "./hostsFileNotFoundError";
export {
    type ImportedEntry,
    type ImportedEntryArgs,
    type ImportPlan,
    type PlanImportOptions,
    planImport,
    type RenderImportOptions,
    renderImportProgram,
    type SkippedLine,
} from "./importer";
export {
    findHostEntries,
    type HostEntryQuery,
    type HostsFileEntry,
    type ListHostEntriesOptions,
    listHostEntries,
} from "./lookup";
export type { HostEntryInputs, HostEntryOutputs } from "./schema";
