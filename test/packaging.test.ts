// Guards the package as users meet it: `npm pack`, installed by name into a fresh project next to its
// peer @pulumi/pulumi, used from a program, run through the real provider process from that install.
// Also: what the tarball holds, the bin, a `__provider` of at most 600 bytes that names the package,
// not a path, the same text wherever it is installed, a pnpm-style isolated layout, and a stack made in one
// project destroyed from another location (another machine deleting what this one created).

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { cp, mkdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { npmInstallArgs, packedTarball } from "./compat/support/installs";
import { Harness } from "./harness/harness";
import { makeTempDir, REPO_ROOT, type TempDir } from "./support/projects";
import { registryEnv } from "./support/registry";

const run = promisify(execFile);
const HOSTS = "127.0.0.1\tlocalhost\n";
const PROGRAM = `import { hosts } from "pulumi-lifecycle";

const web = new hosts.HostEntry("web", { address: "10.0.0.5", names: ["web.internal", "web"], file: "./hosts" });
export const line = web.line;
export const id = web.id;
`;

async function writeProject(dir: string, dependencies: Record<string, string>): Promise<void> {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "Pulumi.yaml"), "name: app\nruntime: nodejs\n");
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, dependencies }, null, 2));
    await writeFile(join(dir, "index.ts"), PROGRAM);
    await writeFile(join(dir, "hosts"), HOSTS);
}

/** The harness on an installed project: its provider processes run exactly as a user's. */
function installedHarness(projectDir: string, stateFile: string): Harness {
    return new Harness({ projectDir, stateFile, asInstalled: true });
}

describe("the packed package, installed by name in a fresh project", function () {
    this.timeout(300_000);
    let temp: TempDir;
    let tarball: string;
    let app: string;

    before(async () => {
        temp = await makeTempDir("pulumi-lifecycle-pack-");
        // The one tarball of the test run, shared with the compatibility matrix (test/compat).
        tarball = await packedTarball();
        app = join(temp.dir, "app");
        const pulumiVersion = (
            JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as {
                devDependencies: Record<string, string>;
            }
        ).devDependencies["@pulumi/pulumi"] as string;
        await writeProject(app, { "pulumi-lifecycle": `file:${tarball}`, "@pulumi/pulumi": pulumiVersion });
        // Without the dependencies' install scripts (npmInstallArgs says why): most of what the install cost.
        await run("npm", npmInstallArgs({ ignoreScripts: true }), { cwd: app, env: registryEnv() });
    });
    after(() => temp.cleanup());

    let providerText: Promise<string> | undefined;
    /** The `__provider` the npm-installed app stores for its HostEntry. */
    function appProviderText(): Promise<string> {
        providerText ??= (async () => {
            const harness = installedHarness(app, join(app, "state-provider.json"));
            const result = await harness.up();
            await harness.destroy();
            return result.state.resources[0]?.inputs.__provider as string;
        })();
        return providerText;
    }

    it("ships the compiled package only: JavaScript, declarations, README, LICENSE and package.json, with no install script", async () => {
        const { stdout } = await run("tar", ["-tzf", tarball]);
        const files = stdout
            .split("\n")
            .filter(Boolean)
            .map((entry) => entry.replace(/^package\//, ""));
        assert.ok(
            files.includes("dist/index.js") && files.includes("dist/index.d.ts") && files.includes("dist/runtime.js"),
        );
        assert.ok(files.includes("dist/cli/main.js") && files.includes("README.md") && files.includes("package.json"));
        assert.ok(files.includes("LICENSE"), "the license text package.json names");
        const unexpected = files.filter(
            (f) => !/^dist\/.*\.(js|d\.ts)$/.test(f) && !["README.md", "LICENSE", "package.json"].includes(f),
        );
        assert.deepEqual(unexpected, []);
        // npm 11 flags a package that runs a script where it is installed (prepare builds from a git URL
        // through prepack instead).
        const shipped = JSON.parse(
            await readFile(join(app, "node_modules", "pulumi-lifecycle", "package.json"), "utf8"),
        );
        const installScripts = ["preinstall", "install", "postinstall", "prepare"].filter(
            (s) => s in (shipped.scripts ?? {}),
        );
        assert.deepEqual(installScripts, []);
    });

    it("installs two runtime dependencies, the SigV4 signer and the SSH client, loaded only when used, besides its peer @pulumi/pulumi", async () => {
        const manifest = JSON.parse(
            await readFile(join(app, "node_modules", "pulumi-lifecycle", "package.json"), "utf8"),
        );
        assert.deepEqual(Object.keys(manifest.dependencies), ["aws4", "ssh2"]);
        const signer = JSON.parse(await readFile(join(app, "node_modules", "aws4", "package.json"), "utf8"));
        assert.equal(signer.dependencies, undefined, "aws4 brings nothing else");
        const ssh = JSON.parse(await readFile(join(app, "node_modules", "ssh2", "package.json"), "utf8"));
        assert.deepEqual(
            Object.keys(ssh.dependencies).sort(),
            ["asn1", "bcrypt-pbkdf"],
            "ssh2 brings two small modules",
        );
        assert.deepEqual(Object.keys(manifest.peerDependencies), ["@pulumi/pulumi"]);
        // Loading the package loads neither: a program without AWS Cloud Control or remote entries never does.
        const loaded = await run(
            process.execPath,
            [
                "-e",
                "require('pulumi-lifecycle'); console.log(Object.keys(require.cache).filter((m) => /node_modules.(aws4|ssh2)./.test(m)).length)",
            ],
            { cwd: app },
        );
        assert.equal(loaded.stdout.trim(), "0");
    });

    it("loads the task API server only from its own entry point, never with the package", async () => {
        const script = `
            require("pulumi-lifecycle");
            require("pulumi-lifecycle/runtime");
            const before = Object.keys(require.cache).filter((path) => path.includes("taskApiServer")).length;
            const { startTaskApiServer } = require("pulumi-lifecycle/task-api-server");
            process.stdout.write(JSON.stringify({ before, start: typeof startTaskApiServer }));
        `;
        const { stdout } = await run(process.execPath, ["-e", script], { cwd: app });
        assert.deepEqual(JSON.parse(stdout), { before: 0, start: "function" });
    });

    it("runs its command line through npx", async () => {
        const { stdout } = await run("npx", ["--no-install", "pulumi-lifecycle", "--version"], { cwd: app });
        assert.equal(stdout.trim(), "0.1.0");
    });

    it("runs up, refresh, up and destroy through the real provider process of the install", async () => {
        const harness = installedHarness(app, join(app, "state.json"));
        const created = await harness.up();
        assert.ok(created.ok, created.plan);
        assert.deepEqual(created.outputs, { line: 2, id: "ipv4/web.internal" });
        assert.equal(await readFile(join(app, "hosts"), "utf8"), `${HOSTS}10.0.0.5\tweb.internal web\n`);
        assert.deepEqual(
            (await harness.refresh()).calls.map((c) => c.method),
            ["Read"],
        );
        assert.deepEqual(
            (await harness.up()).steps.map((s) => s.kind),
            ["same"],
        );
        const destroyed = await harness.destroy();
        assert.ok(destroyed.ok, destroyed.plan);
        assert.equal(await readFile(join(app, "hosts"), "utf8"), HOSTS);
    });

    it("stores a __provider of at most 600 bytes: a reference to the package by name, no path, no code", async () => {
        const text = await appProviderText();
        assert.ok(text.length <= 600, `${text.length} bytes`);
        for (const path of [app, REPO_ROOT, temp.dir, "/tmp/", "/work/", "node_modules"]) {
            assert.ok(!text.includes(path), `__provider mentions ${path}`);
        }
        assert.deepEqual(
            [...new Set(text.match(/require\([^)]*\)/g))],
            ['require("pulumi-lifecycle/provider/hostEntry")'],
        );
        assert.ok(!text.includes("providerFor"), "the forwarding code is loaded by name, not copied into the state");
        // Where the SDK cannot resolve the package from its own location, it stores the file's path in the
        // package instead: that path must resolve to the same provider object.
        const { stdout } = await run(
            process.execPath,
            [
                "-e",
                'process.stdout.write(String(require("pulumi-lifecycle/dist/hosts/hostEntryShim.js") === require("pulumi-lifecycle/provider/hostEntry")))',
            ],
            { cwd: app },
        );
        assert.equal(stdout, "true");
    });

    it("works in a pnpm-style isolated layout, where only direct dependencies are visible", async () => {
        // pnpm: node_modules/<pkg> links into node_modules/.pnpm/<pkg>@<version>/node_modules/<pkg>, whose
        // own dependencies and peers are links beside it; nothing else is hoisted to the project's root.
        const pnpmApp = join(temp.dir, "pnpm-app");
        await writeProject(pnpmApp, {});
        const store = join(pnpmApp, "node_modules", ".pnpm");
        const packageHome = join(store, "pulumi-lifecycle@0.1.0", "node_modules");
        await mkdir(join(packageHome, "@pulumi"), { recursive: true });
        await cp(join(app, "node_modules", "pulumi-lifecycle"), join(packageHome, "pulumi-lifecycle"), {
            recursive: true,
        });
        await symlink(
            join(app, "node_modules", "@pulumi", "pulumi"),
            join(packageHome, "@pulumi", "pulumi"),
            "junction",
        );
        for (const dependency of ["aws4", "ssh2"]) {
            await symlink(join(app, "node_modules", dependency), join(packageHome, dependency), "junction");
        }
        await mkdir(join(pnpmApp, "node_modules", "@pulumi"));
        await symlink(
            join(packageHome, "pulumi-lifecycle"),
            join(pnpmApp, "node_modules", "pulumi-lifecycle"),
            "junction",
        );
        await symlink(
            join(app, "node_modules", "@pulumi", "pulumi"),
            join(pnpmApp, "node_modules", "@pulumi", "pulumi"),
            "junction",
        );

        const harness = installedHarness(pnpmApp, join(pnpmApp, "state.json"));
        const created = await harness.up();
        assert.ok(created.ok, created.plan);
        assert.equal(await readFile(join(pnpmApp, "hosts"), "utf8"), `${HOSTS}10.0.0.5\tweb.internal web\n`);
        assert.equal(
            created.state.resources[0]?.inputs.__provider,
            await appProviderText(),
            "the same __provider text as the npm layout at another path",
        );
        const destroyed = await harness.destroy();
        assert.ok(destroyed.ok, destroyed.plan);
        assert.equal(await readFile(join(pnpmApp, "hosts"), "utf8"), HOSTS);
    });

    it("lets another location delete what this one created, from the state alone", async () => {
        const state = join(temp.dir, "moved-state.json");
        const created = await installedHarness(app, state).up();
        assert.ok(created.ok, created.plan);
        const elsewhere = join(temp.dir, "elsewhere");
        await rename(app, elsewhere);
        try {
            const destroyed = await installedHarness(elsewhere, state).destroy();
            assert.ok(destroyed.ok, destroyed.plan);
            assert.equal(await readFile(join(elsewhere, "hosts"), "utf8"), HOSTS);
        } finally {
            await rename(elsewhere, app);
        }
    });
});
