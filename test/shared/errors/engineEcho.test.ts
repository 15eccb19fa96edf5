// Guards shownOnItsRow (provider/shared/errors/engineEcho.ts): the SDK's dynamic-provider server prints
// `${error}: ${error.stack}` for a failed check, diff, read or delete, which the engine shows under the
// Stack row (the message twice more, and stack frames; seen under the real CLI, see
// test/realCli/errorGuidance.test.ts). Exactly that echo of an error handed over is dropped; any other
// line, the same error printed another way, and the echo of an error never handed over still print.

import { strict as assert } from "node:assert";
import { shownOnItsRow } from "../../../provider/shared/errors/engineEcho";

describe("shownOnItsRow: the SDK's echo of an error the engine shows on its row is dropped", () => {
    let printed: unknown[][];
    let original: typeof console.error;
    let underneath: typeof console.error;

    beforeEach(() => {
        printed = [];
        original = console.error;
        underneath = (...args: unknown[]) => {
            printed.push(args);
        };
        console.error = underneath;
    });
    afterEach(() => {
        console.error = original;
    });

    it("drops the echo once, and prints everything else", () => {
        const error = shownOnItsRow(new Error('datastore "ds19": could not reach the task API'));
        const echo = `${error}: ${error.stack}`;
        console.error(echo);
        console.error(echo);
        console.error("another line");
        console.error(String(error));
        const other = new Error("not handed over");
        console.error(`${other}: ${other.stack}`);
        const lines = printed.map((args) => args.join(" "));
        assert.deepEqual(lines, [echo, "another line", String(error), `${other}: ${other.stack}`]);
    });
});
