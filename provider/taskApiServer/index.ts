// `pulumi-lifecycle/task-api-server`: the task API server bundled with the package, for local
// development and tests of programs that use `tasks.Datastore` (also run by the `task-api` command).
// Its own entry point, so that `import { tasks } from "pulumi-lifecycle"` and the provider process
// never load it.

export * from "./control";
export { DataFileError } from "./dataFileError";
export { DataFileUnwritableError } from "./dataFileUnwritableError";
export { startTaskApiServer, type TaskApiServer, type TaskApiServerOptions } from "./taskApiServer";
