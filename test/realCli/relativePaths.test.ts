// What a RELATIVE `file` of hosts.HostEntry resolves against, under the REAL Pulumi CLI, when Pulumi.yaml's
// `main` points away from the project directory (the directory holding Pulumi.yaml).
//
// The engine decides it, not the language host: it runs the program with --pwd = the program directory
// (pkg/engine/project.go getPwdMain: the project directory; the directory `main` names; or, when `main`
// is a file, the directory holding it), and it starts every plugin, the dynamic provider among them, in
// that same directory (plugin.Context.Pwd, pkg/resource/plugin/provider_plugin.go; pulumi v3.259.0).
// The `file` input is stored as given and resolved by the provider process, so a relative path lands in
// the program directory, which is also the program's process.cwd(). The official host passes the same
// --pwd as ours (constructArguments in sdk/nodejs/cmd/pulumi-language-nodejs/main.go), so what this
// suite sees holds for users. Destroy and refresh start the provider in the same directory without
// running the program.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { assertOk, CliProject } from "../support/cliProject";
import { makeTempDir, type TempDir } from "../support/projects";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { writeNodeProject } from "./nodeProject";

const LINE = "10.1.2.3\trel.internal\n";

const PROGRAM = `const { hosts } = require("pulumi-lifecycle");
const entry = new hosts.HostEntry("rel", { address: "10.1.2.3", names: ["rel.internal"], file: "rel.hosts" });
module.exports = { programCwd: process.cwd(), file: entry.file };
`;

/** A project in `<temp>/project` whose program is `programPath`, with Pulumi.yaml's `main` (none if undefined). */
async function makeLayout(temp: TempDir, programPath: string, main: string | undefined): Promise<string> {
    const dir = join(temp.dir, "project");
    const mainLine = main === undefined ? "" : `main: ${main}\n`;
    await writeNodeProject(dir, {
        "Pulumi.yaml": `name: rel-paths\nruntime: nodejs\n${mainLine}`,
        "package.json": JSON.stringify({ name: "rel-paths", private: true }),
        [programPath]: PROGRAM,
    });
    return dir;
}

describe("a relative HostEntry `file` under the real Pulumi CLI", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let temp: TempDir;
    let project: CliProject | undefined;

    before(function () {
        cli = requirePulumiCli(this);
    });
    beforeEach(async () => {
        temp = await makeTempDir("pulumi-lifecycle-relpaths-");
    });
    afterEach(async () => {
        await project?.cleanup();
        project = undefined;
        await temp.cleanup();
    });

    /** Up, then refresh and destroy (which start the provider without the program), checking each. */
    async function lifecycleIn(dir: string, expectedDir: string): Promise<void> {
        project = await CliProject.open(cli, dir);
        const up = await project.up();
        assertOk(up);
        assert.deepEqual(up.steps, ["create rel"]);
        const outputs = await project.outputs();
        assert.equal(outputs.programCwd, expectedDir, "the program's working directory");
        assert.equal(outputs.file, "rel.hosts", "the output keeps the path as given");
        const [entry] = (await project.state()).resources;
        assert.equal(entry?.inputs?.file, "rel.hosts", "the input is stored as given, not resolved");
        assert.equal(await readFile(join(expectedDir, "rel.hosts"), "utf8"), LINE);
        if (expectedDir !== dir) assert.equal(existsSync(join(dir, "rel.hosts")), false, "nothing in the project dir");

        const refreshed = await project.refresh();
        assertOk(refreshed);
        assert.deepEqual(refreshed.steps, ["refresh rel"]);
        assert.equal((await project.state()).resources.length, 1, "refresh found the line where create wrote it");

        assertOk(await project.destroy());
        assert.equal(await readFile(join(expectedDir, "rel.hosts"), "utf8"), "", "destroy removed the line there");
    }

    it("main: src/ — the line lands in src/ (the program directory), where the program's cwd is", async () => {
        const dir = await makeLayout(temp, "src/index.js", "src/");
        await lifecycleIn(dir, join(dir, "src"));
    });

    it("main: src/index.js — a `main` file: the directory holding it", async () => {
        const dir = await makeLayout(temp, "src/index.js", "src/index.js");
        await lifecycleIn(dir, join(dir, "src"));
    });

    it("no main — the project directory (where Pulumi.yaml is)", async () => {
        const dir = await makeLayout(temp, "index.js", undefined);
        await lifecycleIn(dir, dir);
    });

    it("the shell's working directory does not matter: `pulumi -C <project> up` from elsewhere", async () => {
        const dir = await makeLayout(temp, "src/index.js", "src/");
        project = await CliProject.open(cli, dir);
        const elsewhere = join(temp.dir, "elsewhere");
        await mkdir(elsewhere);
        await promisify(execFile)(
            cli.pulumi,
            ["-C", dir, "up", "--yes", "--skip-preview", "--non-interactive", "-s", project.stack.name],
            { cwd: elsewhere, env: { ...process.env, ...project.env } },
        );
        assert.equal(await readFile(join(dir, "src", "rel.hosts"), "utf8"), LINE);
        assert.equal(existsSync(join(elsewhere, "rel.hosts")), false);
        assert.equal((await project.outputs()).programCwd, join(dir, "src"));
        assertOk(await project.destroy());
    });
});
