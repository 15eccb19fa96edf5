// A computation run at most once, whose outcome (value or error) every later call gives again: what lets
// work be done ahead of the moment its result is asked for, without being done twice.

/** `compute`, run on the first call only: later calls return the same value, or throw the same error. */
export function remembered<T>(compute: () => T): () => T {
    let outcome: { value: T } | { error: unknown } | undefined;
    return () => {
        if (outcome === undefined) {
            try {
                outcome = { value: compute() };
            } catch (error) {
                outcome = { error };
            }
        }
        if ("error" in outcome) throw outcome.error;
        return outcome.value;
    };
}
