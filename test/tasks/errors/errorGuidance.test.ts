// Guards the next steps the task errors give (issue 20, part 2), without a server: a 401 or 403 names
// the setting that holds the token (the task API's, or an AsyncResource's own) and says that destroy and
// refresh use the stored one; a request is named by method and path, without the lookup's URL-encoded
// query (a 400 shows its query decoded); an unreachable API says to check the URL's setting, and, when
// the stack's config files now name another URL than the one tried, that it is the one the last `up`
// stored and what to run. The config files are real files in a temporary project.

import { strict as assert } from "node:assert";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { configuredValues, taskApiSettingsIn } from "../../../provider/tasks/client/stackConfigFiles";
import { TASK_API_SETTINGS, tokenSettings } from "../../../provider/tasks/errors/apiSettings";
import { readableQuery, requestLine } from "../../../provider/tasks/errors/requestLine";
import { TaskApiError } from "../../../provider/tasks/errors/taskApiError";
import { TaskApiUnreachableError } from "../../../provider/tasks/errors/taskApiUnreachableError";
import { makeTempDir, type TempDir } from "../../support/projects";

const LOOKUP =
    "/virtualization/v1beta1/datastores?filter=hciClusterUuid%20eq%20'126f'%20and%20clusterInfo%2Fid%20eq%20'298a'%20and%20name%20eq%20'ds19'";

describe("task errors that give a next step", () => {
    let project: TempDir;
    beforeEach(async () => {
        project = await makeTempDir("guidance-");
    });
    afterEach(() => project.cleanup());

    describe("a 401 or 403 names where the token is set", () => {
        it("the task API's settings for a 401, with what destroy and refresh use", () => {
            const error = new TaskApiError(
                "GET",
                LOOKUP,
                401,
                "unauthorized",
                "the bearer token is not valid",
                {},
                undefined,
                false,
                TASK_API_SETTINGS,
            );
            assert.equal(
                error.message,
                "the task API answered GET /virtualization/v1beta1/datastores with 401 (unauthorized): the bearer token is not valid. " +
                    "The API did not accept the token: check the token in stack config pulumi-lifecycle:taskApiToken " +
                    "(`pulumi config set --secret pulumi-lifecycle:taskApiToken <token>`) or the TASK_API_TOKEN environment variable. " +
                    "`pulumi destroy` and `pulumi refresh` use the token the last `pulumi up` stored, not today's stack config " +
                    "(Pulumi keeps a provider's config from its last up): if you changed it since, run them with `--run-program`, " +
                    "or run a successful `pulumi up` first",
            );
            assert.equal(error.path, LOOKUP, "the field keeps the whole path");
        });

        it("an AsyncResource's own settings for a 403; only the environment variable: nothing about stored config", () => {
            const settings = { url: "api.url", token: tokenSettings(undefined, "WIDGETS_TOKEN") };
            const error = new TaskApiError(
                "POST",
                "/widgets",
                403,
                undefined,
                "Forbidden",
                {},
                undefined,
                false,
                settings,
            );
            assert.match(
                error.message,
                /check that the token has the permissions it needs, in the WIDGETS_TOKEN environment variable \(api\.tokenEnv\)$/,
            );
            assert.ok(!error.message.includes("pulumi-lifecycle:"));
        });

        it("names both of an AsyncResource's settings, and nothing when it has none (no token is sent)", () => {
            assert.equal(
                tokenSettings("widgets:token", "WIDGETS_TOKEN"),
                "stack config widgets:token (api.tokenConfig: `pulumi config set --secret widgets:token <token>`) or the WIDGETS_TOKEN environment variable (api.tokenEnv)",
            );
            assert.equal(tokenSettings(undefined, undefined), undefined);
            const error = new TaskApiError("GET", "/w", 401, undefined, "no", {}, undefined, false, { url: "api.url" });
            assert.equal(error.message, "the task API answered GET /w with 401: no");
        });

        it("other statuses get no token advice", () => {
            const error = new TaskApiError(
                "GET",
                "/w",
                404,
                undefined,
                "gone",
                {},
                undefined,
                false,
                TASK_API_SETTINGS,
            );
            assert.equal(error.message, "the task API answered GET /w with 404: gone");
        });
    });

    describe("requests are named without their encoded query", () => {
        it("a path or URL loses its query; a 400 shows it decoded, cut to length", () => {
            assert.equal(requestLine("GET", LOOKUP), "GET /virtualization/v1beta1/datastores");
            assert.equal(requestLine("GET", `http://127.0.0.1:9${LOOKUP}`), "GET /virtualization/v1beta1/datastores");
            assert.equal(
                readableQuery(LOOKUP),
                "filter=hciClusterUuid eq '126f' and clusterInfo/id eq '298a' and name eq 'ds19'",
            );
            assert.equal(readableQuery("/x?%E0%A4%A"), "%E0%A4%A", "not decodable: as it is");
            assert.equal(readableQuery(`/x?q=${"a".repeat(300)}`)?.length, 203);
            assert.equal(readableQuery("/x"), undefined);
            const refused = new TaskApiError("GET", LOOKUP, 400, "bad_filter", "no such field", {});
            assert.match(
                refused.message,
                / with 400 \(bad_filter\): no such field \(the request's query: filter=hciClusterUuid eq '126f' and /,
            );
        });
    });

    describe("an unreachable API", () => {
        beforeEach(() => writeFile(join(project.dir, "Pulumi.yaml"), "name: p\nruntime: nodejs\n"));

        /** The error for `method url`, with Pulumi.dev.yaml holding `stackFile`. */
        async function unreachableWith(
            stackFile: string,
            method: string,
            url: string,
        ): Promise<TaskApiUnreachableError> {
            await writeFile(join(project.dir, "Pulumi.dev.yaml"), stackFile);
            return new TaskApiUnreachableError(method, url, 6, "fetch failed", taskApiSettingsIn(project.dir));
        }

        it("names the server and the request without the query, and says what to check", () => {
            const error = new TaskApiUnreachableError(
                "GET",
                `http://127.0.0.1:9${LOOKUP}`,
                6,
                "fetch failed: connect ECONNREFUSED 127.0.0.1:9",
                { url: "api.url" },
            );
            assert.equal(
                error.message,
                "could not reach the task API at http://127.0.0.1:9 for GET /virtualization/v1beta1/datastores after 6 attempts: " +
                    "fetch failed: connect ECONNREFUSED 127.0.0.1:9. Check that the server is running and that api.url points to it.",
            );
        });

        it("whose stored URL the stack's config files no longer name: says so, and what to run", async () => {
            const error = await unreachableWith(
                "config:\n  pulumi-lifecycle:taskApiUrl: http://new.example:8080\n  pulumi-lifecycle:taskApiToken:\n    secure: AAAB\n",
                "DELETE",
                "http://old.example:8080/virtualization/v1beta1/datastores/d1",
            );
            assert.match(
                error.message,
                /^could not reach the task API at http:\/\/old\.example:8080 for DELETE \/virtualization\/v1beta1\/datastores\/d1 after 6 attempts: fetch failed\. http:\/\/old\.example:8080 is the URL the last `pulumi up` stored, which `pulumi destroy` and `pulumi refresh` use \(Pulumi keeps a provider's config from its last up\), but Pulumi\.dev\.yaml now sets pulumi-lifecycle:taskApiUrl to http:\/\/new\.example:8080: run `pulumi destroy --run-program` \(or `pulumi refresh --run-program`\) to use today's config, or run a successful `pulumi up` first\.$/,
            );
        });

        it("whose URL the config files still name: only what to check; none naming it: also what destroy and refresh use", async () => {
            const same = await unreachableWith(
                'config:\n  pulumi-lifecycle:taskApiUrl: "http://same.example:1/"\n',
                "GET",
                "http://same.example:1/x",
            );
            assert.match(
                same.message,
                /fetch failed\. Check that the server is running and that stack config pulumi-lifecycle:taskApiUrl \(or TASK_API_URL\) points to it\.$/,
            );
            const elsewhere = await makeTempDir("guidance-empty-");
            try {
                const unknown = new TaskApiUnreachableError(
                    "GET",
                    "http://same.example:1/x",
                    1,
                    "r",
                    taskApiSettingsIn(elsewhere.dir),
                );
                assert.match(
                    unknown.message,
                    /points to it\. `pulumi destroy` and `pulumi refresh` use the URL the last `pulumi up` stored, .*`--run-program`/,
                );
            } finally {
                await elsewhere.cleanup();
            }
        });
    });

    describe("the stack config files", () => {
        it("reads the plain value of every stack's file, quoted or with a comment; not a secret; under stackConfigDir", async () => {
            await writeFile(
                join(project.dir, "Pulumi.yaml"),
                "name: p\nruntime: nodejs\nstackConfigDir: stacks # per stack\n",
            );
            await mkdir(join(project.dir, "stacks"));
            await writeFile(
                join(project.dir, "stacks", "Pulumi.dev.yaml"),
                "config:\n  pulumi-lifecycle:taskApiUrl: 'http://a:1' \n",
            );
            await writeFile(
                join(project.dir, "stacks", "Pulumi.prod.yaml"),
                "config:\n  pulumi-lifecycle:taskApiUrl: http://b:2 # prod\n",
            );
            await writeFile(
                join(project.dir, "stacks", "Pulumi.sec.yaml"),
                "config:\n  pulumi-lifecycle:taskApiUrl:\n    secure: v1:abc\n",
            );
            await writeFile(
                join(project.dir, "Pulumi.ignored.yaml"),
                "config:\n  pulumi-lifecycle:taskApiUrl: http://c:3\n",
            );
            assert.deepEqual(configuredValues(project.dir, "pulumi-lifecycle:taskApiUrl"), [
                { file: join("stacks", "Pulumi.dev.yaml"), value: "http://a:1" },
                { file: join("stacks", "Pulumi.prod.yaml"), value: "http://b:2" },
            ]);
        });

        it("cannot tell when the directory cannot be read", () => {
            assert.equal(configuredValues(join(project.dir, "missing"), "k"), undefined);
        });
    });
});
