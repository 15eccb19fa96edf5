// Guards what the real-CLI suites take for "the same TypeScript program" when they skip the type-check
// of its later operations (typeCheckedPrograms.ts): the program Pulumi.yaml's `main` names, not only the
// top-level files of the project; and that only a program an operation checked and ran to the end skips
// its later checks.

import { strict as assert } from "node:assert";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir, type TempDir } from "./projects";
import { programKey, typeCheckedOnce } from "./typeCheckedPrograms";

describe("the type-checked programs' key", () => {
    let temp: TempDir;
    beforeEach(async () => {
        temp = await makeTempDir();
    });
    afterEach(() => temp.cleanup());

    it("is the program's in the directory Pulumi.yaml's `main` names, and changes with it", async () => {
        const program = join(temp.dir, "examples", "hosts");
        await mkdir(program, { recursive: true });
        await writeFile(join(temp.dir, "Pulumi.yaml"), "name: demo\nruntime: nodejs\nmain: examples/hosts/index.ts\n");
        await writeFile(join(program, "index.ts"), "export const a = 1;\n");
        const first = programKey(temp.dir);
        assert.equal(typeof first, "string", "a TypeScript program below the project has a key");
        assert.equal(programKey(temp.dir), first, "the same program, the same key");

        await writeFile(join(program, "index.ts"), "export const a = 2;\n");
        assert.notEqual(programKey(temp.dir), first, "an edit of the program changes the key");
    });

    it("follows a quoted `main` that names a directory, and the project's own manifests count", async () => {
        await mkdir(join(temp.dir, "src"));
        await writeFile(join(temp.dir, "Pulumi.yaml"), 'name: demo\nruntime: nodejs\nmain: "src" # the program\n');
        await writeFile(join(temp.dir, "src", "index.ts"), "export const a = 1;\n");
        const first = programKey(temp.dir);
        assert.equal(typeof first, "string");
        await writeFile(join(temp.dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true } }));
        assert.notEqual(programKey(temp.dir), first, "the project's tsconfig is part of the check");
    });

    it("is undefined for a JavaScript program, which is never type-checked", async () => {
        await writeFile(join(temp.dir, "Pulumi.yaml"), "name: demo\nruntime: nodejs\nmain: index.js\n");
        await writeFile(join(temp.dir, "index.js"), "exports.a = 1;\n");
        assert.equal(programKey(temp.dir), undefined);
    });
});

describe("an operation type-checked once", () => {
    let temp: TempDir;
    beforeEach(async () => {
        temp = await makeTempDir();
        await writeFile(join(temp.dir, "Pulumi.yaml"), "name: demo\nruntime: nodejs\nmain: index.ts\n");
        // Unique to the test: the programs this process has checked are remembered by content, not path.
        await writeFile(join(temp.dir, "index.ts"), `export const at = ${JSON.stringify(temp.dir)};\n`);
    });
    afterEach(() => temp.cleanup());

    /** The environment one operation on the project gets, the operation ending as `ok` says. */
    const envOf = async (ok: boolean) =>
        (
            await typeCheckedOnce(
                temp.dir,
                async (env) => ({ env, ok }),
                (r) => r.ok,
            )
        ).env;

    it("is type-checked until one succeeds, then runs transpile-only until the program changes", async () => {
        assert.deepEqual(await envOf(false), {}, "the first operation is checked");
        assert.deepEqual(await envOf(true), {}, "a failed operation vouches for nothing: the next is checked");
        assert.deepEqual(await envOf(true), { PULUMI_NODEJS_TRANSPILE_ONLY: "true" }, "checked and ran: skipped");
        await writeFile(join(temp.dir, "index.ts"), `export const at = ${JSON.stringify(temp.dir)}, a = 2;\n`);
        assert.deepEqual(await envOf(true), {}, "an edited program is checked again");
    });

    it("never skips a JavaScript program's check, which the SDK does not run", async () => {
        await writeFile(join(temp.dir, "Pulumi.yaml"), "name: demo\nruntime: nodejs\nmain: index.js\n");
        await rm(join(temp.dir, "index.ts"));
        await writeFile(join(temp.dir, "index.js"), `exports.at = ${JSON.stringify(temp.dir)};\n`);
        assert.deepEqual(await envOf(true), {});
        assert.deepEqual(await envOf(true), {});
    });
});
