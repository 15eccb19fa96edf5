import { LifecycleError } from "../../shared/errors/lifecycleError";
import { type ApiSettingNames, storedConfigNote, TASK_API_SETTINGS } from "./apiSettings";
import { requestLine } from "./requestLine";

/**
 * Requests to the task API kept failing at the network level (refused, reset, timed out). The message
 * names the server and what to check; when the URL comes from stack config and the stack's config files
 * now say another, it says that this is the URL the last `pulumi up` stored and what to run.
 */
export class TaskApiUnreachableError extends LifecycleError {
    override readonly name = "TaskApiUnreachableError";

    constructor(
        readonly method: string,
        /** The whole URL requested (query included; the token never). */
        readonly url: string,
        readonly attempts: number,
        readonly reason: string,
        settings: ApiSettingNames = TASK_API_SETTINGS,
    ) {
        const origin = originOf(url);
        super(
            `could not reach the task API at ${origin} for ${requestLine(method, url)} after ${attempts} ` +
                `attempt${attempts === 1 ? "" : "s"}: ${reason}. ${nextStep(origin, settings)}.`,
        );
    }
}

function nextStep(origin: string, settings: ApiSettingNames): string {
    const check = `Check that the server is running and that ${settings.url} points to it`;
    if (!settings.urlConfig) return check;
    let today: readonly { file: string; value: string }[] | undefined;
    try {
        today = settings.urlConfig.today();
    } catch {
        today = undefined;
    }
    const other = today?.find((configured) => originOf(configured.value) !== origin);
    if (other) {
        return (
            `${origin} is the URL the last \`pulumi up\` stored, which \`pulumi destroy\` and \`pulumi refresh\` use ` +
            `(Pulumi keeps a provider's config from its last up), but ${other.file} now sets ${settings.urlConfig.key} ` +
            `to ${other.value}: run \`pulumi destroy --run-program\` (or \`pulumi refresh --run-program\`) to use ` +
            "today's config, or run a successful `pulumi up` first"
        );
    }
    return today && today.length > 0 ? check : `${check}. ${storedConfigNote("URL")}`;
}

function originOf(url: string): string {
    try {
        return new URL(url).origin;
    } catch {
        return url;
    }
}
