// The `filter` query parameter of the datastore list: a conjunction of equalities, which is all a client
// needs to find a datastore by its natural key. The grammar and how a client writes a filter; reading and
// applying one is the server's (taskApiServer/filterParser.ts), so a provider process never loads it.
//
//   filter := clause ( " and " clause )*
//   clause := field " eq " value
//   field  := "hciClusterUuid" | "name" | "clusterInfo/id" | "id"
//   value  := "'" ( any character but "'" | "''" )* "'"  |  a run of characters without space or "'"
//
// Keywords are case-insensitive, field names are not; runs of whitespace separate tokens, and whitespace
// around the whole filter is ignored.

/** A field a filter may compare. */
export type FilterField = "hciClusterUuid" | "name" | "clusterInfo/id" | "id";

/** Every FilterField, in the order error messages list them. */
export const FILTER_FIELDS: readonly FilterField[] = ["hciClusterUuid", "name", "clusterInfo/id", "id"];

/** `field eq value`. */
export interface FilterClause {
    readonly field: FilterField;
    readonly value: string;
}

/** Clauses that must all hold. */
export type Filter = readonly FilterClause[];

/** A value as the grammar quotes it: `ds'1` becomes `'ds''1'`. */
export function quoteValue(value: string): string {
    return `'${value.replaceAll("'", "''")}'`;
}

/** The filter text for `clauses`, every value quoted: what a client puts in `?filter=`. */
export function formatFilter(clauses: Filter): string {
    return clauses.map(({ field, value }) => `${field} eq ${quoteValue(value)}`).join(" and ");
}
