// `pulumi-lifecycle task-api`: runs the GreenLake-style task API server in the foreground, for demos and
// for testing programs that use tasks.Datastore. Only arguments, messages and signals live here; the
// server is taskApiServer/taskApiServer.ts.

import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { codeOf } from "../shared/files/errno";
import { messageOf, quote } from "../shared/text";
import type { RequestLogEntry } from "../taskApiServer/control";
import { DataFileError } from "../taskApiServer/dataFileError";
import { DataFileUnwritableError } from "../taskApiServer/dataFileUnwritableError";
import { startTaskApiServer, type TaskApiServer, type TaskApiServerOptions } from "../taskApiServer/taskApiServer";
import { DATASTORES_PATH } from "../tasks/protocol/wire";
import { CliError } from "./cliError";
import type { CliIo, Command } from "./command";

const USAGE = `Usage: pulumi-lifecycle task-api [options]

Runs an HTTP server that imitates HPE GreenLake's datastore API: creating, resizing and deleting a
datastore answer 202 Accepted with the Location of an async operation to poll. Every request needs the
header "Authorization: Bearer <token>". The data is kept in a JSON file, written before each answer.
Stop it with Ctrl-C (SIGINT) or SIGTERM.

Options:
  -p, --port PORT            TCP port (default 8080; 0 picks a free one)
      --host HOST            address to listen on (default 127.0.0.1)
  -d, --data FILE            the data file (default ./task-api-data.json; created when missing)
  -t, --token TOKEN          the bearer token (default: $TASK_API_TOKEN, else a random one, printed)
      --task-duration TIME   how long a task takes: 2s (default), 500ms, 1m; a bare number is seconds
      --task-polls N         tasks end on their N-th poll instead of after --task-duration
      --poll-interval SECS   suggestedPollingIntervalSeconds of every task (default: none)
      --rate-limit N/s       at most N requests a second (also N/min); over it, 429 with Retry-After
      --latency MS           milliseconds added before every answer (also 1s)
      --failure-rate P       probability in [0, 1] that a task fails (default 0)
      --seed N               seed for the failures of --failure-rate, to repeat a run
      --test-api             answer the test control API under /_test/ (fault injection, clock,
                             request log; off by default: a demo server first)
  -q, --quiet                do not print a line per request
  -h, --help                 print this help

Test control API (with --test-api; same token): POST /_test/faults {"match":{"method":"POST"},"fault":{"status":503}},
DELETE /_test/faults, GET /_test/requests, POST /_test/clock {"advanceMs":60000}, GET /_test/stats.
`;

const DEFAULT_PORT = 8080;
const DEFAULT_DATA_FILE = "task-api-data.json";

/** Where the token came from, which decides how the startup message shows it. */
type TokenSource = "option" | "environment" | "random";

/** The command line, checked: server options plus what only the command needs. */
export interface TaskApiArguments {
    readonly help: boolean;
    readonly quiet: boolean;
    readonly tokenSource: TokenSource;
    readonly server: TaskApiServerOptions & { readonly token: string; readonly dataFile: string };
}

/** The `task-api` subcommand. */
export const taskApiCommand: Command = {
    path: ["task-api"],
    summary: "run a GreenLake-style async task API server for testing tasks.Datastore",
    run: runTaskApi,
};

async function runTaskApi(args: readonly string[], io: CliIo): Promise<number> {
    const parsed = parseTaskApiArguments(args, io.env);
    if (parsed.help) {
        io.stdout(USAGE);
        return 0;
    }
    const server = await start(parsed, io);
    io.stderr(banner(server, parsed));
    const signal = await new Promise<NodeJS.Signals>((resolveSignal) => {
        const stop = (received: NodeJS.Signals) => {
            process.off("SIGINT", stop);
            process.off("SIGTERM", stop);
            resolveSignal(received);
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
    });
    io.stderr(`${signal}: stopping the task API\n`);
    await server.close();
    io.stderr("task API stopped; the data file is up to date\n");
    return 0;
}

async function start(parsed: TaskApiArguments, io: CliIo): Promise<TaskApiServer> {
    const options: TaskApiServerOptions = {
        ...parsed.server,
        ...(parsed.quiet ? {} : { onRequest: (entry: RequestLogEntry) => io.stderr(requestLine(entry)) }),
        onError: (error: unknown) => io.stderr(`task API error: ${messageOf(error)}\n`),
    };
    try {
        return await startTaskApiServer(options);
    } catch (error) {
        if (error instanceof DataFileError || error instanceof DataFileUnwritableError) {
            throw new CliError(error.message, 1);
        }
        const code = codeOf(error);
        const port = parsed.server.port ?? DEFAULT_PORT;
        if (code === "EADDRINUSE") {
            throw new CliError(`port ${port} is in use; pass another --port (0 picks a free one).`, 1);
        }
        if (
            code === "EACCES" &&
            "syscall" in (error as object) &&
            (error as { syscall?: string }).syscall === "listen"
        ) {
            throw new CliError(`may not listen on port ${port}; pass a port above 1023 with --port.`, 1);
        }
        if (code === "EADDRNOTAVAIL") throw new CliError(`cannot listen on ${parsed.server.host}: no such address.`, 1);
        const message = messageOf(error);
        throw new CliError(`cannot start the task API with data file ${parsed.server.dataFile}: ${message}`, 1);
    }
}

function banner(server: TaskApiServer, parsed: TaskApiArguments): string {
    const shownToken =
        parsed.tokenSource === "random"
            ? `${server.token} (random: pass --token or set TASK_API_TOKEN to choose one)`
            : parsed.tokenSource === "environment"
              ? "$TASK_API_TOKEN"
              : "<the --token value>";
    const curlToken = parsed.tokenSource === "environment" ? "$TASK_API_TOKEN" : "$TOKEN";
    const { taskCompleteAfterPolls, taskDurationMs, testApi } = parsed.server;
    const tasks =
        taskCompleteAfterPolls !== undefined
            ? `tasks end on their poll number ${taskCompleteAfterPolls}`
            : `tasks take ${formatMs(taskDurationMs ?? 2000)}`;
    const lines = [
        `task API listening on ${server.url}`,
        `authenticate with the header: Authorization: Bearer ${shownToken}`,
        `  e.g. curl -H "Authorization: Bearer ${curlToken}" ${server.url}${DATASTORES_PATH}`,
        `data file: ${server.dataFile ?? parsed.server.dataFile}; ${tasks}`,
        !testApi
            ? "test control API off (--test-api turns it on)"
            : `test control API: ${server.url}/_test/faults, /_test/requests, /_test/clock, /_test/stats`,
        "stop with Ctrl-C",
    ];
    return `${lines.join("\n")}\n`;
}

function requestLine(entry: RequestLogEntry): string {
    const query = entry.query ? `?${entry.query}` : "";
    const status = entry.status === null ? "no answer" : String(entry.status);
    const fault = entry.fault ? ` (fault ${JSON.stringify(entry.fault)})` : "";
    return `${entry.at} ${entry.method} ${entry.path}${query} -> ${status}${fault}\n`;
}

/** Checks the command line; throws CliError (exit code 2) naming the option and the problem. */
export function parseTaskApiArguments(args: readonly string[], env: NodeJS.ProcessEnv): TaskApiArguments {
    let values: Record<string, string | boolean | undefined>;
    try {
        ({ values } = parseArgs({
            args: [...args],
            options: {
                port: { type: "string", short: "p" },
                host: { type: "string" },
                data: { type: "string", short: "d" },
                token: { type: "string", short: "t" },
                "task-duration": { type: "string" },
                "task-polls": { type: "string" },
                "poll-interval": { type: "string" },
                "rate-limit": { type: "string" },
                latency: { type: "string" },
                "failure-rate": { type: "string" },
                seed: { type: "string" },
                "test-api": { type: "boolean" },
                quiet: { type: "boolean", short: "q" },
                help: { type: "boolean", short: "h" },
            },
            strict: true,
            allowPositionals: false,
        }));
    } catch (error) {
        const message = messageOf(error);
        throw usageError(message.replace(/\.?$/, "."));
    }
    const text = (name: string): string | undefined => {
        const value = values[name];
        return typeof value === "string" ? value : undefined;
    };
    const given = text("token") ?? (env.TASK_API_TOKEN || undefined);
    const tokenSource: TokenSource =
        text("token") !== undefined ? "option" : given !== undefined ? "environment" : "random";
    const token = given ?? randomBytes(18).toString("base64url");
    if (!/^[\x21-\x7e]+$/.test(token)) {
        const from = tokenSource === "option" ? "--token" : "TASK_API_TOKEN";
        throw usageError(`${from} must be printable ASCII without spaces.`);
    }
    const port = option(text("port"), "--port", (value) => integer(value, 0, 65535)) ?? DEFAULT_PORT;
    const taskDurationMs = option(text("task-duration"), "--task-duration", (value) => duration(value, "s"));
    const taskCompleteAfterPolls = option(text("task-polls"), "--task-polls", (value) => integer(value, 1));
    const pollInterval = option(text("poll-interval"), "--poll-interval", (value) => duration(value, "s"));
    const latencyMs = option(text("latency"), "--latency", (value) => duration(value, "ms"));
    const failureRate = option(text("failure-rate"), "--failure-rate", probability);
    const seed = option(text("seed"), "--seed", (value) => integer(value, 0, 2 ** 32 - 1));
    const rateLimit = option(text("rate-limit"), "--rate-limit", rate);
    const data = text("data") ?? DEFAULT_DATA_FILE;
    if (data === "") throw usageError("--data needs the path of a file.");
    if (taskDurationMs !== undefined && taskCompleteAfterPolls !== undefined) {
        throw usageError("--task-duration and --task-polls exclude each other.");
    }
    const host = text("host");
    return {
        help: values.help === true,
        quiet: values.quiet === true,
        tokenSource,
        server: {
            port,
            token,
            dataFile: resolve(data),
            ...(host !== undefined ? { host } : {}),
            ...(taskDurationMs !== undefined ? { taskDurationMs } : {}),
            ...(taskCompleteAfterPolls !== undefined ? { taskCompleteAfterPolls } : {}),
            ...(pollInterval !== undefined ? { suggestedPollingIntervalSeconds: pollInterval / 1000 } : {}),
            ...(latencyMs !== undefined ? { latencyMs } : {}),
            ...(failureRate !== undefined ? { failureRate } : {}),
            ...(seed !== undefined ? { seed } : {}),
            ...(rateLimit !== undefined ? { rateLimit } : {}),
            testApi: values["test-api"] === true,
        },
    };
}

function option<T>(value: string | undefined, name: string, parse: (value: string) => T | string): T | undefined {
    if (value === undefined) return undefined;
    const parsed = parse(value);
    if (typeof parsed === "string") throw usageError(`${name} ${quote(value)}: ${parsed}.`);
    return parsed;
}

/** A whole number in [min, max], or the problem. */
function integer(value: string, min: number, max = Number.MAX_SAFE_INTEGER): number | string {
    if (!/^\d+$/.test(value)) return "expected a whole number";
    const number = Number(value);
    return number >= min && number <= max ? number : `expected a number from ${min} to ${max}`;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000 };

/** Milliseconds from `2s`, `500ms`, `1.5m`, or a bare number in `bareUnit`; or the problem. */
function duration(value: string, bareUnit: "s" | "ms"): number | string {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|min)?$/.exec(value.trim());
    if (!match)
        return `expected a duration such as 2s, 500ms or 1m (a bare number is ${bareUnit === "s" ? "seconds" : "milliseconds"})`;
    return Math.round(Number(match[1]) * (UNITS[match[2] ?? bareUnit] ?? 1));
}

function probability(value: string): number | string {
    const number = Number(value);
    return value.trim() !== "" && number >= 0 && number <= 1 ? number : "expected a probability from 0 to 1, e.g. 0.2";
}

/** `{ perSecond, burst }` from `5/s`, `5`, `120/min`: N requests at once, then N per unit; or the problem. */
function rate(value: string): { perSecond: number; burst: number } | string {
    const match = /^(\d+(?:\.\d+)?)(?:\/(s|sec|second|m|min|minute))?$/.exec(value.trim());
    const count = Number(match?.[1]);
    if (!match || !(count > 0)) return "expected requests per second such as 5/s, or per minute such as 120/min";
    const perSecond = match[2]?.startsWith("m") ? count / 60 : count;
    return { perSecond, burst: Math.max(1, Math.floor(count)) };
}

function formatMs(ms: number): string {
    return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function usageError(message: string): CliError {
    return new CliError(`${message} Run \`pulumi-lifecycle task-api --help\` for usage.`, 2);
}
