// Pulumi stores the stack config a dynamic provider is configured with in the state (the inputs of the
// default `pulumi:providers:pulumi-nodejs` provider): a secret encrypted, a plain value in clear. The
// provider cannot tell which it got (the SDK's provider server takes no secrets), so the program says it.

import * as pulumi from "@pulumi/pulumi";
import { sdkIsConfigSecret } from "../shared/sdkInternals";
import { TASK_CONFIG } from "./taskApiSettings";

let checked = false;

/** Whether stack config `key` is a secret, as the language host told the program. */
function isSecret(key: string): boolean {
    const secret = sdkIsConfigSecret(key);
    if (secret !== undefined) return secret;
    const keys: unknown = JSON.parse(process.env.PULUMI_CONFIG_SECRET_KEYS ?? "[]");
    return Array.isArray(keys) && keys.includes(key);
}

/** Warns once per program when the task API token is plain stack config. */
export function warnIfTokenInClear(): void {
    if (checked) return;
    checked = true;
    const [key] = TASK_CONFIG.token;
    if (!(key in pulumi.runtime.allConfig()) || isSecret(key)) return;
    void pulumi.log.warn(
        `${key} is plain stack config, and Pulumi stores a dynamic provider's config in the stack's state: ` +
            `the token is there in clear. Set it as a secret: pulumi config set --secret ${key} <token> ` +
            "(or pass it in the TASK_API_TOKEN environment variable, which never reaches the state).",
    );
}
