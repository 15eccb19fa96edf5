// Guards the chain of idempotency keys a createToken stands for: the first create uses the token, later
// creates of the same resource (after a replacement or a deletion) token~1, token~2, ...; a key is
// recognised as the token's only when it is exactly one of these.

import { strict as assert } from "node:assert";
import { createKey, generationOf } from "../../provider/tasks/datastoreProvider";

describe("create keys of a createToken", () => {
    it("are the token, then token~1, token~2", () => {
        assert.deepEqual(
            [0, 1, 2, 10].map((generation) => createKey("tok", generation)),
            ["tok", "tok~1", "tok~2", "tok~10"],
        );
    });

    it("map back to their generation", () => {
        for (const generation of [0, 1, 2, 10, 999])
            assert.equal(generationOf("tok", createKey("tok", generation)), generation);
    });

    it("are not confused with other tokens or malformed suffixes", () => {
        for (const key of [
            undefined,
            "other",
            "tok2",
            "tok~",
            "tok~0",
            "tok~01",
            "tok~1x",
            "tok~-1",
            "xtok~1",
            "tok~1~2",
        ]) {
            assert.equal(generationOf("tok", key), undefined, String(key));
        }
    });
});
