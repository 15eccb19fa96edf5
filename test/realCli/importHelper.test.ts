// Guards the import helper's whole flow under the REAL Pulumi CLI, on hosts files shaped like those of
// Debian, macOS, Windows and a Docker container, each with a few lines a user added: the generated
// program (as printed, run as TypeScript) takes over exactly the user's lines, protected, leaving the
// operating system's lines alone; `up` writes no byte and `preview` then shows no change. On the Debian
// one the life goes on: refresh keeps them, a comment edited in the program rewrites only its line,
// destroy refuses while they are protected, and once unprotected removes exactly the imported lines.
// With --stack (a stack with a secret in its config and its own backend directory), the helper records
// the entries in the state as a create would have: the program's first preview and up show no change;
// importing again, or a file that changes meanwhile, is refused with nothing written; --dry-run
// changes nothing; a stack of another project, or a state holding another project's resources, is
// refused. (Races with other writers of the stack: importHelperRaces.test.ts.)

import { strict as assert } from "node:assert";
import { execFile, spawn } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { assertOk, CliProject, type StackOptions } from "../support/cliProject";
import { type FixtureName, fixture } from "../support/hostsFixtures";
import { REPO_ROOT } from "../support/projects";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";

const run = promisify(execFile);
/** The helper under test; another build's can be named to show how these tests fail on it. */
const MAIN = process.env.PULUMI_LIFECYCLE_CLI_MAIN ?? join(REPO_ROOT, "dist", "cli", "main.js");
const USER_LINES = "10.0.0.5\tweb.internal web # frontend\n10.0.0.6\tapi.internal\nfd00::5\tweb.internal\n";
const IMPORTED = ["create api.internal", "create web.internal", "create web.internal-ipv6"];
/** The same entries, unchanged. */
const UNCHANGED = IMPORTED.map((step) => step.replace("create", "same"));

/** The fixture as that system has it, with the user's lines added (Docker names the container's host). */
function hostsFile(name: FixtureName): string {
    let text = fixture(name).toString("latin1");
    if (name === "docker") text = text.replace("3f4e5d6c7b8a", hostname());
    const ending = text.includes("\r\n") ? "\r\n" : "\n";
    return `${text}${USER_LINES.replaceAll("\n", ending)}`;
}

describe("the import helper under the real Pulumi CLI", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let project: CliProject;
    let file: string;
    const text = () => readFile(file, "latin1");

    before(function () {
        cli = requirePulumiCli(this);
    });
    afterEach(() => project?.cleanup());

    /** A project whose program is index.ts, beside the hosts file `name`; resolves with the file's text. */
    async function setUp(name: FixtureName, stackOptions: StackOptions = {}): Promise<string> {
        project = await CliProject.create(cli, stackOptions);
        file = join(project.dir, "hosts");
        const before = hostsFile(name);
        await writeFile(file, before, "latin1");
        await writeFile(join(project.dir, "Pulumi.yaml"), "name: cli-test\nruntime: nodejs\nmain: index.ts\n");
        return before;
    }

    /** Runs the helper in the project with the stack's environment; resolves with its exit and output. */
    async function helper(
        args: string[],
        env: Record<string, string> = {},
    ): Promise<{ code: number; stdout: string; stderr: string }> {
        return run(process.execPath, [MAIN, "hosts", "import", ...args], {
            cwd: project.dir,
            // Its own TMPDIR: the helper's private directory, and no sweep of the machine's.
            env: { ...process.env, ...project.env, TMPDIR: project.temp.dir, ...env },
        }).then(
            ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
            (error: { code: number; stdout: string; stderr: string }) => error,
        );
    }

    /** Runs `hosts import` in the project and makes its output the program. */
    async function generate(): Promise<string> {
        const generated = await helper(["--file", file]);
        assert.equal(generated.code, 0, generated.stderr);
        await writeFile(join(project.dir, "index.ts"), generated.stdout);
        return generated.stdout;
    }

    for (const name of ["debian", "macos", "windows", "docker"] as const) {
        it(`takes over only the user's lines of a ${name} hosts file: up writes no byte, preview shows no change`, async () => {
            const before = await setUp(name);
            const program = await generate();
            assert.match(program, /\{ protect: true \}/);
            const up = await project.up();
            assertOk(up);
            assert.deepEqual([...up.steps].sort(), IMPORTED, "the system's lines are left alone");
            assert.equal(await text(), before, "adoption writes no byte");
            const preview = await project.preview();
            assertOk(preview);
            assert.deepEqual([...preview.steps].sort(), UNCHANGED);
            const state = await project.state();
            assert.equal(
                state.resources.filter((r) => r.protect === true).length,
                3,
                "every imported entry is protected in the state",
            );
            assert.deepEqual((await project.outputs()).ids, {
                apiInternal: "ipv4/api.internal",
                webInternal: "ipv4/web.internal",
                webInternalIpv6: "ipv6/web.internal",
            });
        });
    }

    it("--stack records the entries as a create would: the first preview and up of the program change nothing", async () => {
        const before = await setUp("debian", { secrets: { "cli-test:apiKey": "s3cret-value" } });

        const dry = await helper(["--file", file, "--stack", "dev", "--dry-run"]);
        assert.equal(dry.code, 0, dry.stderr);
        assert.match(dry.stderr, /would add 3 resources to stack dev, protected:\n {2}urn:pulumi:dev::cli-test::/);
        assert.match(dry.stdout, /new hosts\.HostEntry\(/);
        assert.deepEqual((await project.state()).resources, [], "a dry run changes nothing");

        const imported = await helper(["--file", file, "--stack", "dev", "--out", "index.ts"]);
        assert.equal(imported.code, 0, imported.stderr);
        assert.match(imported.stderr, /added 3 resources to stack dev, protected/);
        const state = await project.state();
        assert.deepEqual(state.resources.map((r) => r.id).sort(), [
            "ipv4/api.internal",
            "ipv4/web.internal",
            "ipv6/web.internal",
        ]);
        assert.ok(state.resources.every((r) => r.protect === true));

        const preview = await project.preview();
        assertOk(preview);
        assert.deepEqual([...preview.steps].sort(), UNCHANGED);
        const up = await project.up();
        assertOk(up);
        assert.deepEqual([...up.steps].sort(), UNCHANGED);
        assert.equal(await text(), before, "not a byte written");
        assert.ok(!(await project.storedState()).includes("s3cret-value"), "the secret config stays encrypted");

        const again = await helper(["--file", file, "--stack", "dev", "--out", "again.ts"]);
        assert.equal(again.code, 1);
        assert.match(again.stderr, /line \d+ \(ipv4\/web\.internal\) is already managed in stack dev as urn:/);
    });

    it("--stack refuses, writing nothing, when the hosts file changes while it imports", async () => {
        await setUp("debian");
        // Another program edits the file while the helper exports the stack.
        const shims = join(project.temp.dir, "shims");
        await mkdir(shims);
        await writeFile(
            join(shims, "pulumi"),
            `#!/bin/sh\nprintf '10.9.9.9\\tlate.internal\\n' >> ${JSON.stringify(file)}\nexec ${JSON.stringify(cli.pulumi)} "$@"\n`,
        );
        await chmod(join(shims, "pulumi"), 0o755);
        const refused = await helper(["--file", file, "--stack", "dev", "--out", "index.ts"], {
            PATH: `${shims}:${project.env.PATH}`,
        });
        assert.equal(refused.code, 1);
        assert.match(
            refused.stderr,
            /changed while it was being imported; nothing was imported\. Run the command again/,
        );
        assert.deepEqual((await project.state()).resources, []);
        await assert.rejects(readFile(join(project.dir, "index.ts")), { code: "ENOENT" }, "no program written");
    });

    /** Runs the real CLI in `dir` with the stack's environment; `input` goes to its stdin. */
    function pulumiIn(dir: string, args: string[], input?: string): Promise<{ code: number | null; output: string }> {
        return new Promise((resolve) => {
            const child = spawn(cli.pulumi, args, { cwd: dir, env: { ...process.env, ...project.env } });
            let output = "";
            for (const stream of [child.stdout, child.stderr]) {
                stream.setEncoding("utf8").on("data", (chunk: string) => {
                    output += chunk;
                });
            }
            child.stdin.end(input ?? "");
            child.on("close", (code) => resolve({ code, output }));
        });
    }

    async function resourcesOf(dir: string, stack: string): Promise<unknown[]> {
        const exported = await pulumiIn(dir, ["stack", "export", "--stack", stack]);
        assert.equal(exported.code, 0, exported.output);
        return (JSON.parse(exported.output) as { deployment: { resources?: unknown[] } }).deployment.resources ?? [];
    }

    it("--stack refuses a stack of another project, and a state that belongs to another project, writing nothing", async () => {
        await setUp("debian");
        const other = join(project.temp.dir, "otherproj");
        await mkdir(other);
        await writeFile(join(other, "Pulumi.yaml"), "name: otherproj\nruntime: nodejs\n");
        const init = await pulumiIn(other, ["stack", "init", "organization/otherproj/x"]);
        assert.equal(init.code, 0, init.output);

        const foreign = await helper(["--file", file, "--stack", "organization/otherproj/x", "--out", "index.ts"]);
        assert.equal(foreign.code, 1, foreign.stderr);
        assert.match(
            foreign.stderr,
            /--stack organization\/otherproj\/x is a stack of project "otherproj", and the command runs in project "cli-test" \(Pulumi\.yaml in .*\); nothing was imported\. Run the command in the directory of project "otherproj", or name a stack of "cli-test"\./,
        );
        assert.deepEqual(
            await resourcesOf(other, "organization/otherproj/x"),
            [],
            "the other project's stack untouched",
        );
        await assert.rejects(readFile(join(project.dir, "index.ts")), { code: "ENOENT" }, "no program written");

        // A stack of this project whose state holds another project's Stack root (as the helper used to
        // leave one): refused from what the state holds.
        assert.equal((await pulumiIn(project.dir, ["stack", "init", "odd"])).code, 0);
        const root = "urn:pulumi:odd::otherproj::pulumi:pulumi:Stack::otherproj-odd";
        const exported = JSON.parse((await pulumiIn(project.dir, ["stack", "export", "--stack", "odd"])).output);
        exported.deployment.resources = [{ urn: root, custom: false, type: "pulumi:pulumi:Stack" }];
        const planted = await pulumiIn(project.dir, ["stack", "import", "--stack", "odd"], JSON.stringify(exported));
        assert.equal(planted.code, 0, planted.output);
        const mixed = await helper(["--file", file, "--stack", "odd", "--out", "index.ts"]);
        assert.equal(mixed.code, 1, mixed.stderr);
        assert.match(
            mixed.stderr,
            /the state of stack odd belongs to project "otherproj" \(urn:pulumi:odd::otherproj::pulumi:pulumi:Stack::otherproj-odd\), and this is project "cli-test"; nothing was imported\. Run the command in the directory of project "otherproj"/,
        );
        assert.deepEqual(
            (await resourcesOf(project.dir, "odd")).map((r) => (r as { urn: string }).urn),
            [root],
            "the odd stack's state untouched",
        );
        await assert.rejects(readFile(join(project.dir, "index.ts")), { code: "ENOENT" }, "no program written");
        await pulumiIn(project.dir, ["stack", "rm", "--yes", "--force", "odd"]);
    });

    it("lives on: refresh keeps them, a comment edit rewrites one line, destroy refuses until unprotected", async () => {
        const before = await setUp("debian");
        const program = await generate();
        assertOk(await project.up());

        assertOk(await project.refresh());
        assert.equal(await text(), before, "refresh writes nothing");
        assert.equal((await project.state()).resources.length, 3);

        await writeFile(
            join(project.dir, "index.ts"),
            program.replace('comment: "frontend"', 'comment: "public site"'),
        );
        const edited = await project.up();
        assertOk(edited);
        assert.deepEqual(
            edited.steps.filter((step) => !step.startsWith("same")),
            ["update web.internal"],
        );
        const afterEdit = before.replace("web # frontend", "web # public site");
        assert.equal(await text(), afterEdit, "only that line changed");

        const refused = await project.destroy();
        assert.equal(refused.ok, false);
        assert.match(refused.errors.join("\n") + refused.stderr, /protected/);
        assert.equal(await text(), afterEdit, "a refused destroy writes nothing");

        const unprotected = (await readFile(join(project.dir, "index.ts"), "utf8")).replaceAll(
            "    { protect: true },\n",
            "",
        );
        await writeFile(join(project.dir, "index.ts"), unprotected);
        assertOk(await project.up());
        assert.equal(await text(), afterEdit, "removing the protection writes nothing");
        assertOk(await project.destroy());
        assert.equal(await text(), fixture("debian").toString("utf8"), "exactly the imported lines are gone");
    });
});
