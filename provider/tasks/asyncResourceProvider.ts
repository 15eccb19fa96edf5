// The AsyncResource provider: glue from each engine operation to AsyncLifecycle (io/), with the
// client of each API built once per process from the resource's `api` (its URL, and the token read
// from the config key or environment variable the program names: never from inputs or state). Each
// method states its contract, as the SDK's ResourceProvider does.

import type * as dynamic from "@pulumi/pulumi/dynamic";
import { readConfig } from "../shared/config";
import { driftedInputs, keepingVersion, readAnswer, stamped, stateVersionOf } from "../shared/stateShape";
import {
    type ApiInputs,
    ASYNC_RESOURCE_INPUT_KEYS,
    type AsyncResourceInputs,
    type AsyncResourceOutputs,
} from "./asyncResourceSchema";
import type { RequestSigner } from "./client/awsSigner";
import { TaskApiClient } from "./client/taskApiClient";
import { tokenSettings } from "./errors/apiSettings";
import { AsyncApiTokenError } from "./errors/asyncApiTokenError";
import { AsyncResourceDefinitionError } from "./errors/asyncResourceDefinitionError";
import { AsyncApi } from "./io/asyncApi";
import { AsyncLifecycle } from "./io/asyncLifecycle";
import { type SentCreates, sentCreatesIn } from "./io/sentCreates";
import { checkAsyncResource } from "./logic/asyncCheck";
import { specOf } from "./logic/asyncSpec";
import { diffAsyncResource, type RawAsyncInputs } from "./logic/asyncState";
import { namedFailure } from "./logic/operationErrors";
import type { TaskProcessContext } from "./processContext";
import { settingsFrom, type TaskApiSettings } from "./taskApiSettings";

/** Cloud Control's signing name (botocore `cloudcontrol/2021-09-30/service-2.json`, metadata.signingName). */
const CLOUD_CONTROL_SIGNING_NAME = "cloudcontrolapi";

/** Implements `pulumi-nodejs:dynamic/tasks:AsyncResource`. */
export class AsyncResourceProvider implements dynamic.ResourceProvider<AsyncResourceInputs, AsyncResourceOutputs> {
    private request: dynamic.ConfigureRequest | undefined;
    private settings: TaskApiSettings;
    /** The keyed creates this user's processes sent and did not see end (sentCreates.ts). */
    private readonly sent: SentCreates;
    private readonly clients = new Map<string, TaskApiClient>();
    private readonly lifecycle: AsyncLifecycle;

    /** `fetch`: how requests leave the process (the global fetch; a test may count them). */
    constructor(
        private readonly context: TaskProcessContext,
        private readonly env: NodeJS.ProcessEnv,
        private readonly fetch: typeof globalThis.fetch = globalThis.fetch,
    ) {
        this.settings = settingsFrom(undefined, env);
        this.sent = sentCreatesIn(env, context.report);
        this.lifecycle = new AsyncLifecycle(
            (inputs) => this.apiFor(inputs),
            context.clock,
            context.sleep,
            context.signal,
            context.report,
            this.settings.schedule,
            context.engineCall,
            this.sent,
        );
    }

    /** Takes the stack's config (where tokens are read from); clients are built again on first use, nothing is sent. */
    async configure(request: dynamic.ConfigureRequest): Promise<void> {
        this.request = request;
        this.settings = settingsFrom(request, this.env);
        this.clients.clear();
    }

    /** Validates and normalizes the inputs without any I/O; every failure names its field and what to write. */
    async check(
        _olds: AsyncResourceInputs,
        news: AsyncResourceInputs,
    ): Promise<dynamic.CheckResult<AsyncResourceInputs>> {
        const { __provider, ...given } = news as RawAsyncInputs;
        const { inputs, failures } = checkAsyncResource(given);
        return {
            inputs: { ...inputs, ...(__provider === undefined ? {} : { __provider }) } as AsyncResourceInputs,
            failures,
        };
    }

    /** Says what changes without a request: the natural key, the API and replaceOnChanges fields replace, the body updates. */
    async diff(id: string, olds: AsyncResourceOutputs, news: AsyncResourceInputs): Promise<dynamic.DiffResult> {
        stateVersionOf(olds, `async resource ${id}`);
        return diffAsyncResource(olds, news);
    }

    /** Creates the resource; if this fails, what may exist is recorded as partial state, never forgotten. */
    create(inputs: AsyncResourceInputs): Promise<dynamic.CreateResult<AsyncResourceOutputs>> {
        return this.context.track(
            this.named(inputs, "create", async () => {
                const { id, outs } = await this.lifecycle.create(inputs as RawAsyncInputs);
                return { id, outs: stamped(outs) };
            }),
        );
    }

    /** Reads the resource as the API has it; nothing when it is gone. */
    async read(id: string, props?: AsyncResourceOutputs): Promise<dynamic.ReadResult<AsyncResourceOutputs>> {
        if (!props?.api) {
            throw new AsyncResourceDefinitionError(id);
        }
        stateVersionOf(props, `async resource ${id}`);
        const read = await this.named(props, "read", () => this.lifecycle.read(props));
        if (!read) return {};
        // The record as read is also the resource's inputs: a change made outside Pulumi shows on `body`.
        return readAnswer(
            read.id,
            keepingVersion(read.props, props),
            driftedInputs(read.props, props, ASYNC_RESOURCE_INPUT_KEYS),
        );
    }

    /** Updates the resource; if this fails, the state on record stays true (partial state where an operation is under way). */
    update(
        id: string,
        olds: AsyncResourceOutputs,
        news: AsyncResourceInputs,
    ): Promise<dynamic.UpdateResult<AsyncResourceOutputs>> {
        stateVersionOf(olds, `async resource ${id}`);
        return this.context.track(
            this.named(news, "update", async () => {
                const { outs } = await this.lifecycle.update(olds, news as RawAsyncInputs);
                return { outs: stamped(outs) };
            }),
        );
    }

    /** Deletes the resource; if this fails, it stays in the stack's state. */
    delete(id: string, props: AsyncResourceOutputs): Promise<void> {
        stateVersionOf(props, `async resource ${id}`);
        return this.context.track(this.named(props, "delete", () => this.lifecycle.delete(props)));
    }

    /** The API of a resource: one client per URL and token source per process. */
    private apiFor(inputs: AsyncResourceInputs): AsyncApi {
        const spec = specOf(inputs);
        const { api } = inputs;
        const cacheKey = JSON.stringify([api.url, api.tokenConfig, api.tokenEnv, api.dialect, api.region]);
        let client = this.clients.get(cacheKey);
        if (!client) {
            const aws = api.dialect === "aws-cloudcontrol";
            client = new TaskApiClient({
                baseUrl: api.url,
                token: aws ? "" : this.tokenOf(api),
                ...(aws ? { sign: this.signerFor(api) } : {}),
                clock: this.context.clock,
                sleep: this.context.sleep,
                random: this.context.random,
                schedule: this.settings.schedule,
                fetch: this.fetch,
                settings: {
                    url: "api.url",
                    token: tokenSettings(api.tokenConfig, api.tokenEnv),
                    tokenInConfig: !!api.tokenConfig,
                },
                ...(this.settings.requestTimeoutMs ? { requestTimeoutMs: this.settings.requestTimeoutMs } : {}),
            });
            this.clients.set(cacheKey, client);
        }
        return new AsyncApi(spec, client, this.context, this.settings.schedule);
    }

    /** SigV4 for Cloud Control, with the credentials of the process's environment. */
    private signerFor(api: ApiInputs): RequestSigner {
        // Loaded only by programs that use Cloud Control: every other resource runs without the signer.
        const { awsCredentialsFrom, sigV4Signer } =
            require("./client/awsSigner") as typeof import("./client/awsSigner");
        const credentials = awsCredentialsFrom(this.env);
        if (!credentials)
            throw new AsyncApiTokenError(api.url, undefined, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
        return sigV4Signer({ region: api.region as string, service: CLOUD_CONTROL_SIGNING_NAME, credentials });
    }

    /** The token from the named config key, else the named environment variable; none when neither is named. */
    private tokenOf(api: ApiInputs): string {
        if (!api.tokenConfig && !api.tokenEnv) return "";
        const fromConfig = api.tokenConfig && this.request ? readConfig(this.request, api.tokenConfig) : undefined;
        const token = fromConfig ?? (api.tokenEnv ? this.env[api.tokenEnv] : undefined);
        if (!token) throw new AsyncApiTokenError(api.url, api.tokenConfig, api.tokenEnv);
        return token;
    }

    /** Runs an operation; whatever it fails with names its resource and is a LifecycleError. */
    private async named<T>(
        inputs: AsyncResourceInputs,
        operation: "create" | "read" | "update" | "delete",
        work: () => Promise<T>,
    ): Promise<T> {
        try {
            return await work();
        } catch (error) {
            let label: string;
            try {
                label = specOf(inputs).label;
            } catch {
                throw error;
            }
            throw namedFailure(error, label, label, operation);
        }
    }
}
