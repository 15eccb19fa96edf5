// A test process's own temporary directories (makeProcessTempDir) are removed when it exits, even when
// it is killed as it exits: Mocha ends a parallel worker that has not exited within a second of being
// asked, and the compatibility suites' installs took longer than that to remove.

import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const PROJECTS = join(__dirname, "projects");
const REGISTER = join(__dirname, "..", "tools", "mocha", "register.js");

/** Runs `script` in a Node.js process that loads TypeScript as the tests do; resolves with what it printed. */
function runChild(script: string): Promise<{ stdout: string; signal: NodeJS.Signals | null }> {
    // Its own process group, so that it can kill the whole group (it and every child left in it).
    const child = spawn(process.execPath, ["-r", REGISTER, "-e", script], {
        detached: true,
        stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk) => {
        stdout += chunk;
    });
    return new Promise((resolve, reject) => {
        child.once("error", reject);
        child.once("exit", (_code, signal) => resolve({ stdout, signal }));
    });
}

/** Waits until none of `paths` exists; fails after `attempts` looks (20 ms apart) with those still there. */
async function untilGone(paths: readonly string[], attempts = 1_500): Promise<void> {
    for (let attempt = 0; attempt < attempts; attempt++) {
        if (paths.every((path) => !existsSync(path))) return;
        await sleep(20);
    }
    assert.deepEqual(
        paths.filter((path) => existsSync(path)),
        [],
    );
}

describe("a test process's temporary directories (makeProcessTempDir)", function () {
    this.timeout(60_000);

    it("are removed after it exits, even when its whole process group is killed as it exits", async () => {
        const { stdout, signal } = await runChild(`
            const { mkdirSync, writeFileSync } = require("node:fs");
            const { join } = require("node:path");
            const { makeProcessTempDir } = require(${JSON.stringify(PROJECTS)});
            const dirs = [makeProcessTempDir("pulumi-lifecycle-exit-test-"), makeProcessTempDir("pulumi-lifecycle-exit-test-")];
            for (const dir of dirs) {
                mkdirSync(join(dir, "node_modules", "a"), { recursive: true });
                writeFileSync(join(dir, "node_modules", "a", "index.js"), "module.exports = 1;\\n");
            }
            // Killed, with everything still in its group, as soon as the exit handlers before this one ran.
            process.once("exit", () => process.kill(-process.pid, "SIGKILL"));
            process.stdout.write(JSON.stringify(dirs), () => process.exit(0));
        `);
        assert.equal(signal, "SIGKILL", "the child was killed as it exited");
        const dirs = JSON.parse(stdout) as string[];
        assert.equal(dirs.length, 2);
        await untilGone(dirs);
    });
});
