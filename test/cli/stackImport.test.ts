// Guards the compare-and-swap of `hosts import --stack` where no lock can be taken (any backend but the
// local file one, e.g. Pulumi Cloud): the state is read again right before the import and compared
// with the one the entries were computed from; a difference means computing again and reading once
// more, a few times, then refusing with nothing imported. Pulumi here is a stand-in `pulumi` on PATH
// that keeps the CLI's contract for the commands the helper runs (whoami --json, stack export, stack
// import reading the deployment from stdin and failing on an empty one), serving a scripted sequence
// of states, as a cloud stack that others update would. (The file backend, with the CLI's own lock and
// the real CLI: test/realCli/importHelperRaces.test.ts.)

import { strict as assert } from "node:assert";
import { chmod, mkdir, readdir, readFile, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CliError } from "../../provider/cli/cliError";
import { recordInStack } from "../../provider/cli/stackImport";
import { ImportRefusedError } from "../../provider/hosts/errors/importRefusedError";
import { HostsDocument } from "../../provider/hosts/logic/hostsDocument";
import { planImport } from "../../provider/hosts/logic/importer";
import { addEntriesToState, type Deployment } from "../../provider/hosts/logic/importState";
import { makeTempDir, type TempDir } from "../support/projects";
import { useTmpdir } from "../support/system";

const PLAN = planImport(HostsDocument.parse(Buffer.from("10.0.0.5 web.internal\n")), { file: "/etc/hosts" });
const OPTIONS = { project: "site", stack: "dev", serializedShim: "exports.handler = ...", protect: true };
const ROOT = { urn: "urn:pulumi:dev::site::pulumi:pulumi:Stack::site-dev", type: "pulumi:pulumi:Stack" };
const other = (name: string) => ({ urn: `urn:pulumi:dev::site::x:index:Thing::${name}`, type: "x:index:Thing" });

const STAND_IN = `
const fs = require("node:fs");
const path = require("node:path");
const config = JSON.parse(fs.readFileSync(path.join(__dirname, "config.json"), "utf8"));
const args = process.argv.slice(2);
const next = (kind) => {
    for (let n = 1; ; n++) {
        try {
            fs.writeFileSync(path.join(config.record, kind + "-" + n), "", { flag: "wx" });
            return n;
        } catch (error) {
            if (error.code !== "EEXIST") throw error;
        }
    }
};
if (args[0] === "whoami") {
    process.stdout.write(JSON.stringify({ user: "someone", url: config.url }));
} else if (args[0] === "stack" && args[1] === "export") {
    const n = next("export");
    const deployment = config.states[Math.min(n, config.states.length) - 1];
    process.stdout.write(JSON.stringify({ version: 3, deployment }, null, 4));
} else if (args[0] === "stack" && args[1] === "import") {
    const input = fs.readFileSync(0, "utf8");
    let parsed;
    try {
        parsed = JSON.parse(input);
    } catch {
        process.stderr.write("error: EOF\\n");
        process.exit(255);
    }
    if (config.importError) {
        process.stderr.write(config.importError + "\\n");
        process.exit(255);
    }
    fs.writeFileSync(path.join(config.record, "imported-" + next("import") + ".json"), JSON.stringify(parsed));
    process.stdout.write("Import complete.\\n");
} else {
    process.stderr.write("unexpected: " + args.join(" ") + "\\n");
    process.exit(2);
}
`;

describe("hosts import --stack on a backend without a lock: compare-and-swap", () => {
    let temp: TempDir;
    let reports: string[];
    let restoreTmpdir: () => void;

    beforeEach(async () => {
        temp = await makeTempDir();
        reports = [];
        // The helper's TMPDIR (its private directory, the leftovers it sweeps) is the test's own.
        await mkdir(join(temp.dir, "tmp"));
        restoreTmpdir = useTmpdir(join(temp.dir, "tmp"));
        await writeFile(join(temp.dir, "pulumi"), `#!${process.execPath}\n${STAND_IN}`);
        await chmod(join(temp.dir, "pulumi"), 0o755);
    });
    afterEach(async () => {
        restoreTmpdir();
        await temp.cleanup();
    });

    /** Serves `states` to successive exports, and records what the helper then does. */
    async function record(states: Deployment[], importError?: string, beforeImport = async () => undefined) {
        await writeFile(
            join(temp.dir, "config.json"),
            JSON.stringify({ url: "https://api.pulumi.com", states, record: temp.dir, importError }),
        );
        return recordInStack({
            reference: "dev",
            project: "site",
            stackName: "dev",
            place: { cwd: temp.dir, env: { ...process.env, PATH: `${temp.dir}:${process.env.PATH}` } },
            compute: (deployment) => addEntriesToState(deployment, PLAN, OPTIONS),
            beforeImport,
            report: (line) => reports.push(line),
        });
    }

    async function recorded(kind: "export" | "import"): Promise<number> {
        return (await readdir(temp.dir)).filter((name) => new RegExp(`^${kind}-\\d+$`).test(name)).length;
    }

    async function imported(): Promise<Deployment[]> {
        const names = (await readdir(temp.dir)).filter((name) => name.startsWith("imported-")).sort();
        return Promise.all(
            names.map(
                async (name) => JSON.parse(await readFile(join(temp.dir, name), "utf8")).deployment as Deployment,
            ),
        );
    }

    const urns = (deployment: Deployment | undefined) => (deployment?.resources ?? []).map((r) => r.urn);

    it("imports at once when the state read again is the one the entries were computed from", async () => {
        const result = await record([{ resources: [ROOT, other("a")] }]);
        assert.deepEqual(
            result.added.map((a) => a.id),
            ["ipv4/web.internal"],
        );
        assert.equal(await recorded("export"), 2);
        const [state, ...more] = await imported();
        assert.deepEqual(more, []);
        assert.ok(urns(state).includes(other("a").urn));
        assert.ok(urns(state).some((urn) => urn.endsWith("HostEntry::web.internal")));
        assert.deepEqual(reports, []);
    });

    it("computes again from a state that changed after it was read, and imports once two reads agree", async () => {
        await record([{ resources: [ROOT] }, { resources: [ROOT, other("made-meanwhile")] }]);
        assert.equal(await recorded("export"), 3, "read again until two reads agreed");
        const [state, ...more] = await imported();
        assert.deepEqual(more, [], "one import, the first attempt's was abandoned");
        assert.ok(urns(state).includes(other("made-meanwhile").urn), "what was made meanwhile is kept");
        assert.ok(urns(state).some((urn) => urn.endsWith("HostEntry::web.internal")));
        assert.match(String(reports[0]), /^stack dev changed after it was read .* computed again from its new state$/);
    });

    it("refuses, importing nothing, when the state changed on every read", async () => {
        const states = [0, 1, 2, 3].map((n) => ({ resources: [ROOT, other(`v${n}`)] }));
        await assert.rejects(
            record(states),
            (error: unknown) =>
                error instanceof CliError &&
                /^stack dev changed 3 times while the entries were being recorded \(an update is running on it\?\); nothing was written\. Run the command again when it has finished\.$/.test(
                    error.message,
                ),
        );
        assert.deepEqual(await imported(), []);
    });

    it("imports nothing when the new state refuses the entries (someone recorded them meanwhile)", async () => {
        const theirs = addEntriesToState({ resources: [ROOT] }, PLAN, OPTIONS).deployment;
        await assert.rejects(record([{ resources: [ROOT] }, theirs]), ImportRefusedError);
        assert.deepEqual(await imported(), []);
    });

    it("imports nothing when the check right before the import fails", async () => {
        await assert.rejects(
            record([{ resources: [ROOT] }], undefined, async () => {
                throw new CliError("the hosts file changed", 1);
            }),
            /the hosts file changed/,
        );
        assert.deepEqual(await imported(), []);
    });

    it("says nothing was written when the import finds the stack taken by another operation", async () => {
        const locked =
            "error: could not import deployment: the stack is currently locked by 1 lock(s). Either wait for the " +
            "other process(es) to end or delete the lock file with `pulumi cancel`.";
        await assert.rejects(
            record([{ resources: [ROOT] }], locked),
            (error: unknown) =>
                error instanceof CliError &&
                error.message.includes("the stack is currently locked by 1 lock(s)") &&
                /Another Pulumi operation took stack dev just before the import, which refused it: nothing was written\. Run the command again when it has finished\.$/.test(
                    error.message,
                ),
        );
    });

    it("removes the copies of a state that earlier versions left in TMPDIR, and nothing else", async () => {
        const tmp = join(temp.dir, "tmp");
        const copy = async (name: string, files: string[], ageMs: number) => {
            const dir = join(tmp, name);
            await mkdir(dir);
            for (const file of files)
                await writeFile(join(dir, file), JSON.stringify({ deployment: {} }), { mode: 0o600 });
            const at = (Date.now() - ageMs) / 1000;
            await utimes(dir, at, at);
            return dir;
        };
        const left = await copy("pulumi-lifecycle-import-AbC123", ["deployment.json"], 3_600_000);
        const inUse = await copy("pulumi-lifecycle-import-Fresh1", ["deployment.json"], 0);
        const notOurs = await copy("pulumi-lifecycle-import-Other1", ["deployment.json", "notes.txt"], 3_600_000);
        await symlink(left, join(tmp, "pulumi-lifecycle-import-Link01"));
        await record([{ resources: [ROOT] }]);
        assert.deepEqual((await readdir(tmp)).filter((name) => name.startsWith("pulumi-lifecycle-import-")).sort(), [
            "pulumi-lifecycle-import-Fresh1",
            "pulumi-lifecycle-import-Link01",
            "pulumi-lifecycle-import-Other1",
        ]);
        assert.deepEqual(await readdir(inUse), ["deployment.json"]);
        assert.deepEqual((await readdir(notOurs)).sort(), ["deployment.json", "notes.txt"]);
        assert.deepEqual(reports, [
            `removed ${left}, a copy of a stack's state an earlier version of this command left behind`,
        ]);
    });
});
