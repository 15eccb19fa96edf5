// Drives the real dynamic-provider server of @pulumi/pulumi (the process the engine starts for dynamic
// resources) over gRPC with the SDK's own stubs, exactly as the engine would: started with its working
// directory in the Pulumi project and PULUMI_NODEJS_PROJECT set, every request carrying `__provider`.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import * as grpc from "@grpc/grpc-js";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import * as statusproto from "@pulumi/pulumi/proto/status_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { SENT_CREATES_DIR_ENV } from "../../provider/tasks/io/sentCreates";
import { recordsDirectory } from "./recordsDirectory";
import { deferringSdkModules } from "./sdkDeferral";

/** Property bags as the engine exchanges them (JSON-like values). */
export type Props = Record<string, unknown>;

/** A failed Create or Update that the provider reported as partial state (ErrorResourceInitFailed). */
export interface InitFailure {
    readonly id: string;
    readonly properties: Props;
    readonly reasons: string[];
}

/** An error answered by the provider, with the partial state when there is one. */
export class ProviderCallError extends Error {
    override readonly name = "ProviderCallError";

    constructor(
        readonly method: string,
        readonly details: string,
        readonly initFailure: InitFailure | undefined,
        readonly grpcCode: number,
    ) {
        super(`${method}: ${details}`);
    }
}

/** Options for starting a server. */
export interface StartOptions {
    /** The Pulumi project directory: the server's working directory, where `__provider` resolves modules. */
    readonly projectDir: string;
    readonly projectName?: string;
    readonly env?: NodeJS.ProcessEnv;
    /** The engine's address, passed as the process's first argument (default: one nothing listens on). */
    readonly engineAddress?: string;
    /** Extra Node.js flags for the server process (`--cpu-prof`, `--inspect`), for profiling and debugging. */
    readonly nodeArgs?: string[];
    /** Run the server as another user (root only), to meet permissions the way a non-root user does. */
    readonly user?: { uid: number; gid: number };
    /**
     * Runs the process exactly as a user's, without deferring the SDK's closure modules
     * (deferredSdkModules.js): for the suites that test the package as a user installs it.
     */
    readonly asInstalled?: boolean;
}

/** The environment a server process starts with: this process's, with `options` applied. */
export function providerProcessEnv(options: StartOptions): NodeJS.ProcessEnv {
    return {
        ...process.env,
        // Its records of creates in flight: this test process's (recordsDirectory.ts says why), unless it
        // runs as another user, who keeps them in that user's own directory.
        ...(options.user ? {} : { [SENT_CREATES_DIR_ENV]: recordsDirectory() }),
        ...(options.asInstalled ? {} : { NODE_OPTIONS: deferringSdkModules() }),
        ...options.env,
        PULUMI_NODEJS_PROJECT: options.projectName ?? "test-project",
    };
}

/** A running dynamic-provider server process and a gRPC client connected to it. */
export class ProviderServer {
    private stderrText = "";
    private stdoutText = "";
    private readonly exited: Promise<number | null>;

    private client: provrpc.ResourceProviderClient;

    private constructor(
        readonly process: ChildProcess,
        private readonly port: number,
    ) {
        this.client = clientOf(port);
        process.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
            this.stderrText += chunk;
        });
        // Keep draining stdout (provider logging goes there) so the process never blocks on a full pipe.
        process.stdout?.on("data", (chunk: string) => {
            this.stdoutText += chunk;
        });
        this.exited = once(process, "exit").then(([code]) => code as number | null);
    }

    /** Starts `@pulumi/pulumi/cmd/dynamic-provider` the way the engine does and connects to it. */
    static async start(options: StartOptions): Promise<ProviderServer> {
        const entry = require.resolve("@pulumi/pulumi/cmd/dynamic-provider/index.js", {
            paths: [options.projectDir, __dirname],
        });
        const child = spawn(
            process.execPath,
            [...(options.nodeArgs ?? []), entry, options.engineAddress ?? "127.0.0.1:1"],
            {
                cwd: options.projectDir,
                env: providerProcessEnv(options),
                stdio: ["ignore", "pipe", "pipe"],
                ...(options.user ?? {}),
            },
        );
        return new ProviderServer(child, await firstLine(child));
    }

    /** Whether the process still runs. */
    get running(): boolean {
        return this.process.exitCode === null && this.process.signalCode === null;
    }

    /**
     * Keeps the process for later without holding this one up: the client closed and the process and
     * its pipes unreferenced, so the test process may exit meanwhile (whoever parks it kills it then).
     */
    park(): void {
        this.client.close();
        this.process.unref();
        for (const pipe of [this.process.stdout, this.process.stderr])
            (pipe as { unref?: () => void } | null)?.unref?.();
    }

    /** Takes a parked process back into use: referenced again, with a new client. */
    wake(): void {
        this.process.ref();
        for (const pipe of [this.process.stdout, this.process.stderr]) (pipe as { ref?: () => void } | null)?.ref?.();
        this.client = clientOf(this.port);
    }

    /** What the server wrote to stderr so far (uncaught errors, console output of providers). */
    get stderr(): string {
        return this.stderrText;
    }

    /** What the server wrote to stdout after its port (console output and logs of providers). */
    get stdout(): string {
        return this.stdoutText;
    }

    get pid(): number {
        return this.process.pid ?? -1;
    }

    /** Sends the stack configuration (namespaced keys, as the engine sends all of it to dynamic providers). */
    async configure(config: Record<string, string>): Promise<void> {
        const request = new provproto.ConfigureRequest();
        request.setArgs(Struct.fromJavaScript(config));
        await this.call("configure", (cb) => this.client.configure(request, cb));
    }

    async check(
        urn: string,
        olds: Props,
        news: Props,
    ): Promise<{ inputs: Props; failures: { property: string; reason: string }[] }> {
        const request = new provproto.CheckRequest();
        request.setUrn(urn);
        request.setOlds(Struct.fromJavaScript(olds as never));
        request.setNews(Struct.fromJavaScript(news as never));
        const response = await this.call<provproto.CheckResponse>("check", (cb) => this.client.check(request, cb));
        return {
            inputs: response.getInputs()?.toJavaScript() ?? {},
            failures: response.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
        };
    }

    async diff(
        urn: string,
        id: string,
        olds: Props,
        news: Props,
    ): Promise<{ changes: "some" | "none" | "unknown"; replaces: string[]; deleteBeforeReplace: boolean }> {
        const request = new provproto.DiffRequest();
        request.setUrn(urn);
        request.setId(id);
        request.setOlds(Struct.fromJavaScript(olds as never));
        request.setNews(Struct.fromJavaScript(news as never));
        const response = await this.call<provproto.DiffResponse>("diff", (cb) => this.client.diff(request, cb));
        const changes = response.getChanges();
        const kinds = provproto.DiffResponse.DiffChanges;
        return {
            changes: changes === kinds.DIFF_SOME ? "some" : changes === kinds.DIFF_NONE ? "none" : "unknown",
            replaces: response.getReplacesList(),
            deleteBeforeReplace: response.getDeletebeforereplace(),
        };
    }

    async create(urn: string, properties: Props): Promise<{ id: string; properties: Props }> {
        const request = new provproto.CreateRequest();
        request.setUrn(urn);
        request.setProperties(Struct.fromJavaScript(properties as never));
        const response = await this.call<provproto.CreateResponse>("create", (cb) => this.client.create(request, cb));
        return { id: response.getId(), properties: response.getProperties()?.toJavaScript() ?? {} };
    }

    async read(
        urn: string,
        id: string,
        properties: Props,
        inputs?: Props,
    ): Promise<{ id: string; properties: Props; inputs: Props | undefined }> {
        const request = new provproto.ReadRequest();
        request.setUrn(urn);
        request.setId(id);
        request.setProperties(Struct.fromJavaScript(properties as never));
        if (inputs) request.setInputs(Struct.fromJavaScript(inputs as never));
        const response = await this.call<provproto.ReadResponse>("read", (cb) => this.client.read(request, cb));
        return {
            id: response.getId(),
            properties: response.getProperties()?.toJavaScript() ?? {},
            inputs: response.getInputs()?.toJavaScript(),
        };
    }

    async update(urn: string, id: string, olds: Props, news: Props): Promise<{ properties: Props }> {
        const request = new provproto.UpdateRequest();
        request.setUrn(urn);
        request.setId(id);
        request.setOlds(Struct.fromJavaScript(olds as never));
        request.setNews(Struct.fromJavaScript(news as never));
        const response = await this.call<provproto.UpdateResponse>("update", (cb) => this.client.update(request, cb));
        return { properties: response.getProperties()?.toJavaScript() ?? {} };
    }

    async delete(urn: string, id: string, properties: Props): Promise<void> {
        const request = new provproto.DeleteRequest();
        request.setUrn(urn);
        request.setId(id);
        request.setProperties(Struct.fromJavaScript(properties as never));
        await this.call("delete", (cb) => this.client.delete(request, cb));
    }

    /** Sends a signal to the server process (the engine sends SIGINT on a second Ctrl-C, SIGKILL 5 s later). */
    kill(signal: NodeJS.Signals): void {
        this.process.kill(signal);
    }

    /** Resolves with the exit code once the process has exited. */
    waitForExit(): Promise<number | null> {
        return this.exited;
    }

    /** Closes the client and stops the process. */
    async stop(): Promise<void> {
        this.client.close();
        if (this.running) {
            this.process.kill("SIGKILL");
            await this.exited;
        }
    }

    private call<T>(
        method: string,
        invoke: (callback: (error: grpc.ServiceError | null, value?: T) => void) => void,
    ): Promise<T> {
        return new Promise((resolve, reject) => {
            invoke((error, value) => {
                if (error) reject(toCallError(method, error));
                else resolve(value as T);
            });
        });
    }
}

function clientOf(port: number): provrpc.ResourceProviderClient {
    return new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

function toCallError(method: string, error: grpc.ServiceError): ProviderCallError {
    let initFailure: InitFailure | undefined;
    const [detailsBin] = error.metadata?.get("grpc-status-details-bin") ?? [];
    if (detailsBin instanceof Buffer) {
        const status = statusproto.Status.deserializeBinary(new Uint8Array(detailsBin));
        for (const detail of status.getDetailsList()) {
            if (detail.getTypeName() !== "pulumirpc.ErrorResourceInitFailed") continue;
            const failed = provproto.ErrorResourceInitFailed.deserializeBinary(detail.getValue_asU8());
            initFailure = {
                id: failed.getId(),
                properties: failed.getProperties()?.toJavaScript() ?? {},
                reasons: failed.getReasonsList(),
            };
        }
    }
    return new ProviderCallError(method, error.details ?? error.message, initFailure, error.code);
}

async function firstLine(child: ChildProcess): Promise<number> {
    const stdout = child.stdout;
    if (!stdout) throw new Error("provider server has no stdout");
    stdout.setEncoding("utf8");
    let buffered = "";
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
    });
    return await new Promise<number>((resolve, reject) => {
        const onData = (chunk: string) => {
            buffered += chunk;
            const newline = buffered.indexOf("\n");
            if (newline < 0) return;
            stdout.off("data", onData);
            const port = Number(buffered.slice(0, newline).trim());
            if (Number.isInteger(port) && port > 0) resolve(port);
            else reject(new Error(`provider server printed ${JSON.stringify(buffered)} instead of its port`));
        };
        stdout.on("data", onData);
        child.once("exit", (code) =>
            reject(new Error(`provider server exited with ${code} before listening: ${stderr}`)),
        );
        child.once("error", reject);
    });
}
