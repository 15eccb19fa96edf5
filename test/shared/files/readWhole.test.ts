// Guards reading a file ahead of the lock (readWholeAhead): the bytes come with the signature that vouches
// for them only for a regular file last changed long enough ago; anything else is left to the usual read,
// which says whether its signature vouches for its bytes (settled).

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readWholeAhead, readWholeSync } from "../../../provider/shared/files/readWhole";
import { signatureOf } from "../../../provider/shared/files/signature";
import { makeTempDir, type TempDir } from "../../support/projects";

describe("reading a file ahead of the lock", () => {
    let temp: TempDir;
    let file: string;

    beforeEach(async () => {
        temp = await makeTempDir();
        file = join(temp.dir, "hosts");
        await writeFile(file, "127.0.0.1\tlocalhost\n".repeat(10_000));
    });
    afterEach(() => temp.cleanup());

    const minuteAgo = () => Date.now() / 1000 - 60;

    it("reads a file last changed a while ago whole, with the signature the usual read gives it", async () => {
        await utimes(file, minuteAgo(), minuteAgo());
        const ahead = await readWholeAhead(file);
        assert.ok(ahead, "read ahead");
        const usual = readWholeSync(file);
        assert.deepEqual(ahead.bytes, usual.bytes);
        assert.equal(ahead.signature, usual.signature);
        assert.equal(ahead.signature, signatureOf(statSync(file, { bigint: true })));
    });

    it("vouches for nothing of a file changed moments ago", async () => {
        assert.equal(await readWholeAhead(file), undefined);
    });

    it("vouches for the usual read's bytes by their signature only when the file had settled before the read", async () => {
        assert.equal(readWholeSync(file).settled, false, "changed moments ago");
        await utimes(file, minuteAgo(), minuteAgo());
        assert.equal(readWholeSync(file).settled, true, "changed a minute ago");
        assert.equal((await readWholeAhead(file))?.settled, true);
    });

    it("answers at once, with nothing, for a FIFO (an open that could block, a read that could hang)", async () => {
        const fifo = join(temp.dir, "fifo");
        execFileSync("mkfifo", [fifo]);
        assert.equal(await readWholeAhead(fifo), undefined);
    });

    it("fails for a file that does not exist, as the usual read does", async () => {
        await assert.rejects(readWholeAhead(join(temp.dir, "missing")), { code: "ENOENT" });
    });
});
