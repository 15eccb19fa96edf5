// pulumi-lifecycle: Pulumi dynamic providers whose lifecycles are exactly right.

export * as hosts from "./hosts";
export { LifecycleError } from "./shared/errors/lifecycleError";
export * as tasks from "./tasks";
