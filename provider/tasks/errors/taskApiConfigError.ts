import { LifecycleError } from "../../shared/errors/lifecycleError";

/** The provider has no task API URL or token to work with, or a URL it cannot use. */
export class TaskApiConfigError extends LifecycleError {
    override readonly name = "TaskApiConfigError";

    /** `setting` names what is missing or wrong; `invalidUrl` explains why the URL that is set cannot be used. */
    constructor(
        readonly setting: "url" | "token",
        invalidUrl?: string,
    ) {
        super(
            invalidUrl !== undefined
                ? invalidUrl
                : setting === "url"
                  ? "no task API URL: run `pulumi config set pulumi-lifecycle:taskApiUrl http://host:port` (or set TASK_API_URL)"
                  : "no task API token: run `pulumi config set --secret pulumi-lifecycle:taskApiToken <token>` (or set TASK_API_TOKEN)",
        );
    }
}
