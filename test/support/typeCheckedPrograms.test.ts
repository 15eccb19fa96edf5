// Guards what the real-CLI suites take for "the same TypeScript program" when they skip the type-check
// of its later operations (typeCheckedPrograms.ts): the program Pulumi.yaml's `main` names, not only the
// top-level files of the project.

import { strict as assert } from "node:assert";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir, type TempDir } from "./projects";
import { programKey } from "./typeCheckedPrograms";

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
