// The `tasks` namespace of the package.

export { Datastore, type DatastoreArgs, type DatastoreLookupState } from "./datastore";
export type { DatastoreInputs, DatastoreOutputs, DatastoreTimeouts } from "./datastoreSchema";
export { CreateOutcomeUnknownError } from "./errors/createOutcomeUnknownError";
export { CreateTokenSpentError } from "./errors/createTokenSpentError";
export { CrossOriginError } from "./errors/crossOriginError";
export { DatastoreAdoptMismatchError } from "./errors/datastoreAdoptMismatchError";
export { DatastoreDeleteUnconfirmedError } from "./errors/datastoreDeleteUnconfirmedError";
export { DatastoreExistsError } from "./errors/datastoreExistsError";
export { DatastoreIdError } from "./errors/datastoreIdError";
export { DatastoreMissingError } from "./errors/datastoreMissingError";
export { DatastoreOperationError } from "./errors/datastoreOperationError";
export { MalformedResponseError } from "./errors/malformedResponseError";
export { TaskApiConfigError } from "./errors/taskApiConfigError";
export { TaskApiContractError } from "./errors/taskApiContractError";
export { TaskApiError } from "./errors/taskApiError";
export { TaskApiUnreachableError } from "./errors/taskApiUnreachableError";
export { TaskDeadlineError } from "./errors/taskDeadlineError";
export { TaskFailedError } from "./errors/taskFailedError";
export { TaskInterruptedError } from "./errors/taskInterruptedError";
export { TaskPollingError } from "./errors/taskPollingError";
export type { DatastoreState, DatastoreType } from "./protocol/wire";
