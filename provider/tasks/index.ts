// The `tasks` namespace of the package.

export { type AsyncApiArgs, AsyncResource, type AsyncResourceArgs } from "./asyncResource";
export type {
    AsyncResourceInputs,
    AsyncResourceOutputs,
    GenericDialectInputs,
    PendingOperation,
} from "./asyncResourceSchema";
export { Datastore, type DatastoreArgs, type DatastoreLookupState } from "./datastore";
export type { DatastoreInputs, DatastoreOutputs, DatastoreTimeouts } from "./datastoreSchema";
export { AsyncApiTokenError } from "./errors/asyncApiTokenError";
export { AsyncResourceDefinitionError } from "./errors/asyncResourceDefinitionError";
export { AsyncResourceOperationError } from "./errors/asyncResourceOperationError";
export { CreateOutcomeUnknownError } from "./errors/createOutcomeUnknownError";
export { CreateTokenSpentError } from "./errors/createTokenSpentError";
export { CrossOriginError } from "./errors/crossOriginError";
export { DatastoreAdoptMismatchError } from "./errors/datastoreAdoptMismatchError";
export { DatastoreDeleteUnconfirmedError } from "./errors/datastoreDeleteUnconfirmedError";
export { DatastoreExistsError } from "./errors/datastoreExistsError";
export { DatastoreIdError } from "./errors/datastoreIdError";
export { DatastoreMissingError } from "./errors/datastoreMissingError";
export { DatastoreOperationError } from "./errors/datastoreOperationError";
export { DeleteUnconfirmedError } from "./errors/deleteUnconfirmedError";
export { MalformedResponseError } from "./errors/malformedResponseError";
export { OperationFailedError } from "./errors/operationFailedError";
export { OperationWaitError } from "./errors/operationWaitError";
export { ResourceExistsError } from "./errors/resourceExistsError";
export { ResourceMissingError } from "./errors/resourceMissingError";
export { TaskApiConfigError } from "./errors/taskApiConfigError";
export { TaskApiContractError } from "./errors/taskApiContractError";
export { TaskApiError } from "./errors/taskApiError";
export { TaskApiUnreachableError } from "./errors/taskApiUnreachableError";
export { TaskDeadlineError } from "./errors/taskDeadlineError";
export { TaskFailedError } from "./errors/taskFailedError";
export { TaskInterruptedError } from "./errors/taskInterruptedError";
export { TaskPollingError } from "./errors/taskPollingError";
export type { DatastoreState, DatastoreType } from "./protocol/wire";
