// Pure: a checked AsyncResource's inputs resolved once into what every operation works with (the
// dialect, where its collection and items are, how its natural key and its API id are read), as `ky`
// normalizes its options once instead of threading them through every call. Each parse here is also
// what check reports, so anything that resolves at operation time was already refused at check time.

import type { ApiInputs, AsyncResourceInputs, GenericDialectInputs } from "../asyncResourceSchema";
import { azureDialect } from "../protocol/dialects/azure";
import { azureArmDialect } from "../protocol/dialects/azureArm";
import { cloudControlDialect } from "../protocol/dialects/cloudControl";
import type { Dialect, Target } from "../protocol/dialects/dialect";
import { GENERIC_DEFAULTS, type GenericOptions, genericDialect } from "../protocol/dialects/generic";
import { googleDialect } from "../protocol/dialects/google";
import { greenlakeDialect } from "../protocol/dialects/greenlake";
import { HEADER_NAME, type Locator, parseLocator } from "../protocol/dialects/locator";
import {
    fillPathTemplate,
    ID_PLACEHOLDER,
    type PathTemplate,
    parsePathTemplate,
    placeholdersOf,
    segmentProblem,
} from "../protocol/pathTemplate";
import { isSelectorProblem, parseSelector, type Selector, select } from "../protocol/selector";
import { bodyAsRecorded } from "./asyncState";

/** A problem with one input, for a check failure: the property path and what is wrong. */
export interface SpecProblem {
    readonly property: string;
    readonly reason: string;
}

/** Everything an operation on one AsyncResource needs to know about where and how it lives. */
export interface AsyncSpec {
    readonly dialect: Dialect;
    /** The natural key (the Pulumi id): the value at `naturalKey` in the body. */
    readonly key: string;
    /** Where its collection and items are. */
    readonly target: Target;
    /** Whether the natural key is the API's id (items are read at `itemPath(key)`). */
    readonly keyIsId: boolean;
    /** The API id in one of its records, or undefined when the record has none. */
    readonly idOf: (record: unknown) => string | undefined;
    /** The natural key in one of its records. */
    readonly keyOf: (record: unknown) => unknown;
    /** The list lookup by natural key: its path and where its items are (keyIsId: none needed). */
    readonly listPath: string;
    readonly listItems: (answer: unknown) => unknown[] | undefined;
    /** The path or URL of the page after this list answer; undefined on the last. */
    readonly nextPage: (answer: unknown) => string | undefined;
    /** "widget \"w1\" at /widgets", for messages. */
    readonly label: string;
    /** The rules of a resource kind defined in code (tasks.Datastore); an AsyncResource has none. */
    readonly rules?: KindRules;
}

/** What a resource kind defined in code adds to its dialect's wire facts. */
export interface KindRules {
    /**
     * Lookups filter by the whole natural key and answer whole records: a record of another key in
     * their answer is a contract error, never a candidate, and the one found needs no second read.
     */
    readonly exactLookup: boolean;
    /** The API refuses a second resource with the natural key (409): a keyed create may be sent while one holds it. */
    readonly uniqueKey: boolean;
    /**
     * The natural key is the identity: a read finds the resource by it (so one made again under the
     * key outside Pulumi is the one read), not by the API id on record.
     */
    readonly readsByKey: boolean;
    /**
     * The API id in a URI an operation names as what it made (`/datastores/<id>`), or the problem
     * with it: a URI outside the collection, on another origin or with credentials is refused.
     */
    memberId(uri: string, baseUrl: string): { readonly id: string } | { readonly problem: string };
    /** What `adopt: true` does with what exists, for the message that refuses to take it over. */
    adoptNote(record: unknown): string;
    /** The error for a record not of the kind's shape, answered to `method path`; undefined when it is usable. */
    recordError(record: unknown, method: string, path: string): Error | undefined;
    /** Why a record shows the resource beyond repair (tainted: the next up replaces it), or undefined. */
    brokenReason(record: unknown): string | undefined;
    /** Whether a record shows the resource being deleted (see Dialect's beingDeleted). */
    beingDeleted(record: unknown): boolean;
    /** Whether a record shows the resource at rest, not in the middle of an operation (see Dialect's atRest). */
    atRest(record: unknown): boolean;
    /** Why an existing resource may not be adopted as the program's, or undefined: then it is taken as it is. */
    adoptRefusal(body: Record<string, unknown>, record: unknown, id: string): Error | undefined;
    /** The body of an update: what may change in place. */
    updateBody(body: Record<string, unknown>): unknown;
    /** The body as the record shows it (see asyncState's bodyAsRecorded). */
    bodyAsRecorded(body: Record<string, unknown>, record: unknown): Record<string, unknown>;
    /** What an existing resource is, for the message that refuses to take it over. */
    existsDetail(record: unknown): string;
}

/** Why a record shows the resource beyond what it should be (its kind's rule, else its dialect's), or undefined. */
export function brokenReason(spec: AsyncSpec, record: unknown): string | undefined {
    return spec.rules ? spec.rules.brokenReason(record) : spec.dialect.brokenReason?.(record);
}

/** Whether a record shows the resource being deleted (its kind's rule, else its dialect's). */
export function beingDeleted(spec: AsyncSpec, record: unknown): boolean {
    return spec.rules ? spec.rules.beingDeleted(record) : (spec.dialect.beingDeleted?.(record) ?? false);
}

/** Whether a record shows the resource at rest, not in the middle of an operation (its kind's rule, else its dialect's). */
export function atRest(spec: AsyncSpec, record: unknown): boolean {
    return spec.rules ? spec.rules.atRest(record) : (spec.dialect.atRest?.(record) ?? true);
}

/** The body as a record of the resource shows it: by its kind's rule, else value by value (bodyAsRecorded). */
export function recordedBody(spec: AsyncSpec, body: Record<string, unknown>, record: unknown): Record<string, unknown> {
    return spec.rules ? spec.rules.bodyAsRecorded(body, record) : bodyAsRecorded(body, record);
}

/** A Google resource's full name (AIP-122), whose last segment is its id. */
const GOOGLE_NAME = { source: "name", steps: ["name"] } as Selector;
/** Where a Google list answer has the token of its next page (AIP-158). */
const GOOGLE_NEXT_PAGE_TOKEN = { source: "nextPageToken", steps: ["nextPageToken"] } as Selector;

/** The last segment of a resource name, when it is one. */
function lastSegment(name: unknown): string | undefined {
    if (typeof name !== "string" || name.length === 0) return undefined;
    const id = name.slice(name.lastIndexOf("/") + 1);
    return id.length > 0 ? id : undefined;
}

/** A Google list's repeated field: the collection's plural name, its path's last segment (AIP-132). */
function pluralOf(collectionPath: string): Selector | undefined {
    const plural = collectionPath.split("?")[0]?.split("/").pop();
    return plural ? ({ source: plural, steps: [plural] } as Selector) : undefined;
}

/** Where a list answer has its next page, by default (Azure's and OData's `nextLink`). */
const DEFAULT_NEXT_FIELD = "nextLink";

/** Where a list answer keeps its items, by default, in the order tried. */
const DEFAULT_ITEM_FIELDS = ["items", "value", "data"];

/** The dialect the inputs name, with its options; or the problems with them. */
export function dialectOf(api: ApiInputs): Dialect | SpecProblem[] {
    switch (api.dialect) {
        case "generic": {
            const options = genericOptions(api.generic ?? {});
            return Array.isArray(options) ? options : genericDialect(options);
        }
        case "greenlake":
            return greenlakeDialect();
        case "azure-arm":
            return azureArmDialect();
        case "azure":
            return azureDialect();
        case "google":
            return googleDialect({
                versionPrefix: api.versionPrefix ?? "/v1",
                ...(api.idParameter ? { idParameter: api.idParameter } : {}),
            });
        case "aws-cloudcontrol":
            if (!api.typeName)
                return [
                    {
                        property: "api.typeName",
                        reason: "the aws-cloudcontrol dialect needs the resource type name, such as AWS::Logs::LogGroup",
                    },
                ];
            if (!api.region)
                return [
                    {
                        property: "api.region",
                        reason: "the aws-cloudcontrol dialect signs for a region: set it, such as us-east-1",
                    },
                ];
            return cloudControlDialect();
        default:
            return [
                {
                    property: "api.dialect",
                    reason: `${JSON.stringify(api.dialect)} is no dialect; use generic, greenlake, azure-arm, azure, google or aws-cloudcontrol`,
                },
            ];
    }
}

/** Whether the natural key must be the API's id: the dialect creates at the item's own path, or names it up front. */
export function keyMustBeId(api: ApiInputs): boolean {
    return (
        api.dialect === "azure-arm" ||
        api.dialect === "azure" ||
        (api.dialect === "google" && api.idParameter !== undefined) ||
        api.dialect === "aws-cloudcontrol" ||
        (api.dialect === "generic" && api.generic?.createMethod === "PUT")
    );
}

/** Resolves checked inputs; throws on what check refuses (a last guard: check reports these first). */
export function specOf(inputs: AsyncResourceInputs): AsyncSpec {
    const problems: SpecProblem[] = [];
    const spec = resolve(inputs, problems);
    if (!spec) {
        const first = problems[0] as SpecProblem;
        throw new Error(`${first.property}: ${first.reason}`);
    }
    return spec;
}

/** Resolves the inputs, adding every problem found to `problems`; undefined when there is one. */
export function resolve(inputs: AsyncResourceInputs, problems: SpecProblem[]): AsyncSpec | undefined {
    const before = problems.length;
    const dialect = dialectOf(inputs.api);
    if (Array.isArray(dialect)) problems.push(...dialect);
    const collection = template("collectionPath", inputs.collectionPath, problems);
    const item = template("itemPath", inputs.itemPath, problems);
    if (item && !placeholdersOf(item).includes(ID_PLACEHOLDER))
        problems.push({ property: "itemPath", reason: "it must name the item's id as {id}" });
    for (const [property, parsed] of [
        ["collectionPath", collection],
        ["itemPath", item],
    ] as const) {
        if (!parsed) continue;
        for (const name of placeholdersOf(parsed)) {
            if (name === ID_PLACEHOLDER) {
                if (property === "collectionPath")
                    problems.push({ property, reason: "{id} belongs in itemPath, not in the collection's path" });
                continue;
            }
            if (!(name in inputs.pathParameters))
                problems.push({
                    property,
                    reason: `{${name}} is an unknown placeholder: give it a value in pathParameters.${name}, or write {id}`,
                });
        }
    }
    const keyAt = selectorOf("naturalKey", inputs.naturalKey, problems);
    const key = inputs.key ?? (keyAt ? select(inputs.body, keyAt) : undefined);
    if (keyAt && inputs.key === undefined && (typeof key !== "string" || key.length === 0))
        problems.push({
            property: "body",
            reason: `the natural key ${inputs.naturalKey} is ${key === undefined ? "missing from the body" : `not a non-empty string (${JSON.stringify(key)})`}; put it in the body, or give it as key when the API takes it in the path`,
        });
    const mustBeId = keyMustBeId(inputs.api);
    if (mustBeId && inputs.key === undefined && typeof key === "string" && key.length > 0) {
        const problem = segmentProblem(key);
        if (problem)
            problems.push({
                property: "body",
                reason: `the natural key ${inputs.naturalKey} (${JSON.stringify(key)}) names the resource in its path: ${problem}`,
            });
    }
    if (keyAt && inputs.key !== undefined) {
        const carried = select(inputs.body, keyAt);
        if (carried !== undefined && carried !== inputs.key)
            problems.push({
                property: "key",
                reason: `${JSON.stringify(inputs.key)} is not the natural key the body carries at ${inputs.naturalKey} (${JSON.stringify(carried)}); give the same value, or only one of them`,
            });
    }
    if (mustBeId && inputs.idField !== undefined)
        problems.push({
            property: "idField",
            reason: `the ${inputs.api.dialect} dialect addresses the resource by its natural key; remove idField`,
        });
    // A Google resource the server names (no idParameter): its id is the last segment of its `name` (AIP-122).
    const serverNamed = inputs.api.dialect === "google" && !mustBeId;
    if (serverNamed && inputs.idField !== undefined)
        problems.push({
            property: "idField",
            reason: "a Google resource's id is the last segment of its name (AIP-122); remove idField, or set api.idParameter to name it yourself",
        });
    if (!mustBeId && !serverNamed && inputs.idField === undefined)
        problems.push({
            property: "idField",
            reason: "the API chooses the resource's id on create: say where its records carry it (such as id)",
        });
    const idAt = inputs.idField === undefined ? undefined : selectorOf("idField", inputs.idField, problems);
    const itemsAt =
        inputs.lookup?.items === undefined ? undefined : selectorOf("lookup.items", inputs.lookup.items, problems);
    const nextAt = selectorOf("lookup.next", inputs.lookup?.next ?? DEFAULT_NEXT_FIELD, problems);
    if (inputs.lookup?.query !== undefined && !/^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%{} ]*$/.test(inputs.lookup.query))
        problems.push({ property: "lookup.query", reason: "it holds characters a query cannot" });
    if (problems.length > before || !collection || !item || !keyAt || Array.isArray(dialect)) return undefined;

    const naturalKey = key as string;
    const parameters = inputs.pathParameters;
    const collectionPath = fillPathTemplate(collection, parameters);
    const target: Target = {
        collectionPath,
        itemPath: (id) => fillPathTemplate(item, { ...parameters, [ID_PLACEHOLDER]: id }),
        ...(mustBeId ? { createId: naturalKey } : {}),
        ...(inputs.api.typeName ? { typeName: inputs.api.typeName } : {}),
    };
    const query = inputs.lookup?.query?.replaceAll("{key}", encodeURIComponent(naturalKey)).replaceAll(" ", "%20");
    const listPath = query ? `${collectionPath}${collectionPath.includes("?") ? "&" : "?"}${query}` : collectionPath;
    return {
        dialect,
        key: naturalKey,
        target,
        keyIsId: mustBeId,
        idOf: (record) => {
            if (serverNamed) return lastSegment(select(record, GOOGLE_NAME));
            if (!idAt) return naturalKey;
            const id = select(record, idAt);
            return typeof id === "string" && id.length > 0 ? id : typeof id === "number" ? String(id) : undefined;
        },
        keyOf: (record) => select(record, keyAt),
        listPath,
        listItems: (answer) => {
            if (!serverNamed || itemsAt) return itemsOf(answer, itemsAt);
            // Google leaves an empty repeated field out (proto3 JSON): a list answer without it is empty.
            const items = itemsOf(answer, pluralOf(collectionPath));
            const isObject = typeof answer === "object" && answer !== null && !Array.isArray(answer);
            return (
                items ??
                (isObject && select(answer, pluralOf(collectionPath) as Selector) === undefined ? [] : undefined)
            );
        },
        nextPage: (answer) => {
            if (serverNamed && inputs.lookup?.next === undefined) {
                // AIP-158: the next page is the same list with the answer's nextPageToken as pageToken.
                const token = select(answer, GOOGLE_NEXT_PAGE_TOKEN);
                if (typeof token !== "string" || token.length === 0) return undefined;
                return `${listPath}${listPath.includes("?") ? "&" : "?"}pageToken=${encodeURIComponent(token)}`;
            }
            const next = nextAt ? select(answer, nextAt) : undefined;
            return typeof next === "string" && next.length > 0 ? next : undefined;
        },
        label: `${JSON.stringify(naturalKey)} at ${collectionPath}`,
    };
}

function itemsOf(answer: unknown, at: Selector | undefined): unknown[] | undefined {
    if (at) {
        const items = select(answer, at);
        return Array.isArray(items) ? items : undefined;
    }
    if (Array.isArray(answer)) return answer;
    for (const field of DEFAULT_ITEM_FIELDS) {
        const items = select(answer, { source: field, steps: [field] });
        if (Array.isArray(items)) return items;
    }
    return undefined;
}

function template(property: string, source: string, problems: SpecProblem[]): PathTemplate | undefined {
    const parsed = parsePathTemplate(source);
    if ("problem" in parsed) {
        problems.push({ property, reason: `${JSON.stringify(source)}: ${parsed.problem}` });
        return undefined;
    }
    return parsed;
}

function selectorOf(property: string, source: string, problems: SpecProblem[]): Selector | undefined {
    const parsed = parseSelector(source);
    if (isSelectorProblem(parsed)) {
        problems.push({ property, reason: `${JSON.stringify(source)} is no selector: ${parsed.problem}` });
        return undefined;
    }
    return parsed;
}

/** The generic dialect's options from the program's, over the defaults; or the problems with them. */
function genericOptions(given: GenericDialectInputs): GenericOptions | SpecProblem[] {
    const problems: SpecProblem[] = [];
    const locator = (name: "monitor" | "status" | "resource", allowCode: boolean): Locator | undefined => {
        const source = given[name];
        if (source === undefined) return GENERIC_DEFAULTS[name];
        const parsed = parseLocator(source, allowCode);
        if ("problem" in parsed) {
            problems.push({ property: `api.generic.${name}`, reason: parsed.problem });
            return undefined;
        }
        return parsed;
    };
    const words = (name: "success" | "pending" | "canceled"): readonly string[] => {
        const list = given[name];
        if (list === undefined) return GENERIC_DEFAULTS[name];
        if (!Array.isArray(list) || list.some((word) => typeof word !== "string" || word.length === 0)) {
            problems.push({ property: `api.generic.${name}`, reason: "it must be a list of non-empty words" });
            return [];
        }
        return list;
    };
    const header = given.idempotencyHeader ?? GENERIC_DEFAULTS.idempotencyHeader;
    if (!HEADER_NAME.test(header) || header.toLowerCase() === "authorization")
        problems.push({
            property: "api.generic.idempotencyHeader",
            reason: `${JSON.stringify(header)} is not a header we may set`,
        });
    const options: GenericOptions = {
        createMethod: given.createMethod ?? GENERIC_DEFAULTS.createMethod,
        updateMethod: given.updateMethod ?? GENERIC_DEFAULTS.updateMethod,
        monitor: locator("monitor", false) as Locator,
        status: locator("status", true) as Locator,
        resource: locator("resource", false) as Locator,
        success: words("success"),
        pending: words("pending"),
        canceled: words("canceled"),
        idempotencyHeader: header,
    };
    return problems.length > 0 ? problems : options;
}
