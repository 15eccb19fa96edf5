// One widget resource per dialect, as a program would declare it against that dialect's server (the
// servers of test/dialects/servers, written from each API's public contract): how to start the server
// fast, the AsyncResource definition, and a change of the body that updates in place. Servers that
// pace polls send their hint on every answer as the contract says, but as "come back now" (0 s): the
// client's configured backoff paces the polls, and no test waits on a wall clock. How hints of seconds
// are followed is tested in test/tasks/client/pollHints.test.ts and pollSchedule.test.ts.

import { strict as assert } from "node:assert";
import { AsyncResourceProvider } from "../../../provider/tasks/asyncResourceProvider";
import type { AsyncResourceInputs } from "../../../provider/tasks/asyncResourceSchema";
import { SENT_CREATES_DIR_ENV } from "../../../provider/tasks/io/sentCreates";
import type { TaskProcessContext } from "../../../provider/tasks/processContext";
import { ARM_API_VERSION, startAzureArmServer } from "../../dialects/servers/azureArm";
import { GUIDELINES_API_VERSIONS, startAzureGuidelinesServer } from "../../dialects/servers/azureGuidelines";
import { startCloudControlServer, TYPE_NAME } from "../../dialects/servers/cloudControl";
import { startGenericServer } from "../../dialects/servers/generic";
import { startGoogleAipServer } from "../../dialects/servers/googleAip";
import type { DialectServer, FaultPlan, OperationPlan } from "../../dialects/servers/kit";
import { TEST_CREDENTIALS, TEST_REGION } from "../../dialects/servers/sigv4";
import { recordsDirectory } from "../../support/recordsDirectory";

/** The environment variable every fixture names for its token. */
export const TOKEN_ENV = "WIDGETS_TOKEN";
/** Every server's token. */
export const WIDGETS_TOKEN = "widgets-Sekrit-4c1e.do-not-print";

/** A dialect's widget, for the conformance suites. */
export interface DialectFixture {
    readonly dialect: string;
    start(options?: { faults?: FaultPlan; operations?: OperationPlan }): Promise<DialectServer>;
    /** The resource's inputs (as a program passes them) for a widget named `name` of `size`. */
    args(url: string, name: string, size: number): Record<string, unknown>;
    /** The size as the server's record of the widget has it. */
    sizeOf(record: Record<string, unknown>): unknown;
    /** The name (natural key) as the server's record has it. */
    nameOf(record: Record<string, unknown>): unknown;
    /** What the server's `mutate` takes to set the size, as another tool would. */
    drift(size: number): Record<string, unknown>;
    /** Whether a create token makes a repeated create replay (so a killed create resumes without adopt). */
    readonly replaysCreate: boolean;
    /** What the provider process's environment must hold besides the token (AWS credentials). */
    readonly env?: Readonly<Record<string, string>>;
}

const api = (url: string, dialect: string, extra: Record<string, unknown> = {}) => ({
    url,
    dialect,
    tokenEnv: TOKEN_ENV,
    ...extra,
});

export const FIXTURES: readonly DialectFixture[] = [
    {
        dialect: "generic",
        start: (options) => startGenericServer({ token: WIDGETS_TOKEN, retryAfterSeconds: 0, ...options }),
        args: (url, name, size) => ({
            api: api(url, "generic"),
            collectionPath: "/widgets",
            itemPath: "/widgets/{id}",
            naturalKey: "name",
            idField: "id",
            lookup: { query: "name={key}" },
            body: { name, size },
        }),
        sizeOf: (record) => record.size,
        nameOf: (record) => record.name,
        drift: (size) => ({ size }),
        replaysCreate: true,
    },
    {
        dialect: "azure-arm",
        start: (options) =>
            startAzureArmServer({ token: WIDGETS_TOKEN, retryAfter: "always", retryAfterSeconds: 0, ...options }),
        args: (url, name, size) => ({
            api: api(url, "azure-arm"),
            collectionPath: `/subscriptions/{subscription}/resourceGroups/{group}/providers/Test.Widgets/widgets?api-version=${ARM_API_VERSION}`,
            itemPath: `/subscriptions/{subscription}/resourceGroups/{group}/providers/Test.Widgets/widgets/{id}?api-version=${ARM_API_VERSION}`,
            pathParameters: { subscription: "0000-sub", group: "rg1" },
            naturalKey: "name",
            key: name,
            body: { location: "westus", properties: { size } },
        }),
        sizeOf: (record) => (record.properties as Record<string, unknown> | undefined)?.size,
        nameOf: (record) => record.name,
        drift: (size) => ({ properties: { size } }),
        replaysCreate: false,
    },
    {
        dialect: "azure",
        start: (options) => startAzureGuidelinesServer({ token: WIDGETS_TOKEN, retryAfterSeconds: 0, ...options }),
        args: (url, name, size) => ({
            api: api(url, "azure"),
            collectionPath: `/widgets?api-version=${GUIDELINES_API_VERSIONS[0]}`,
            itemPath: `/widgets/{id}?api-version=${GUIDELINES_API_VERSIONS[0]}`,
            naturalKey: "name",
            key: name,
            body: { size },
        }),
        sizeOf: (record) => record.size,
        nameOf: (record) => record.name,
        drift: (size) => ({ size }),
        replaysCreate: false,
    },
    {
        dialect: "google",
        start: (options) => startGoogleAipServer({ token: WIDGETS_TOKEN, ...options }),
        args: (url, name, size) => ({
            api: api(url, "google", { idParameter: "widgetId" }),
            collectionPath: "/v1/projects/{project}/locations/{location}/widgets",
            itemPath: "/v1/projects/{project}/locations/{location}/widgets/{id}",
            pathParameters: { project: "p1", location: "us-central1" },
            naturalKey: "displayName",
            body: { displayName: name, size },
        }),
        sizeOf: (record) => record.size,
        nameOf: (record) => record.displayName,
        drift: (size) => ({ size }),
        replaysCreate: true,
    },
    {
        dialect: "aws-cloudcontrol",
        start: (options) => startCloudControlServer({ retryAfterSeconds: 0, ...options }),
        args: (url, name, size) => ({
            api: api(url, "aws-cloudcontrol", { typeName: TYPE_NAME, region: TEST_REGION }),
            collectionPath: "/",
            itemPath: "/{id}",
            naturalKey: "Name",
            body: { Name: name, Size: size },
        }),
        sizeOf: (record) => record.Size,
        nameOf: (record) => record.Name,
        drift: (size) => ({ Size: size }),
        replaysCreate: true,
        env: {
            AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
            AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
        },
    },
];

/** When a provider process on fake time starts, unless told otherwise. */
export const FAKE_EPOCH = Date.parse("2030-01-01T00:00:00.000Z");

/** A provider process under test: the provider, its signal's controller (Ctrl-C, a kill), what it reported. */
export interface ProcessOnFakeTime {
    readonly provider: AsyncResourceProvider;
    readonly controller: AbortController;
    readonly reports: string[];
}

/** How a provider process on fake time is set up (processOnFakeTime). */
export interface FakeProcessOptions {
    readonly env?: Readonly<Record<string, string>>;
    readonly onWait?: (count: number) => void;
    readonly killAt?: (method: string, url: string) => boolean;
    /** The process's clock at its start (ms since the epoch): a later process of the same machine starts later. */
    readonly startsAt?: number;
}

/**
 * An AsyncResource provider process as the engine runs one, in process, on time that passes only when it
 * waits, with `env` over the token's variable and a poll schedule starting at 100 ms. `onWait` runs at
 * each wait (with its number, from 1) and may abort the signal; `killAt` kills the process as the request
 * it names is about to be sent: that request and every later one fail, and nothing more is answered.
 */
export function processOnFakeTime(options: FakeProcessOptions = {}): ProcessOnFakeTime {
    let now = options.startsAt ?? FAKE_EPOCH;
    let waits = 0;
    let dead = false;
    const controller = new AbortController();
    const reports: string[] = [];
    const context: TaskProcessContext = {
        clock: () => now,
        sleep: async (ms, signal) => {
            signal?.throwIfAborted();
            now += ms;
            options.onWait?.(++waits);
            signal?.throwIfAborted();
        },
        random: () => 0.5,
        signal: controller.signal,
        report: (message) => reports.push(message),
        track: (work) => work,
    };
    const untilKilled: typeof fetch = async (input, init) => {
        if (!dead && options.killAt?.(init?.method ?? "GET", String(input))) {
            dead = true;
            controller.abort(new Error("killed (SIGKILL)"));
        }
        if (dead) throw new TypeError("fetch failed: the provider process is dead");
        return fetch(input, init);
    };
    const env = {
        [TOKEN_ENV]: WIDGETS_TOKEN,
        TASK_POLL_INITIAL_MS: "100",
        [SENT_CREATES_DIR_ENV]: recordsDirectory(),
        ...options.env,
    };
    return { provider: new AsyncResourceProvider(context, env, untilKilled), controller, reports };
}

/** The inputs `provider`'s check makes of a program's `args`, which must pass it. */
export async function checked(
    provider: AsyncResourceProvider,
    args: Record<string, unknown>,
): Promise<AsyncResourceInputs> {
    const { inputs, failures } = await provider.check(
        {} as AsyncResourceInputs,
        args as unknown as AsyncResourceInputs,
    );
    assert.deepEqual(failures, []);
    return inputs as AsyncResourceInputs;
}

/**
 * An AsyncResource provider as the engine runs one, in process, on time that passes only when it waits,
 * with `env` as its environment (the token's variable set to `token`).
 */
export function providerOnFakeTime(env: Readonly<Record<string, string>> = {}): AsyncResourceProvider {
    return processOnFakeTime({ env: { TASK_POLL_INITIAL_MS: "1", ...env } }).provider;
}
