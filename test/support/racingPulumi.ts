// A `pulumi` to put first on PATH for the import helper, which runs the real CLI for everything and
// makes races happen at exact points, without sleeps:
// - after the n-th real `pulumi stack export` (counted across every process using it), it runs a
//   command to its end (a real `pulumi up`, a second helper) before printing that export, which is then
//   the state as it was before the command ran;
// - on `pulumi stack import`, it reads the deployment from its standard input (unless --file is given),
//   announces itself on a FIFO (its pid), and waits until the test writes to a second FIFO, then hands
//   the deployment to the real import.
// Everything it does is configured by race.json beside it and recorded in files the test reads.

import { execFileSync } from "node:child_process";
import { createReadStream } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** A command the wrapper runs after an export. */
export interface ExportHook {
    /** Which export (1 = the first any process made through the wrapper). */
    readonly after: number;
    readonly argv: readonly string[];
    readonly env?: Record<string, string>;
}

/** What the hook's command did. */
export interface HookResult {
    readonly status: number | null;
    readonly stdout: string;
    readonly stderr: string;
}

const SCRIPT = `
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const config = JSON.parse(fs.readFileSync(path.join(__dirname, "race.json"), "utf8"));
const args = process.argv.slice(2);
const is = (a, b) => args[0] === a && args[1] === b;
const real = (input) => {
    const run = spawnSync(config.real, args, {
        stdio: [input === undefined ? "inherit" : "pipe", "inherit", "inherit"],
        input,
        maxBuffer: 1 << 30,
    });
    process.exit(run.status === null ? 1 : run.status);
};
const count = (kind) => {
    for (let n = 1; ; n++) {
        try {
            fs.writeFileSync(path.join(config.state, kind + "-" + n), String(process.pid), { flag: "wx" });
            return n;
        } catch (error) {
            if (error.code !== "EEXIST") throw error;
        }
    }
};
if (is("stack", "export") && config.hook && count("export") === config.hook.after) {
    const exported = spawnSync(config.real, args, { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 30 });
    if (exported.status !== 0) process.exit(exported.status === null ? 1 : exported.status);
    const hook = spawnSync(config.hook.argv[0], config.hook.argv.slice(1), {
        env: { ...process.env, ...config.hook.env },
        encoding: "utf8",
        maxBuffer: 1 << 30,
    });
    fs.writeFileSync(path.join(config.state, "hook.json"), JSON.stringify({ status: hook.status, stdout: hook.stdout, stderr: hook.stderr }));
    process.stdout.write(exported.stdout);
    process.exit(0);
}
if (is("stack", "import") && config.pause) {
    const input = args.includes("--file") ? undefined : fs.readFileSync(0);
    fs.writeFileSync(config.pause.paused, process.pid + "\\n");
    fs.readFileSync(config.pause.resume);
    real(input);
}
real(undefined);
`;

/** The wrapper, installed in a directory of its own. */
export class RacingPulumi {
    private constructor(
        /** The directory to put first on PATH. */
        readonly binDir: string,
        private readonly stateDir: string,
        private readonly pause: { paused: string; resume: string } | undefined,
    ) {}

    /**
     * Installs the wrapper in `dir` around the real CLI `real`. `hook` runs a command after an export;
     * `pauseImports` makes every `stack import` wait for `resume()`.
     */
    static async install(
        dir: string,
        real: string,
        options: { hook?: ExportHook; pauseImports?: boolean } = {},
    ): Promise<RacingPulumi> {
        const binDir = join(dir, "bin");
        const stateDir = join(dir, "state");
        await mkdir(binDir, { recursive: true });
        await mkdir(stateDir, { recursive: true });
        let pause: { paused: string; resume: string } | undefined;
        if (options.pauseImports) {
            pause = { paused: join(dir, "paused.fifo"), resume: join(dir, "resume.fifo") };
            execFileSync("mkfifo", [pause.paused, pause.resume]);
        }
        await writeFile(
            join(binDir, "race.json"),
            JSON.stringify({ real, state: stateDir, ...(options.hook ? { hook: options.hook } : {}), pause }),
        );
        await writeFile(join(binDir, "pulumi"), `#!${process.execPath}\n${SCRIPT}`);
        await chmod(join(binDir, "pulumi"), 0o755);
        return new RacingPulumi(binDir, stateDir, pause);
    }

    /** What the hook's command did, or undefined when it never ran. */
    async hookResult(): Promise<HookResult | undefined> {
        const text = await readFile(join(this.stateDir, "hook.json"), "utf8").catch(() => undefined);
        return text === undefined ? undefined : (JSON.parse(text) as HookResult);
    }

    /** Resolves with the pid of the first `stack import` that paused. */
    paused(): Promise<number> {
        const fifo = this.pauseFifos().paused;
        return new Promise((resolve, reject) => {
            let text = "";
            createReadStream(fifo, "utf8")
                .on("data", (chunk) => {
                    text += chunk;
                })
                .on("end", () => resolve(Number.parseInt(text, 10)))
                .on("error", reject);
        });
    }

    /** Lets the paused `stack import` go on to the real CLI. */
    async resume(): Promise<void> {
        await writeFile(this.pauseFifos().resume, "go\n");
    }

    private pauseFifos(): { paused: string; resume: string } {
        if (!this.pause) throw new Error("the wrapper was installed without pauseImports");
        return this.pause;
    }
}
