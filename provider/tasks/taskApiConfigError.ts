/** The provider has no task API URL or token to work with. */
export class TaskApiConfigError extends Error {
    override readonly name = "TaskApiConfigError";

    constructor(readonly missing: "url" | "token") {
        super(
            missing === "url"
                ? "no task API URL: run `pulumi config set pulumi-lifecycle:taskApiUrl http://host:port` (or set TASK_API_URL)"
                : "no task API token: run `pulumi config set --secret pulumi-lifecycle:taskApiToken <token>` (or set TASK_API_TOKEN)",
        );
    }
}
