// The one base of the errors this package reports to users.

/**
 * An error the package reports to a user. Its message names the resource (or the file, the setting, the
 * object), says what went wrong and what to do next; its fields carry the same facts for programs.
 * Every error class the package exports extends it, so `error instanceof LifecycleError` tells a
 * failure the package explained from one it did not expect.
 */
export abstract class LifecycleError extends Error {}
