// One way to compare JSON values: equal values give equal text whatever the order of their keys.

/** JSON with object keys sorted at every level (undefined members left out, as JSON does). */
export function canonicalJson(value: unknown): string {
    return (
        JSON.stringify(value, (_key, item: unknown) =>
            item && typeof item === "object" && !Array.isArray(item)
                ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
                : item,
        ) ?? "undefined"
    );
}
