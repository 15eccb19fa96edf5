// Guards the chain of idempotency keys a createToken stands for: the first create uses the token, later
// creates of the same resource (after a replacement or a deletion) token~1, token~2, ...

import { strict as assert } from "node:assert";
import { createKey } from "../../../provider/tasks/logic/createKeys";

describe("create keys of a createToken", () => {
    it("are the token, then token~1, token~2", () => {
        assert.deepEqual(
            [0, 1, 2, 10].map((generation) => createKey("tok", generation)),
            ["tok", "tok~1", "tok~2", "tok~10"],
        );
    });
});
