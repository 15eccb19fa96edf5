import { LifecycleError } from "../../shared/errors/lifecycleError";

/** The program names where an API's token is, and neither place has it. Says how to set it. */
export class AsyncApiTokenError extends LifecycleError {
    override readonly name = "AsyncApiTokenError";

    constructor(
        readonly url: string,
        readonly tokenConfig: string | undefined,
        readonly tokenEnv: string | undefined,
    ) {
        const ways = [
            ...(tokenConfig ? [`pulumi config set --secret ${tokenConfig} <token>`] : []),
            ...(tokenEnv ? [`export ${tokenEnv} before running pulumi`] : []),
        ];
        super(`no credentials for the API at ${url}: ${ways.join(", or ")}`);
    }
}
