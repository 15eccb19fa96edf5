// Guards how a provider process reads the task API settings (stack config first, then the environment)
// and what a client takes from them: a missing URL or token is an error that says what to set, and a
// URL that is not http(s) is refused before anything is sent.

import { strict as assert } from "node:assert";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { TaskApiConfigError } from "../../provider/tasks/errors/taskApiConfigError";
import { clientOptionsFrom, settingsFrom } from "../../provider/tasks/taskApiSettings";

/** A configure request holding `config`, as the engine sends the stack's configuration. */
function configured(config: Record<string, string>): dynamic.ConfigureRequest {
    return { config: { get: (key: string) => config[key] } } as unknown as dynamic.ConfigureRequest;
}

describe("task API settings", () => {
    it("takes stack config over the environment, and the environment where config is silent", () => {
        const settings = settingsFrom(configured({ "pulumi-lifecycle:taskApiUrl": "https://api.example.test" }), {
            TASK_API_URL: "http://ignored.test",
            TASK_API_TOKEN: "from-env",
            TASK_POLL_INITIAL_MS: "250",
        });
        assert.equal(settings.url, "https://api.example.test");
        assert.equal(settings.token, "from-env");
        assert.equal(settings.schedule.initialMs, 250);
    });

    it("ignores numbers that are not positive, keeping the defaults", () => {
        const settings = settingsFrom(undefined, { TASK_POLL_MAX_MS: "-5", TASK_REQUEST_TIMEOUT_MS: "soon" });
        assert.equal(settings.requestTimeoutMs, undefined);
        assert.ok(settings.schedule.maxMs > 0);
    });

    it("refuses a URL that is not http(s), naming the setting and the form to write", () => {
        assert.throws(
            () => settingsFrom(undefined, { TASK_API_URL: "ftp://api.example.test" }),
            (error: unknown) =>
                error instanceof TaskApiConfigError &&
                error.setting === "url" &&
                /http:\/\/ or https:\/\//.test(error.message),
        );
    });

    it("gives a client the URL, token, schedule and timeout, and no timeout when none is set", () => {
        const settings = settingsFrom(undefined, { TASK_API_URL: "http://127.0.0.1:1", TASK_API_TOKEN: "t" });
        const options = clientOptionsFrom(settings);
        assert.deepEqual(options, { baseUrl: "http://127.0.0.1:1", token: "t", schedule: settings.schedule });
        assert.equal(clientOptionsFrom({ ...settings, requestTimeoutMs: 900 }).requestTimeoutMs, 900);
    });

    for (const [setting, env, advice] of [
        ["url", { TASK_API_TOKEN: "t" }, /pulumi config set pulumi-lifecycle:taskApiUrl .*TASK_API_URL/],
        ["token", { TASK_API_URL: "http://127.0.0.1:1" }, /pulumi config set --secret pulumi-lifecycle:taskApiToken/],
    ] as const) {
        it(`refuses a client without a ${setting}, saying what to set`, () => {
            assert.throws(
                () => clientOptionsFrom(settingsFrom(undefined, env)),
                (error: unknown) =>
                    error instanceof TaskApiConfigError && error.setting === setting && advice.test(error.message),
            );
        });
    }
});
