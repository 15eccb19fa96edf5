// When an operation of an AsyncResource must end, and the setting that says so. Pure.

import { parseDuration } from "../../shared/duration";
import type { AsyncResourceInputs } from "../asyncResourceSchema";
import type { WriteKind } from "../protocol/dialects/dialect";

/** When an operation must be over, and the setting that says so (for messages). */
export interface Deadline {
    readonly at: number;
    readonly setting: string;
}

/** How long create, update and delete may take by default: long-running operations take minutes. */
export const DEFAULT_TIMEOUT_MS = 20 * 60_000;
/** How long a read may take by default. */
export const DEFAULT_READ_TIMEOUT_MS = 5 * 60_000;

/**
 * When `operation`, starting `now`, must end: the resource's `customTimeouts` entry as the engine sent it
 * with this call (`heardMs`); else as its program last recorded it (the engine's call is not heard when
 * it is the first of a fresh provider process, such as a destroy's first delete); else its `timeouts`
 * input; else the default. The engine sends no timeout with a read, and customTimeouts has no read entry.
 */
export function deadlineOf(
    operation: WriteKind | "read",
    settings: Pick<AsyncResourceInputs, "timeouts" | "customTimeouts">,
    now: number,
    heardMs: number | undefined,
): Deadline {
    if (operation !== "read") {
        const recorded = settings.customTimeouts?.[operation];
        const limit = heardMs ?? (recorded === undefined ? undefined : parseDuration(recorded));
        if (typeof limit === "number") return { at: now + limit, setting: `customTimeouts.${operation}` };
    }
    const byDefault = operation === "read" ? DEFAULT_READ_TIMEOUT_MS : DEFAULT_TIMEOUT_MS;
    const timeout = settings.timeouts?.[operation];
    const parsed = timeout === undefined ? byDefault : parseDuration(timeout);
    return { at: now + (typeof parsed === "number" ? parsed : byDefault), setting: `timeouts.${operation}` };
}
