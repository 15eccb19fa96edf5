// Every error an operation on an async resource (an AsyncResource, a Datastore) ends with names its
// resource, and is one of the package's (LifecycleError). Errors of the layers below speak of requests
// and operations ("the task API answered POST /virtualization/v1beta1/datastores with 422"); the
// operation adds which resource it was about. The class stays, so a program can still tell a
// TaskApiError from a TaskApiContractError. The engine shows the message on the resource's row, so the
// SDK's echo of it under the Stack row, with stack frames, is dropped (shared/errors/engineEcho.ts).

import { shownOnItsRow } from "../../shared/errors/engineEcho";
import { LifecycleError } from "../../shared/errors/lifecycleError";
import { AsyncResourceOperationError } from "../errors/asyncResourceOperationError";
import { type AsyncSpec, brokenReason } from "./asyncSpec";

/**
 * The error an operation on the resource `label` ends with. `mention`: what a message that already
 * names the resource contains (its quoted name), so it is not named twice.
 */
export function namedFailure(
    error: unknown,
    label: string,
    mention: string,
    operation: AsyncResourceOperationError["operation"],
): Error {
    if (!(error instanceof LifecycleError))
        return shownOnItsRow(new AsyncResourceOperationError(label, operation, error));
    if (!error.message.includes(mention)) {
        // V8 writes the stack's first line when the stack is first read, with the message of that moment:
        // read it before the message changes, or the line would name the resource twice.
        const stack = error.stack;
        const unnamed = error.message;
        error.message = `${label}: ${unnamed}`;
        if (stack?.includes(unnamed)) error.stack = stack.replace(unnamed, error.message);
    }
    return shownOnItsRow(error);
}

/**
 * What the API was last seen to have of a resource recorded tainted: its record, or not seen (an operation
 * that failed may still have left one under the natural key, whatever it names).
 */
export type LastSeen = { readonly record: unknown } | "unseen";

/**
 * What the next `pulumi up` does with a resource recorded tainted, and what `untaint: true` does
 * instead, as a message says it. Tainted, the diff replaces it (delete, then create); with `untaint:
 * true` the update looks it up by natural key and keeps what it finds in working order, sends a PUT
 * again where that retries a failed provisioning (ARM), creates it when there is none, and leaves one
 * beyond repair (a datastore in ERROR) tainted.
 */
export function whatTheNextUpDoes(spec: AsyncSpec, seen: LastSeen): string {
    const replaces = "the next `pulumi up` replaces it (deletes it, then creates it again)";
    if (seen === "unseen") {
        return (
            `${replaces}; set \`untaint: true\` to keep what the API has instead: that \`up\` looks it up by its ` +
            "natural key and records it (or creates it, if there is none)"
        );
    }
    if (!brokenReason(spec, seen.record)) {
        return `${replaces}; set \`untaint: true\` to keep it instead: that \`up\` records it as the API has it`;
    }
    if (putRetriesProvisioning(spec)) {
        return `${replaces}; set \`untaint: true\` to keep it instead: that \`up\` sends its body again, which retries its provisioning`;
    }
    return `${replaces}; \`untaint: true\` cannot keep it: the API has it in a state it does not recover from`;
}

/** Whether sending the body again (a PUT to the resource's own URL) retries a failed provisioning (ARM). */
export function putRetriesProvisioning(spec: AsyncSpec): boolean {
    return spec.keyIsId && spec.dialect.update(spec.target, spec.key, {}, undefined).method === "PUT";
}
