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
/** @deprecated Use AsyncResourceOperationError. */
export {
    AsyncResourceOperationError,
    AsyncResourceOperationError as DatastoreOperationError,
} from "./errors/asyncResourceOperationError";
export { CreateOutcomeUnknownError } from "./errors/createOutcomeUnknownError";
export { CreateTokenSpentError } from "./errors/createTokenSpentError";
export { CrossOriginError } from "./errors/crossOriginError";
export { DatastoreAdoptMismatchError } from "./errors/datastoreAdoptMismatchError";
export { DatastoreIdError } from "./errors/datastoreIdError";
/** @deprecated Use DeleteUnconfirmedError. */
export {
    DeleteUnconfirmedError,
    DeleteUnconfirmedError as DatastoreDeleteUnconfirmedError,
} from "./errors/deleteUnconfirmedError";
export { DeletionUnderWayError } from "./errors/deletionUnderWayError";
export { MalformedResponseError } from "./errors/malformedResponseError";
export { OperationFailedError } from "./errors/operationFailedError";
export { OperationWaitError } from "./errors/operationWaitError";
// The Datastore's own names for the engine's errors, from before it ran on the engine (kept so programs
// that catch them keep working; the engine's names are the ones to use).
/** @deprecated Use ResourceExistsError: the Datastore is a resource of the async engine. */
export { ResourceExistsError, ResourceExistsError as DatastoreExistsError } from "./errors/resourceExistsError";
/** @deprecated Use ResourceMissingError. */
export { ResourceMissingError, ResourceMissingError as DatastoreMissingError } from "./errors/resourceMissingError";
export { TaskApiConfigError } from "./errors/taskApiConfigError";
export { TaskApiContractError } from "./errors/taskApiContractError";
export { TaskApiError } from "./errors/taskApiError";
export { TaskApiUnreachableError } from "./errors/taskApiUnreachableError";
export type { DatastoreState, DatastoreType } from "./protocol/wire";
export type { CustomTimeouts, OperationTimeouts, OperationTimeoutsArgs } from "./timeoutsSchema";
