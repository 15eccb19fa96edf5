// Pure validation and normalization of AsyncResource inputs (the provider's `check`). Every input that
// reaches a request is checked here, and each failure names its field: a path template with an unknown
// placeholder or a `..`, a natural key missing from the body, an unknown dialect, a selector or locator
// that does not parse, a body that is not a JSON object, a path parameter that would leave its segment.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { describeInput } from "../../shared/text";
import { unexpectedInputs } from "../../shared/unexpectedInputs";
import { containsUnknown, isUnknown } from "../../shared/unknown";
import {
    type ApiInputs,
    ASYNC_RESOURCE_INPUT_KEYS,
    ASYNC_RESOURCE_STATE_KEYS,
    type AsyncResourceInputs,
    type GenericDialectInputs,
    type LookupInputs,
} from "../asyncResourceSchema";
import { DIALECT_NAMES, type DialectName } from "../protocol/dialects/dialect";
import { parsePathTemplate, segmentProblem } from "../protocol/pathTemplate";
import { type OperationTimeouts, TIMEOUT_KEYS } from "../timeoutsSchema";
import { resolve, type SpecProblem } from "./asyncSpec";
import { createToken, type Fail, flag, recordedCustomTimeouts, timeouts } from "./checkFields";

/** How deep a body may nest: deeper is no API's resource, and would only cost the process. */
const MAX_BODY_DEPTH = 32;
const CONFIG_KEY = /^[A-Za-z0-9_.-]+:[A-Za-z0-9_.:-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const GENERIC_KEYS = new Set<keyof GenericDialectInputs>([
    "createMethod",
    "updateMethod",
    "monitor",
    "status",
    "success",
    "pending",
    "canceled",
    "resource",
    "idempotencyHeader",
]);

/** The inputs a program sets (the resource class records `customTimeouts` from its options). */
const USER_INPUTS = ASYNC_RESOURCE_INPUT_KEYS.filter((key) => key !== "customTimeouts");

/** Validates and normalizes raw inputs. */
export function checkAsyncResource(news: Record<string, unknown>): {
    inputs: AsyncResourceInputs;
    failures: dynamic.CheckFailure[];
} {
    const failures: dynamic.CheckFailure[] = [];
    const fail: Fail = (property, reason) => failures.push({ property, reason });
    const inputs: AsyncResourceInputs = {
        api: api(news.api, fail),
        collectionPath: text("collectionPath", news.collectionPath, fail),
        itemPath: text("itemPath", news.itemPath, fail),
        pathParameters: parameters(news.pathParameters, fail),
        body: body(news.body, fail),
        naturalKey: text("naturalKey", news.naturalKey, fail),
        replaceOnChanges: names("replaceOnChanges", news.replaceOnChanges, fail),
        adopt: flag("adopt", news.adopt, fail),
        untaint: flag("untaint", news.untaint, fail),
    };
    if (news.idField !== undefined && news.idField !== null) inputs.idField = text("idField", news.idField, fail);
    if (news.key !== undefined && news.key !== null) {
        const problem = isUnknown(news.key) ? undefined : segmentProblem(news.key);
        if (problem) fail("key", `${describeInput(news.key)} cannot be a natural key: ${problem}`);
        else inputs.key = news.key as string;
    }
    const found = lookup(news.lookup, fail);
    if (found) inputs.lookup = found;
    const token = createToken(news.createToken, fail);
    if (token !== undefined) inputs.createToken = token;
    const limits = timeouts(news.timeouts, fail);
    if (limits !== undefined) inputs.timeouts = withUnknownDurations(news.timeouts, limits);
    const recorded = recordedCustomTimeouts(news.customTimeouts);
    if (recorded !== undefined) inputs.customTimeouts = recorded;
    // What depends on values not known until the update runs is checked once they are.
    if (failures.length === 0 && !hasUnknown(inputs)) {
        const problems: SpecProblem[] = [];
        resolve(inputs, problems);
        for (const problem of problems) fail(problem.property, problem.reason);
    } else if (failures.length === 0) {
        // A known template is wrong whatever the unknowns turn out to be: say so in the preview.
        for (const property of ["collectionPath", "itemPath"] as const) {
            const source = inputs[property];
            if (isUnknown(source)) continue;
            const parsed = parsePathTemplate(source);
            if ("problem" in parsed) fail(property, `${JSON.stringify(source)}: ${parsed.problem}`);
        }
    }
    failures.push(
        ...unexpectedInputs("AsyncResource", news, USER_INPUTS, [...ASYNC_RESOURCE_STATE_KEYS, "customTimeouts"]),
    );
    return { inputs, failures };
}

function api(value: unknown, fail: Fail): ApiInputs {
    if (isUnknown(value)) return value as unknown as ApiInputs;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        fail(
            "api",
            `must be an object such as { url: "https://api.example.com", dialect: "generic" }, not ${describeInput(value)}`,
        );
        return { url: "", dialect: "generic" };
    }
    const given = value as Record<string, unknown>;
    const result: ApiInputs = { url: url(given.url, fail), dialect: dialect(given.dialect, fail) };
    const optional = (name: OptionalApiKey) => {
        const field = given[name];
        if (field === undefined || field === null) return;
        if (isUnknown(field)) {
            result[name] = field as string;
            return;
        }
        const { pattern, what } = OPTIONAL_API_KEYS[name];
        if (typeof field !== "string" || !pattern.test(field))
            fail(`api.${name}`, `${describeInput(field)} is not ${what}`);
        else result[name] = field;
    };
    for (const name of Object.keys(OPTIONAL_API_KEYS) as OptionalApiKey[]) optional(name);
    if (isUnknown(given.generic)) result.generic = given.generic as unknown as GenericDialectInputs;
    else if (given.generic !== undefined && given.generic !== null) {
        if (typeof given.generic !== "object" || Array.isArray(given.generic)) {
            fail(
                "api.generic",
                `must be an object of the generic dialect's options, not ${describeInput(given.generic)}`,
            );
        } else {
            const options = given.generic as Record<string, unknown>;
            for (const key of Object.keys(options)) {
                if (!GENERIC_KEYS.has(key as keyof GenericDialectInputs))
                    fail(
                        `api.generic.${key}`,
                        `is no option of the generic dialect; use ${[...GENERIC_KEYS].join(", ")}`,
                    );
            }
            const method = (name: "createMethod" | "updateMethod", allowed: string[]) => {
                const given = options[name];
                if (given !== undefined && !allowed.includes(given as string))
                    fail(`api.generic.${name}`, `${describeInput(given)} is not one of ${allowed.join(", ")}`);
            };
            method("createMethod", ["POST", "PUT"]);
            method("updateMethod", ["PATCH", "PUT", "POST"]);
            result.generic = options as GenericDialectInputs;
        }
    }
    for (const key of Object.keys(given)) {
        if (!["url", "dialect", "generic", ...Object.keys(OPTIONAL_API_KEYS)].includes(key))
            fail(
                `api.${key}`,
                key === "token"
                    ? "the token never goes into inputs (it would be stored in state); name where it is with tokenConfig or tokenEnv"
                    : "is no setting of an API",
            );
    }
    return result;
}

/** The optional string settings of an API, each with what it must look like: the one list of them. */
const OPTIONAL_API_KEYS = {
    tokenConfig: { pattern: CONFIG_KEY, what: "a config key such as widgets:token" },
    tokenEnv: { pattern: ENV_NAME, what: "an environment variable name such as WIDGETS_TOKEN" },
    versionPrefix: { pattern: /^\/[A-Za-z0-9._~-]{1,40}$/, what: "a version prefix such as /v1" },
    idParameter: { pattern: /^[A-Za-z][A-Za-z0-9_]{0,63}$/, what: "a query parameter name such as widgetId" },
    typeName: {
        pattern: /^[A-Za-z0-9]{1,64}::[A-Za-z0-9]{1,64}::[A-Za-z0-9]{1,64}$/,
        what: "a type name such as AWS::Logs::LogGroup",
    },
    region: { pattern: /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/, what: "an AWS region such as us-east-1" },
} as const;

type OptionalApiKey = keyof typeof OPTIONAL_API_KEYS;

function url(value: unknown, fail: Fail): string {
    if (isUnknown(value)) return value as string;
    if (typeof value !== "string") {
        fail("api.url", `must be the API's URL such as "https://api.example.com", not ${describeInput(value)}`);
        return "";
    }
    let parsed: URL;
    try {
        parsed = new URL(value);
    } catch {
        // It may still carry credentials: never repeat them.
        const shown = value.replace(/^([^/]*\/\/)[^/@]*@/, "$1***@");
        fail("api.url", `${describeInput(shown)} is not a URL; write it as https://host[:port][/base]`);
        return value;
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
        fail("api.url", `must be an http:// or https:// URL, not ${parsed.protocol}`);
    else if (parsed.username || parsed.password)
        fail("api.url", "must not carry credentials; name where the token is with api.tokenConfig or api.tokenEnv");
    else if (parsed.search || parsed.hash) fail("api.url", "must not carry a query or a fragment");
    // Paths the API names (a monitor, a Location) are resolved against the origin, so a base path here
    // would hold for some requests and not others: it belongs in the path templates.
    else if (parsed.pathname !== "/")
        fail(
            "api.url",
            `must be the API's origin only (${parsed.origin}); put ${JSON.stringify(parsed.pathname)} at the start of collectionPath and itemPath`,
        );
    return value;
}

function dialect(value: unknown, fail: Fail): DialectName {
    if (isUnknown(value)) return value as DialectName;
    if (typeof value !== "string" || !(DIALECT_NAMES as readonly string[]).includes(value)) {
        fail("api.dialect", `${describeInput(value)} is no dialect; use ${DIALECT_NAMES.join(", ")}`);
        return "generic";
    }
    return value as DialectName;
}

function text(property: string, value: unknown, fail: Fail): string {
    if (isUnknown(value)) return value as string;
    if (typeof value !== "string" || value.length === 0) {
        fail(property, `must be a non-empty string, not ${describeInput(value)}`);
        return "";
    }
    return value;
}

function parameters(value: unknown, fail: Fail): Record<string, string> {
    if (value === undefined || value === null) return {};
    if (isUnknown(value)) return value as unknown as Record<string, string>;
    if (typeof value !== "object" || Array.isArray(value)) {
        fail("pathParameters", `must be an object of strings, not ${describeInput(value)}`);
        return {};
    }
    const result: Record<string, string> = {};
    for (const [name, parameter] of Object.entries(value as Record<string, unknown>)) {
        const problem = isUnknown(parameter) ? undefined : segmentProblem(parameter);
        if (problem) fail(`pathParameters.${name}`, `${describeInput(parameter)} cannot be a path segment: ${problem}`);
        else result[name] = parameter as string;
    }
    return result;
}

function body(value: unknown, fail: Fail): Record<string, unknown> {
    let parsed = value;
    if (typeof value === "string" && !isUnknown(value)) {
        try {
            parsed = JSON.parse(value) as unknown;
        } catch (error) {
            fail("body", `is not JSON: ${(error as Error).message}`);
            return {};
        }
    }
    if (isUnknown(parsed)) return parsed as unknown as Record<string, unknown>;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        fail("body", `must be a JSON object (the resource as the API takes it), not ${describeInput(parsed)}`);
        return {};
    }
    const problem = jsonProblem(parsed, 0);
    if (problem) fail("body", problem);
    return parsed as Record<string, unknown>;
}

/** Why a value cannot be sent as JSON as it is, or undefined. */
function jsonProblem(value: unknown, depth: number): string | undefined {
    if (depth > MAX_BODY_DEPTH) return `it nests deeper than ${MAX_BODY_DEPTH} levels`;
    if (typeof value === "number" && !Number.isFinite(value)) return `it holds ${value}, which JSON cannot carry`;
    if (typeof value !== "object" || value === null) return undefined;
    for (const inner of Object.values(value)) {
        const problem = jsonProblem(inner, depth + 1);
        if (problem) return problem;
    }
    return undefined;
}

function names(property: string, value: unknown, fail: Fail): string[] {
    if (value === undefined || value === null) return [];
    if (isUnknown(value)) return value as unknown as string[];
    if (!Array.isArray(value) || value.some((name) => typeof name !== "string" || name.length === 0)) {
        fail(property, `must be a list of body property names, not ${describeInput(value)}`);
        return [];
    }
    return value as string[];
}

function lookup(value: unknown, fail: Fail): LookupInputs | undefined {
    if (value === undefined || value === null) return undefined;
    if (isUnknown(value)) return value as unknown as LookupInputs;
    if (typeof value !== "object" || Array.isArray(value)) {
        fail(
            "lookup",
            `must be an object such as { query: "name={key}", items: "items" }, not ${describeInput(value)}`,
        );
        return undefined;
    }
    const given = value as Record<string, unknown>;
    const result: LookupInputs = {};
    for (const key of ["query", "items", "next"] as const) {
        if (given[key] === undefined) continue;
        result[key] = text(`lookup.${key}`, given[key], fail);
    }
    return result;
}

/** The checked timeouts with the durations not known yet put back: the diff must count them as changes. */
function withUnknownDurations(given: unknown, checked: OperationTimeouts): OperationTimeouts {
    if (isUnknown(checked) || typeof given !== "object" || given === null) return checked;
    const unknown = Object.entries(given).filter(
        ([key, value]) => isUnknown(value) && (TIMEOUT_KEYS as readonly string[]).includes(key),
    );
    return { ...checked, ...Object.fromEntries(unknown) };
}

function hasUnknown(value: unknown): boolean {
    if (containsUnknown(value)) return true;
    if (typeof value !== "object" || value === null) return false;
    return Object.values(value).some(hasUnknown);
}
