// Locators: where in an answer a value is, in the syntax of magodo/terraform-provider-restful
// (`code`, `header.Location`, `body.status.state`), so users of that provider read ours at once.

import { isSelectorProblem, parseSelector, type Selector, select } from "../selector";
import type { HttpAnswer } from "./dialect";

/** A parsed locator. */
export type Locator =
    | { readonly from: "code" }
    | { readonly from: "header"; readonly name: string }
    | { readonly from: "body"; readonly at: Selector };

/** An HTTP header name (RFC 9110 token), as long as any API needs. */
export const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;

/** Parses `code`, `header.<Name>` or `body.<selector>`; a problem says what was expected. */
export function parseLocator(source: unknown, allowCode: boolean): Locator | { problem: string } {
    if (typeof source !== "string") return { problem: "it is not a string" };
    if (source === "code") {
        return allowCode ? { from: "code" } : { problem: '"code" locates a status, not a URL or an id' };
    }
    if (source.startsWith("header.")) {
        const name = source.slice("header.".length);
        return HEADER_NAME.test(name)
            ? { from: "header", name }
            : { problem: `${JSON.stringify(name)} is not a header name` };
    }
    if (source.startsWith("body.")) {
        const at = parseSelector(source.slice("body.".length));
        return isSelectorProblem(at) ? { problem: `its selector does not parse: ${at.problem}` } : { from: "body", at };
    }
    const forms = allowCode ? '"code", "header.<Name>" or "body.<path>"' : '"header.<Name>" or "body.<path>"';
    return { problem: `it must be ${forms}, not ${JSON.stringify(source.slice(0, 40))}` };
}

/** The located value as a string (a status code as digits), or undefined when absent or not a scalar. */
export function locate(answer: HttpAnswer, locator: Locator): string | undefined {
    switch (locator.from) {
        case "code":
            return String(answer.status);
        case "header":
            return answer.header(locator.name);
        case "body": {
            const value = select(answer.body, locator.at);
            return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
                ? String(value)
                : undefined;
        }
    }
}
