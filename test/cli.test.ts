// Guards the `pulumi-lifecycle` command line as users run it: the built dist/cli/main.js in its own
// process. `hosts import` prints the program on stdout and a summary on stderr; failures are one line
// on stderr with exit code 1 (cannot do the work) or 2 (used wrongly); --help and --version.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HostsDocument } from "../provider/hosts/logic/hostsDocument";
import { planImport, renderImportProgram } from "../provider/hosts/logic/importer";
import { runProgram, typeErrors } from "./support/generatedProgram";
import { makeTempDir, REPO_ROOT, type TempDir } from "./support/projects";

const MAIN = join(REPO_ROOT, "dist", "cli", "main.js");

/** Root reads any file; a permission check then runs the command as `nobody`. */
const isRoot = process.getuid?.() === 0;
const NOBODY = { uid: 65534, gid: 65534 };

const HOSTS = [
    "127.0.0.1\tlocalhost",
    "127.0.1.1\tdebian.example.org\tdebian",
    "10.0.0.1 web.internal # old",
    "10.0.0.2 web.internal # new",
    "",
    "::1     localhost ip6-localhost ip6-loopback",
    "ff02::1 ip6-allnodes",
    "ff02::2 ip6-allrouters",
    "",
].join("\n");

interface Run {
    code: number;
    stdout: string;
    stderr: string;
}

function run(
    args: string[],
    options: { env?: NodeJS.ProcessEnv; asNobody?: boolean; cwd?: string } = {},
): Promise<Run> {
    const env = { ...process.env, ...options.env };
    if (options.env && "HOSTS_FILE" in options.env && options.env.HOSTS_FILE === undefined) delete env.HOSTS_FILE;
    return new Promise((resolve) => {
        execFile(
            process.execPath,
            [MAIN, ...args],
            {
                env,
                encoding: "utf8",
                ...(options.asNobody ? NOBODY : {}),
                ...(options.cwd ? { cwd: options.cwd } : {}),
            },
            (error, stdout, stderr) => {
                const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
                resolve({ code, stdout, stderr });
            },
        );
    });
}

/** A one-line message on stderr: no stack trace, no second line. */
function assertOneLine(stderr: string, pattern: RegExp): void {
    assert.match(stderr, /^pulumi-lifecycle: [^\n]+\n$/);
    assert.match(stderr, pattern);
    assert.doesNotMatch(stderr, /\n\s+at /);
}

describe("pulumi-lifecycle command line", () => {
    let temp: TempDir;
    let file: string;

    before(async () => {
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
        await writeFile(file, HOSTS);
    });

    after(() => temp.cleanup());

    it("is the package's bin, a node script", async () => {
        const manifest = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8"));
        assert.equal(join(REPO_ROOT, manifest.bin["pulumi-lifecycle"]), MAIN);
        assert.match(await readFile(MAIN, "utf8"), /^#!\/usr\/bin\/env node\n/);
    });

    describe("hosts import", () => {
        it("leaves the system's lines out by default, saying so in the summary and in the program", async () => {
            const result = await run(["hosts", "import", "--file", file]);
            assert.equal(result.code, 0, result.stderr);
            assert.equal(result.stderr, `imported 0 entries from ${file}, skipped 7 lines\n`);
            assert.equal((result.stdout.match(/belongs to the operating system; pass --all/g) ?? []).length, 5);
        });

        it("prints the program on stdout and the summary on stderr", async () => {
            const result = await run(["hosts", "import", "--file", file, "--all"]);
            assert.equal(result.code, 0, result.stderr);
            assert.equal(result.stderr, `imported 5 entries from ${file}, skipped 2 lines\n`);
            const doc = HostsDocument.parse(Buffer.from(HOSTS));
            const expected = renderImportProgram(planImport(doc, { file, includeSystem: true }), {
                file,
                command: `pulumi-lifecycle hosts import --file ${file} --all`,
            });
            assert.equal(result.stdout, expected);
            assert.deepEqual(typeErrors(result.stdout), []);
            assert.deepEqual(
                runProgram(result.stdout).map((declared) => declared.resourceName),
                ["localhost", "debian.example.org", "localhost-ipv6", "ip6-allnodes-ipv6", "ip6-allrouters-ipv6"],
            );
        });

        it("refuses option combinations that cannot work, before reading anything", async () => {
            const dry = await run(["hosts", "import", "-f", file, "--dry-run"]);
            assert.equal(dry.code, 2);
            assert.match(dry.stderr, /--dry-run goes with --stack/);
            const omit = await run(["hosts", "import", "-f", file, "--stack", "dev", "--omit-file"]);
            assert.equal(omit.code, 2);
            assert.match(omit.stderr, /--stack records the file each entry names, and --omit-file names none/);
        });

        it("refuses --stack naming a stack of another project before running Pulumi, writing nothing", async () => {
            const projectDir = join(temp.dir, "atk");
            await mkdir(projectDir, { recursive: true });
            await writeFile(join(projectDir, "Pulumi.yaml"), "name: atk\nruntime: nodejs\n");
            const out = join(projectDir, "program.ts");
            // No `pulumi` on PATH: the refusal must come before the CLI is needed.
            const result = await run(
                ["hosts", "import", "-f", file, "--stack", "organization/otherproj/x", "-o", out],
                {
                    cwd: projectDir,
                    env: { PATH: join(temp.dir, "no-such-bin") },
                },
            );
            assert.equal(result.code, 1);
            assertOneLine(
                result.stderr,
                /--stack organization\/otherproj\/x is a stack of project "otherproj", and the command runs in project "atk" \(Pulumi\.yaml in .*atk\); nothing was imported\. Run the command in the directory of project "otherproj", or name a stack of "atk"\./,
            );
            await assert.rejects(readFile(out), { code: "ENOENT" });
        });

        it("writes the program to --out, never over an existing file", async () => {
            const out = join(temp.dir, "program.ts");
            const written = await run(["hosts", "import", "-f", file, "--all", "--out", out]);
            assert.equal(written.code, 0, written.stderr);
            assert.equal(written.stdout, "");
            assert.match(await readFile(out, "utf8"), /new hosts\.HostEntry\(/);
            const again = await run(["hosts", "import", "-f", file, "--out", out]);
            assert.equal(again.code, 1);
            assert.match(again.stderr, /--out .*program\.ts exists; choose another file or remove it/);
        });

        it("reads HOSTS_FILE when --file is not given, and names it in the program", async () => {
            const result = await run(["hosts", "import"], { env: { HOSTS_FILE: file } });
            assert.equal(result.code, 0, result.stderr);
            assert.match(
                result.stdout,
                new RegExp(`^// Generated by \`pulumi-lifecycle hosts import --file ${file}\``),
            );
            assert.match(result.stderr, /^imported 0 entries from .*, skipped 7 lines/);
        });

        it("imports only matching lines with --match, case-insensitively, and quotes it in the header", async () => {
            const result = await run(["hosts", "import", "-f", file, "--match", "^IP6-ALL", "--all"]);
            assert.equal(result.code, 0, result.stderr);
            assert.equal(result.stderr, `imported 2 entries from ${file}, skipped 0 lines\n`);
            assert.match(result.stdout, /--match '\^IP6-ALL' --all`/);
            assert.deepEqual(
                runProgram(result.stdout).map((declared) => declared.variableName),
                ["ip6AllnodesIpv6", "ip6AllroutersIpv6"],
            );
            const one = await run(["hosts", "import", "-f", file, "-m", "^web", "--all"]);
            assert.equal(one.stderr, `imported 0 entries from ${file}, skipped 2 lines\n`);
            const single = await run(["hosts", "import", "-f", file, "-m", "^debian$", "--all"]);
            assert.equal(single.stderr, `imported 1 entry from ${file}, skipped 0 lines\n`);
        });

        it("fails with exit code 1 and one line for an invalid regular expression", async () => {
            const result = await run(["hosts", "import", "--file", file, "--match", "web(["]);
            assert.equal(result.code, 1);
            assert.equal(result.stdout, "");
            assertOneLine(result.stderr, /--match "web\(\[" is not a valid regular expression/);
        });

        it("fails with exit code 1 and one line naming a missing file", async () => {
            const missing = join(temp.dir, "nowhere", "hosts");
            const result = await run(["hosts", "import", "--file", missing]);
            assert.equal(result.code, 1);
            assert.equal(result.stdout, "");
            assert.equal(result.stderr, `pulumi-lifecycle: cannot read hosts file ${missing}: it does not exist.\n`);
        });

        it("fails with exit code 1 and one line for a file it cannot read", async () => {
            const directory = join(temp.dir, "directory");
            await mkdir(directory, { recursive: true });
            const isDirectory = await run(["hosts", "import", "--file", directory]);
            assert.equal(isDirectory.code, 1);
            assertOneLine(isDirectory.stderr, new RegExp(`cannot read hosts file ${directory}: it is a directory`));

            const utf16 = join(temp.dir, "utf16-hosts");
            await writeFile(utf16, Buffer.from("\uFEFF127.0.0.1 localhost\n", "utf16le"));
            const notText = await run(["hosts", "import", "--file", utf16]);
            assert.equal(notText.code, 1);
            assertOneLine(notText.stderr, /cannot read hosts file .*utf16-hosts: the file is UTF-16 encoded/);

            // Root reads any file, so the check runs as nobody then (the temporary directory is private).
            const secret = join(temp.dir, "secret-hosts");
            await writeFile(secret, HOSTS);
            await chmod(secret, 0o000);
            const denied = await run(["hosts", "import", "--file", secret], { asNobody: isRoot });
            assert.equal(denied.code, 1);
            assertOneLine(denied.stderr, new RegExp(`cannot read hosts file ${secret}: permission denied`));
        });

        it("fails with exit code 2 for an unknown option or an argument", async () => {
            for (const args of [["--fiel", file], [file], ["--file"]]) {
                const result = await run(["hosts", "import", ...args]);
                assert.equal(result.code, 2, args.join(" "));
                assert.equal(result.stdout, "");
                assertOneLine(result.stderr, /Run `pulumi-lifecycle hosts import --help` for usage\./);
            }
            const empty = await run(["hosts", "import", "--file", ""]);
            assert.equal(empty.code, 2);
            assertOneLine(empty.stderr, /--file needs the path of a hosts file/);
        });

        it("prints its help on stdout", async () => {
            const result = await run(["hosts", "import", "--help"]);
            assert.equal(result.code, 0);
            assert.match(result.stdout, /^Usage: pulumi-lifecycle hosts import \[--file FILE\] \[--match REGEX\]/);
            assert.equal(result.stderr, "");
        });
    });

    it("prints the usage on stderr with exit code 2 for an unknown or missing command", async () => {
        for (const args of [["frobnicate"], ["hosts"], ["hosts", "export"], []]) {
            const result = await run(args);
            assert.equal(result.code, 2, args.join(" "));
            assert.equal(result.stdout, "");
            assert.match(result.stderr, /^pulumi-lifecycle: (unknown command "[^"]*"|no command given)\n\nUsage: /);
            assert.match(result.stderr, /\n {2}hosts import {2}print a Pulumi program/);
        }
    });

    it("prints the usage on stdout for --help, also for a group of commands", async () => {
        for (const args of [["--help"], ["-h"], ["help"], ["hosts", "--help"]]) {
            const result = await run(args);
            assert.equal(result.code, 0, args.join(" "));
            assert.match(
                result.stdout,
                /^Usage: pulumi-lifecycle <command> \[options\]\n\nCommands:\n {2}hosts import /,
            );
            assert.equal(result.stderr, "");
        }
    });

    it("prints package.json's version for --version", async () => {
        const { version } = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8"));
        const result = await run(["--version"]);
        assert.equal(result.code, 0);
        assert.equal(result.stdout, `${version}\n`);
    });
});
