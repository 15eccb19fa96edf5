// Guards the examples under the real Pulumi CLI, through the Automation API on a local file backend:
// up, refresh, up with no change, a config change, destroy, against a temporary hosts file. Needs the
// `pulumi` CLI on PATH; without it every test here skips, saying so (the harness suites cover the same
// flows without the CLI).

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { makeTempDir, REPO_ROOT, type TempDir } from "./support/projects";
import { skipBecause } from "./support/system";

const CLI_MISSING = spawnSync("pulumi", ["version"], { stdio: "ignore" }).error !== undefined;
const BASE = "127.0.0.1\tlocalhost\n";

describe("examples/hosts under the real Pulumi CLI (Automation API, local file backend)", function () {
    this.timeout(300_000);
    let temp: TempDir;
    let file: string;
    let stack: Stack;

    before(async function () {
        if (CLI_MISSING)
            skipBecause(this, "the Pulumi CLI is not on PATH (install: curl -fsSL https://get.pulumi.com | sh)");
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
        await writeFile(file, BASE);
        stack = await LocalWorkspace.createOrSelectStack(
            { stackName: "dev", workDir: join(REPO_ROOT, "examples", "hosts") },
            { envVars: { PULUMI_BACKEND_URL: `file://${temp.dir}`, PULUMI_CONFIG_PASSPHRASE: "" } },
        );
        await stack.setConfig("pulumi-lifecycle:hostsFile", { value: file });
    });
    after(async () => {
        if (CLI_MISSING) return;
        await stack.workspace.removeStack("dev", { force: true }).catch(() => undefined);
        await temp.cleanup();
    });

    it("up creates the three entries", async () => {
        const result = await stack.up();
        assert.deepEqual(result.summary.resourceChanges, { create: 4 }, "three entries and the stack");
        assert.deepEqual(result.outputs.ids?.value, ["ipv4/web.internal", "ipv4/api.internal", "ipv6/api.internal"]);
        const text = await readFile(file, "utf8");
        assert.ok(text.startsWith(BASE));
        assert.equal(text.split("\n").filter(Boolean).length, 4);
    });

    it("refresh keeps them and up again changes nothing", async () => {
        await stack.refresh();
        const result = await stack.up();
        assert.deepEqual(result.summary.resourceChanges, { same: 4 });
    });

    it("a config change updates the api entry in place", async () => {
        await stack.setConfig("apiAddress", { value: "10.0.0.7" });
        const result = await stack.up();
        assert.deepEqual(result.summary.resourceChanges, { same: 3, update: 1 });
        assert.match(await readFile(file, "utf8"), /^10\.0\.0\.7\tapi\.internal api$/m);
    });

    it("destroy leaves the file as it was", async () => {
        await stack.destroy();
        assert.equal(await readFile(file, "utf8"), BASE);
    });
});
