// Guards `hosts import --stack` against what runs beside it, under the REAL Pulumi CLI with a local file
// backend: the helper never overwrites a state it did not read. A `pulumi up` that finishes between the
// helper's read and its import keeps its creates (the next up changes nothing, and does not fail on
// lines it wrote itself); an up that tries to start while the helper re-reads the state finds the stack
// locked; a second helper that finishes meanwhile keeps its entries, and two helpers at once take turns;
// a stack another operation holds is refused with nothing written; a helper killed during the import
// leaves no copy of the state anywhere. The races happen at exact points (a wrapper `pulumi` first on
// PATH, racingPulumi.ts), never by timing.

import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { hostname, userInfo } from "node:os";
import { join } from "node:path";
import { assertOk, CliProject, nameOf, type ResourceSpec } from "../support/cliProject";
import { REPO_ROOT } from "../support/projects";
import { type PulumiCli, requirePulumiCli } from "../support/pulumiCli";
import { RacingPulumi } from "../support/racingPulumi";

/** The helper under test; another build's can be named to show how these tests fail on it. */
const MAIN = process.env.PULUMI_LIFECYCLE_CLI_MAIN ?? join(REPO_ROOT, "dist", "cli", "main.js");
const IMPORTED_LINES = "10.0.0.5\tweb.internal web # frontend\n10.0.0.6\tapi.internal\n";
const OTHER_LINES = "10.0.0.7\tdb.internal\n10.0.0.8\tcache.internal\n";
const UP_CREATES = 7;

interface Run {
    code: number | null;
    stdout: string;
    stderr: string;
}

/** A running helper: its process, what it printed so far, and its end. */
interface RunningHelper {
    child: ChildProcess;
    stderr: () => string;
    done: Promise<Run>;
}

describe("hosts import --stack beside other writers of the stack, under the real Pulumi CLI", function () {
    this.timeout(300_000);
    let cli: PulumiCli;
    let project: CliProject;
    let hosts: string;
    let upHosts: string;

    before(function () {
        cli = requirePulumiCli(this);
    });

    beforeEach(async () => {
        project = await CliProject.create(cli);
        hosts = join(project.dir, "hosts");
        upHosts = join(project.dir, "hosts-up");
        await writeFile(hosts, IMPORTED_LINES);
        await writeFile(upHosts, "");
        await project.program(upEntries());
        // The helpers' TMPDIR (their private directory, where they meet) is the test's own.
        await mkdir(join(project.temp.dir, "tmp"));
    });
    /**
     * Processes a test started and has not seen end (helpers, paused imports), ended by their pid if a
     * failed test left them running.
     */
    const running = new Map<number, () => boolean>();
    afterEach(async () => {
        for (const [pid, alive] of running) {
            if (alive()) process.kill(pid, "SIGKILL");
        }
        running.clear();
        await project?.cleanup();
    });

    /** The program's own entries, which a `pulumi up` creates in hosts-up. */
    function upEntries(): ResourceSpec[] {
        return Array.from({ length: UP_CREATES }, (_, i) => ({
            name: `up${i + 1}`,
            args: { address: `10.1.0.${i + 1}`, names: [`up${i + 1}.internal`], file: upHosts },
        }));
    }

    /** The entries the helper imports from `file`, declared as its generated program declares them. */
    function imported(file: string): ResourceSpec[] {
        const declared = (address: string, names: string[], comment?: string): ResourceSpec => ({
            name: names[0] as string,
            args: { address, names, ...(comment ? { comment } : {}), file, adopt: true },
            options: { protect: true },
        });
        return file === hosts
            ? [declared("10.0.0.5", ["web.internal", "web"], "frontend"), declared("10.0.0.6", ["api.internal"])]
            : [declared("10.0.0.7", ["db.internal"]), declared("10.0.0.8", ["cache.internal"])];
    }

    function startHelper(file: string, env: Record<string, string> = {}): RunningHelper {
        const out = join(project.temp.dir, `program-${Math.random().toString(36).slice(2)}.ts`);
        const child = spawn(
            process.execPath,
            [MAIN, "hosts", "import", "--file", file, "--stack", "dev", "--out", out],
            {
                cwd: project.dir,
                env: { ...process.env, ...project.env, TMPDIR: join(project.temp.dir, "tmp"), ...env },
                stdio: ["ignore", "pipe", "pipe"],
            },
        );
        let stdout = "";
        let stderr = "";
        child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
            stdout += chunk;
        });
        child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
            stderr += chunk;
        });
        const done = once(child, "exit").then(([code]) => ({ code: code as number | null, stdout, stderr }));
        if (child.pid !== undefined) running.set(child.pid, () => child.exitCode === null && child.signalCode === null);
        return { child, stderr: () => stderr, done };
    }

    /** The helper command line, for a hook that runs a second helper. */
    function helperArgv(file: string): string[] {
        return [process.execPath, MAIN, "hosts", "import", "--file", file, "--stack", "dev", "--out", `${file}.ts`];
    }

    const upArgv = () => [cli.pulumi, "up", "--yes", "--skip-preview", "--non-interactive", "--stack", "dev"];

    async function wrapper(options: Parameters<typeof RacingPulumi.install>[2]): Promise<RacingPulumi> {
        const dir = join(project.temp.dir, `race-${Math.random().toString(36).slice(2)}`);
        return RacingPulumi.install(dir, cli.pulumi, options);
    }

    const through = (racing: RacingPulumi) => ({ PATH: `${racing.binDir}:${project.env.PATH}` });

    async function stateNames(): Promise<string[]> {
        return (await project.state()).resources.map((r) => nameOf(r.urn)).sort();
    }

    /** The program with these resources: its preview and up must change nothing. */
    async function assertUnchangedWith(resources: ResourceSpec[]): Promise<void> {
        await project.program(resources);
        const preview = await project.preview();
        assertOk(preview);
        assert.deepEqual(
            preview.steps.filter((step) => !step.startsWith("same ")),
            [],
            "the program's preview shows no change",
        );
        const up = await project.up();
        assertOk(up);
        assert.deepEqual(
            up.steps.filter((step) => !step.startsWith("same ")),
            [],
            "the up changes nothing (no create failing on its own lines)",
        );
    }

    it("a `pulumi up` finishing between the helper's read and its import keeps its 7 creates; the next up changes nothing", async () => {
        const racing = await wrapper({ hook: { after: 1, argv: upArgv() } });
        const helper = await startHelper(hosts, through(racing)).done;

        const up = await racing.hookResult();
        assert.equal(up?.status, 0, `the racing up ran and succeeded:\n${up?.stderr}`);
        assert.equal((await readFile(upHosts, "utf8")).split("\n").filter(Boolean).length, UP_CREATES);
        assert.deepEqual(await stateNames(), ["api.internal", ...upEntries().map((r) => r.name), "web.internal"]);
        assert.equal(helper.code, 0, helper.stderr);
        assert.match(helper.stderr, /stack dev changed after it was read .*computed again from its new state/);
        await assertUnchangedWith([...upEntries(), ...imported(hosts)]);
    });

    it("a `pulumi up` starting while the helper re-reads the state finds the stack locked, and runs after it", async () => {
        // The second export is the helper's last read before its import, made while it holds the lock.
        const racing = await wrapper({ hook: { after: 2, argv: upArgv() } });
        const helper = await startHelper(hosts, through(racing)).done;

        const up = await racing.hookResult();
        assert.ok(up, "the helper read the state again before importing");
        assert.notEqual(up.status, 0, "the up could not start");
        assert.match(up.stdout + up.stderr, /the stack is currently locked by 1 lock\(s\)/);
        assert.match(up.stdout + up.stderr, /pulumi-lifecycle-[0-9a-f-]+\.json(\?[^:]*)?: created by .*\(pid \d+\)/);
        assert.equal(await readFile(upHosts, "utf8"), "", "the refused up wrote nothing");
        assert.equal(helper.code, 0, helper.stderr);
        assert.deepEqual(await stateNames(), ["api.internal", "web.internal"]);

        await project.program([...upEntries(), ...imported(hosts)]);
        const after = await project.up();
        assertOk(after);
        assert.equal(
            after.steps.filter((step) => step.startsWith("create ")).length,
            UP_CREATES,
            "the lock was released",
        );
        await assertUnchangedWith([...upEntries(), ...imported(hosts)]);
    });

    it("a second helper finishing between the first one's read and import: both keep their entries", async () => {
        const others = join(project.dir, "hosts-other");
        await writeFile(others, OTHER_LINES);
        await project.program([]);
        const racing = await wrapper({ hook: { after: 1, argv: helperArgv(others) } });
        const first = await startHelper(hosts, through(racing)).done;

        const second = await racing.hookResult();
        assert.equal(second?.status, 0, second?.stderr);
        assert.match(String(second?.stderr), /added 2 resources to stack dev/);
        assert.equal(first.code, 0, first.stderr);
        assert.match(first.stderr, /added 2 resources to stack dev/);
        assert.deepEqual(await stateNames(), ["api.internal", "cache.internal", "db.internal", "web.internal"]);
        await assertUnchangedWith([...imported(hosts), ...imported(others)]);
    });

    it("two helpers at once on one machine take turns: the second waits for the first, then adds to its state", async () => {
        const others = join(project.dir, "hosts-other");
        await writeFile(others, OTHER_LINES);
        await project.program([]);
        const racing = await wrapper({ pauseImports: true });
        const first = startHelper(hosts, through(racing));
        const pausedPid = await racing.paused();
        running.set(pausedPid, () => true);
        // The first helper is inside its import; the second starts now, without the wrapper.
        const second = startHelper(others);
        const waited = await new Promise<boolean>((resolve) => {
            const check = () => {
                if (/waiting for another `pulumi-lifecycle hosts import --stack dev` to finish/.test(second.stderr())) {
                    resolve(true);
                }
            };
            second.child.stderr?.on("data", check);
            void second.done.then(() => resolve(false));
        });
        assert.ok(waited, `the second helper waited for the first:\n${second.stderr()}`);
        await racing.resume();
        running.delete(pausedPid);

        const [a, b] = await Promise.all([first.done, second.done]);
        assert.equal(a.code, 0, a.stderr);
        assert.equal(b.code, 0, b.stderr);
        assert.match(b.stderr, /stack dev changed after it was read/);
        assert.deepEqual(await stateNames(), ["api.internal", "cache.internal", "db.internal", "web.internal"]);
        await assertUnchangedWith([...imported(hosts), ...imported(others)]);
    });

    it("a stack that a Pulumi operation holds is refused, naming the lock, with nothing written", async () => {
        // The lock a running `pulumi up` holds, as the CLI writes it.
        const locks = join(project.temp.dir, "backend", ".pulumi", "locks", "organization", "cli-test", "dev");
        await mkdir(locks, { recursive: true });
        const content = {
            pid: process.pid,
            username: userInfo().username,
            hostname: hostname(),
            timestamp: new Date().toISOString(),
        };
        await writeFile(join(locks, "0b7a3a53-2b27-4f7e-a0a4-6f9f4a1c0f11.json"), JSON.stringify(content));
        const out = join(project.temp.dir, "locked.ts");
        const refused = await new Promise<Run>((resolve) => {
            const child = spawn(process.execPath, [MAIN, "hosts", "import", "-f", hosts, "--stack", "dev", "-o", out], {
                cwd: project.dir,
                env: { ...process.env, ...project.env, TMPDIR: join(project.temp.dir, "tmp") },
            });
            let stderr = "";
            child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
                stderr += chunk;
            });
            child.on("exit", (code) => resolve({ code, stdout: "", stderr }));
        });
        assert.equal(refused.code, 1);
        assert.match(
            refused.stderr,
            new RegExp(
                `stack dev is locked by another Pulumi operation \\(.*0b7a3a53-2b27-4f7e-a0a4-6f9f4a1c0f11\\.json, ` +
                    `taken by .*\\(pid ${process.pid}\\).*\\); nothing was written\\. .*\`pulumi cancel\` removes the lock`,
            ),
        );
        await assert.rejects(readFile(out), { code: "ENOENT" }, "no program written");
        assert.deepEqual(await readdir(locks), ["0b7a3a53-2b27-4f7e-a0a4-6f9f4a1c0f11.json"], "the holder's lock kept");
        assert.deepEqual(await stateNames(), []);
    });

    it("a helper killed (SIGKILL) during the import leaves no copy of the state, no lock, and the state as it was", async () => {
        const tmp = join(project.temp.dir, "tmp");
        const racing = await wrapper({ pauseImports: true });
        const helper = startHelper(hosts, { ...through(racing), TMPDIR: tmp });
        const importPid = await racing.paused();
        running.set(importPid, () => true);
        helper.child.kill("SIGKILL");
        await helper.done;

        const copies: string[] = [];
        for (const entry of await readdir(tmp, { recursive: true, withFileTypes: true })) {
            if (!entry.isFile()) continue;
            const path = join(entry.parentPath, entry.name);
            if ((await readFile(path, "utf8")).includes("urn:pulumi:")) copies.push(path);
        }
        assert.deepEqual(copies, [], "no file in TMPDIR (the private directory included) holds the state");
        // The import never reaches the real CLI.
        process.kill(importPid, "SIGKILL");
        running.delete(importPid);
        assert.deepEqual(await stateNames(), []);
        const locks = join(project.temp.dir, "backend", ".pulumi", "locks", "organization", "cli-test", "dev");
        assert.deepEqual(await readdir(locks).catch(() => []), [], "no stack lock left behind");
        const up = await project.up();
        assertOk(up);
        assert.equal(up.steps.length, UP_CREATES);
    });
});
