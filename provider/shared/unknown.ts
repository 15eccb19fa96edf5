// During preview the engine sends values it does not know yet as this sentinel string
// (`runtime.unknownValue` in @pulumi/pulumi). Validation skips them; diff counts them as changes.

/** The string the engine sends for a value that is not known until the update runs. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** True when `value` is the engine's unknown sentinel. */
export function isUnknown(value: unknown): boolean {
    return value === UNKNOWN;
}

/** True when `value` is unknown or is an array holding an unknown element. */
export function containsUnknown(value: unknown): boolean {
    return isUnknown(value) || (Array.isArray(value) && value.some(isUnknown));
}
