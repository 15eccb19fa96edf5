// Guards what a user can do under the REAL Pulumi CLI to bring existing hosts lines under management:
// the engine's own import paths (the `import` resource option and `pulumi import`), which cannot run a
// dynamic provider today (the engine reads with only the id, no `__provider`: pulumi/pulumi#16175,
// #3550), and the paths this package offers instead: `adopt: true`, and the import helper's generated
// program, run as TypeScript. If the engine ever learns to import dynamic resources, the first two tests
// fail and the README's import guide must change with them.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { assertOk, CliProject } from "../support/cliProject";
import { fixture } from "../support/hostsFixtures";
import { REPO_ROOT } from "../support/projects";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";

const run = promisify(execFile);
const EXISTING = `${fixture("debian").toString("utf8")}10.0.0.5\tweb.internal web # frontend\n10.0.0.6\tapi.internal\n`;
/** What the engine says when a dynamic provider is called without its code. */
const NO_PROVIDER_CODE = /code must be a string, not undefined/;

describe("importing existing hosts lines under the real Pulumi CLI", function () {
    this.timeout(240_000);
    let cli: PulumiCli;
    let project: CliProject;
    let file: string;
    const text = () => readFile(file, "utf8");

    before(function () {
        cli = requirePulumiCli(this);
    });
    beforeEach(async () => {
        project = await CliProject.create(cli);
        file = join(project.dir, "hosts");
        await writeFile(file, EXISTING);
    });
    afterEach(() => project.cleanup());

    it("the `import` resource option fails in the engine: Read arrives without the provider's code", async () => {
        await project.program([
            {
                name: "web",
                args: { address: "10.0.0.5", names: ["web.internal", "web"], comment: "frontend", file },
                options: { import: "ipv4/web.internal" },
            },
        ]);
        const result = await project.up();
        assert.equal(result.ok, false);
        assert.deepEqual(result.steps, ["import web (failed)"]);
        assert.match(result.errors.join("\n"), NO_PROVIDER_CODE);
        assert.deepEqual((await project.state()).resources, []);
        assert.equal(await text(), EXISTING);
    });

    it("`pulumi import` fails the same way", async () => {
        const { child, done } = project.spawn([
            "import",
            "pulumi-nodejs:dynamic/hosts:HostEntry",
            "web",
            "ipv4/web.internal",
            "--yes",
            "--non-interactive",
        ]);
        assert.ok(child.pid);
        const { code, output } = await done;
        assert.notEqual(code, 0);
        assert.match(output, NO_PROVIDER_CODE);
        assert.deepEqual((await project.state()).resources, []);
        assert.equal(await text(), EXISTING);
    });

    it("the import helper's program adopts the lines: up writes nothing, preview then shows no change", async () => {
        const generated = await run(
            process.execPath,
            [join(REPO_ROOT, "dist", "cli", "main.js"), "hosts", "import", "--file", file, "--match", "\\.internal$"],
            { cwd: project.dir },
        );
        await writeFile(join(project.dir, "index.ts"), generated.stdout);
        await writeFile(join(project.dir, "Pulumi.yaml"), "name: cli-test\nruntime: nodejs\nmain: index.ts\n");
        const up = await project.up();
        assertOk(up);
        assert.deepEqual([...up.steps].sort(), ["create api.internal", "create web.internal"]);
        assert.equal(await text(), EXISTING, "adoption writes no byte");
        const preview = await project.preview();
        assertOk(preview);
        assert.deepEqual([...preview.steps].sort(), ["same api.internal", "same web.internal"]);
        const refreshed = await project.refresh();
        assertOk(refreshed);
        assert.equal(await text(), EXISTING);
    });
});
