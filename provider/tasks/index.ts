// The `tasks` namespace of the package.

export { CrossOriginError } from "./core/crossOriginError";
export { MalformedResponseError } from "./core/malformedResponseError";
export { TaskApiError } from "./core/taskApiError";
export { TaskApiUnreachableError } from "./core/taskApiUnreachableError";
export { TaskDeadlineError } from "./core/taskDeadlineError";
export { TaskFailedError } from "./core/taskFailedError";
export { TaskInterruptedError } from "./core/taskInterruptedError";
export { TaskPollingError } from "./core/taskPollingError";
export { Datastore, type DatastoreArgs } from "./datastore";
export { DatastoreExistsError } from "./datastoreExistsError";
export type { DatastoreInputs, DatastoreOutputs, DatastoreTimeouts } from "./datastoreSchema";
export { startTaskApiServer, type TaskApiServer, type TaskApiServerOptions } from "./server/taskApiServer";
export { TaskApiConfigError } from "./taskApiConfigError";
