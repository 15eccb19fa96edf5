// Guards what a user without write access meets, through the real provider process: a clear error that
// names the file, the operation and what to do (run elevated, or set `file`), with the file untouched;
// and, where the file is writable but its directory is not, a successful in-place write that keeps the
// file's owner. As root the provider runs as `nobody`, since root ignores file permissions.

import { strict as assert } from "node:assert";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createHostEntry } from "../../support/hostEntryClient";
import { makeProject, type TempDir } from "../../support/projects";
import { ProviderCallError, ProviderServer } from "../../support/providerServer";
import { isRoot, NOBODY } from "../../support/system";

const BASE = "127.0.0.1\tlocalhost\n# do not touch\n";

describe("a user without write access", () => {
    let project: TempDir;
    let file: string;
    let server: ProviderServer;

    beforeEach(async () => {
        project = await makeProject();
        file = join(project.dir, "hosts");
        await writeFile(file, BASE);
        await chmod(project.dir, 0o755);
        server = await ProviderServer.start({ projectDir: project.dir, ...(isRoot ? { user: NOBODY } : {}) });
        await server.configure({});
    });
    afterEach(async () => {
        await server.stop();
        await chmod(project.dir, 0o755);
        await project.cleanup();
    });

    it("gets a clear error saying to run elevated or set `file`, and the file is untouched", async () => {
        await chmod(file, 0o644);
        if (!isRoot) await chmod(project.dir, 0o555);
        const error = await createHostEntry(server, "web", { address: "10.0.0.5", names: ["web.internal"], file }).then(
            () => assert.fail("the entry was written without permission"),
            (e: unknown) => e,
        );
        assert.ok(error instanceof ProviderCallError);
        assert.equal(
            error.details,
            `cannot write hosts file ${file}: permission denied. Run Pulumi elevated (sudo, or an Administrator ` +
                "shell on Windows), or set `file` (or stack config `pulumi-lifecycle:hostsFile`, or HOSTS_FILE) to a " +
                "hosts file you may write. The file was not changed.",
        );
        assert.equal(error.initFailure, undefined, "nothing was created, so no partial state");
        assert.equal(await readFile(file, "utf8"), BASE);
    });

    it("writes in place when only the file is writable, keeping its owner", async () => {
        await chmod(file, 0o666);
        if (!isRoot) await chmod(project.dir, 0o555);
        const before = await stat(file);
        const created = await createHostEntry(server, "web", { address: "10.0.0.5", names: ["web.internal"], file });
        assert.equal(created.id, "ipv4/web.internal");
        assert.equal(await readFile(file, "utf8"), `${BASE}10.0.0.5\tweb.internal\n`);
        const after = await stat(file);
        assert.deepEqual([after.uid, after.gid, after.mode], [before.uid, before.gid, before.mode]);
    });
});
