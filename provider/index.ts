// pulumi-lifecycle: Pulumi dynamic providers whose lifecycles are exactly right.

export * as hosts from "./hosts";
export { LifecycleError } from "./shared/errors/lifecycleError";
export { LockTimeoutError } from "./shared/errors/lockTimeoutError";
export { NewerStateError } from "./shared/errors/newerStateError";
export { UnknownResourceKindError } from "./shared/errors/unknownResourceKindError";
export * as tasks from "./tasks";
