// The `tasks` namespace of the package.

export { CrossOriginError } from "./core/crossOriginError";
export { MalformedResponseError } from "./core/malformedResponseError";
export { TaskApiError } from "./core/taskApiError";
export { TaskApiUnreachableError } from "./core/taskApiUnreachableError";
export { TaskDeadlineError } from "./core/taskDeadlineError";
export { TaskFailedError } from "./core/taskFailedError";
export { TaskInterruptedError } from "./core/taskInterruptedError";
export { TaskPollingError } from "./core/taskPollingError";
export { CreateTokenSpentError } from "./createTokenSpentError";
export { Datastore, type DatastoreArgs } from "./datastore";
export { DatastoreAdoptMismatchError } from "./datastoreAdoptMismatchError";
export { DatastoreExistsError } from "./datastoreExistsError";
export { DatastoreIdError } from "./datastoreIdError";
export { DatastoreMissingError } from "./datastoreMissingError";
export type { DatastoreInputs, DatastoreOutputs, DatastoreTimeouts } from "./datastoreSchema";
export { TaskApiConfigError } from "./taskApiConfigError";
export { TaskApiContractError } from "./taskApiContractError";
export type { DatastoreState, DatastoreType } from "./wire";
