// The task API settings a provider process reads: stack config first, then the environment. Read in the
// program too (the token warning), so this module loads nothing else of the provider.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { readConfig } from "../shared/config";
import { DEFAULT_POLL_SCHEDULE, type PollSchedule } from "./client/pollSchedule";
import type { TaskApiClientOptions } from "./client/taskApiClient";
import { TaskApiConfigError } from "./errors/taskApiConfigError";

/** The config keys and environment variables the provider reads. */
export const TASK_CONFIG = {
    url: ["pulumi-lifecycle:taskApiUrl", "TASK_API_URL"],
    token: ["pulumi-lifecycle:taskApiToken", "TASK_API_TOKEN"],
    pollInitialMs: ["pulumi-lifecycle:taskPollInitialMs", "TASK_POLL_INITIAL_MS"],
    pollMaxMs: ["pulumi-lifecycle:taskPollMaxMs", "TASK_POLL_MAX_MS"],
    requestTimeoutMs: ["pulumi-lifecycle:taskRequestTimeoutMs", "TASK_REQUEST_TIMEOUT_MS"],
} as const;

/** What the provider needs to reach the task API. */
export interface TaskApiSettings {
    readonly url: string | undefined;
    readonly token: string | undefined;
    readonly schedule: PollSchedule;
    readonly requestTimeoutMs: number | undefined;
}

/** The settings from the provider's configure request (none before it) and the environment. */
export function settingsFrom(request: dynamic.ConfigureRequest | undefined, env: NodeJS.ProcessEnv): TaskApiSettings {
    const value = ([configKey, envKey]: readonly [string, string]) =>
        (request ? readConfig(request, configKey) : undefined) || env[envKey] || undefined;
    const number = (keys: readonly [string, string]) => {
        const parsed = Number(value(keys));
        return Number.isFinite(parsed) && parsed > 0 ? parsed : undefined;
    };
    const url = value(TASK_CONFIG.url);
    if (url !== undefined) validateUrl(url);
    return {
        url,
        token: value(TASK_CONFIG.token),
        schedule: {
            initialMs: number(TASK_CONFIG.pollInitialMs) ?? DEFAULT_POLL_SCHEDULE.initialMs,
            maxMs: number(TASK_CONFIG.pollMaxMs) ?? DEFAULT_POLL_SCHEDULE.maxMs,
        },
        requestTimeoutMs: number(TASK_CONFIG.requestTimeoutMs),
    };
}

/**
 * What a task API client takes from the settings: the URL and token, which must be set (else
 * TaskApiConfigError names the missing one), the poll schedule and the request timeout.
 */
export function clientOptionsFrom(
    settings: TaskApiSettings,
): Pick<TaskApiClientOptions, "baseUrl" | "token" | "schedule" | "requestTimeoutMs"> {
    const { url, token, schedule, requestTimeoutMs } = settings;
    if (!url) throw new TaskApiConfigError("url");
    if (!token) throw new TaskApiConfigError("token");
    return { baseUrl: url, token, schedule, ...(requestTimeoutMs ? { requestTimeoutMs } : {}) };
}

function validateUrl(url: string): void {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        throw new TaskApiConfigError(
            "url",
            `pulumi-lifecycle:taskApiUrl ${JSON.stringify(url)} is not a URL; write it as http://host:port`,
        );
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
        throw new TaskApiConfigError(
            "url",
            `pulumi-lifecycle:taskApiUrl must be an http:// or https:// URL, not ${parsed.protocol}`,
        );
    }
    if (parsed.username || parsed.password) {
        throw new TaskApiConfigError(
            "url",
            "pulumi-lifecycle:taskApiUrl must not carry credentials; set pulumi-lifecycle:taskApiToken instead",
        );
    }
}
