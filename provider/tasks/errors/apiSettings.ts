// Where an API's URL and token are set, as messages name them, so that an error about the token or the
// URL says which setting to check. Pure.

/** A value a stack's config file gives a key today (a destroy or refresh may run with another, stored one). */
export interface ConfiguredValue {
    /** The stack config file, relative to the project: `Pulumi.dev.yaml`. */
    readonly file: string;
    readonly value: string;
}

/** Where an API's URL and token are set. */
export interface ApiSettingNames {
    /** The URL's setting: `stack config pulumi-lifecycle:taskApiUrl (or TASK_API_URL)`, `api.url`. */
    readonly url: string;
    /** The token's settings, which a 401 or 403 names; undefined when requests carry no token (signed, or none). */
    readonly token?: string;
    /** Whether the token may come from stack config, which `pulumi destroy` and `pulumi refresh` take as the last `up` stored it. */
    readonly tokenInConfig?: boolean;
    /**
     * When the URL comes from stack config: its key, and what the stack's config files say it is today
     * (undefined when that cannot be told). `pulumi destroy` and `pulumi refresh` run with the provider
     * config the last `pulumi up` stored, which may be another URL.
     */
    readonly urlConfig?: { readonly key: string; readonly today: () => readonly ConfiguredValue[] | undefined };
}

/** The task API's settings, which tasks.Datastore uses. */
export const TASK_API_SETTINGS: ApiSettingNames = {
    url: "stack config pulumi-lifecycle:taskApiUrl (or TASK_API_URL)",
    token:
        "stack config pulumi-lifecycle:taskApiToken (`pulumi config set --secret pulumi-lifecycle:taskApiToken <token>`) " +
        "or the TASK_API_TOKEN environment variable",
    tokenInConfig: true,
};

/** The token settings a tasks.AsyncResource names in `api.tokenConfig` and `api.tokenEnv`. */
export function tokenSettings(tokenConfig: string | undefined, tokenEnv: string | undefined): string | undefined {
    const ways = [
        ...(tokenConfig
            ? [`stack config ${tokenConfig} (api.tokenConfig: \`pulumi config set --secret ${tokenConfig} <token>\`)`]
            : []),
        ...(tokenEnv ? [`the ${tokenEnv} environment variable (api.tokenEnv)`] : []),
    ];
    return ways.length === 0 ? undefined : ways.join(" or ");
}

/** What `pulumi destroy` and `pulumi refresh` do with a setting of stack config, and what to run instead. */
export function storedConfigNote(what: string): string {
    return (
        `\`pulumi destroy\` and \`pulumi refresh\` use the ${what} the last \`pulumi up\` stored, not today's stack config ` +
        "(Pulumi keeps a provider's config from its last up): if you changed it since, run them with `--run-program`, " +
        "or run a successful `pulumi up` first"
    );
}
