// The one shape of operation timeouts for every tasks resource: the `timeouts` input (resolved and as a
// program gives it) and the recorded `customTimeouts` resource option. Pure types and data.

import type * as pulumi from "@pulumi/pulumi";

/**
 * The operations that take a `timeouts` entry. create, update and delete default to 20 minutes (they
 * wait for tasks); read (refresh, `.get`, import) defaults to 5 minutes: one lookup, retried through
 * throttling and transient failures, must still end.
 */
export const TIMEOUT_KEYS = ["create", "read", "update", "delete"] as const;

/** An operation that takes a `timeouts` entry. */
export type TimeoutOperation = (typeof TIMEOUT_KEYS)[number];

/** Longest wait per operation, as durations ("30m", "1h30m"), as `check` resolves them. */
export type OperationTimeouts = { [operation in TimeoutOperation]?: string };

/**
 * The `timeouts` argument of a tasks resource: 20m each for create, update and delete (they wait for
 * tasks), 5m for read (refresh, `.get`, import), as durations ("30m", "1h30m").
 */
export type OperationTimeoutsArgs = pulumi.Input<{ [operation in TimeoutOperation]?: pulumi.Input<string> }>;

/**
 * The resource's `customTimeouts` option as its program last gave it (the resource class records it):
 * what bounds an operation whose own call from the engine was not heard, such as the first delete of a
 * `pulumi destroy` (see io/asyncLifecycle.ts, deadline).
 */
export interface CustomTimeouts {
    create?: string;
    update?: string;
    delete?: string;
}
