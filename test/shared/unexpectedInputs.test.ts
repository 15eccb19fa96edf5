// The guess that an unexpected property's failure offers: typos, case, and names that hold the input's.

import { strict as assert } from "node:assert";
import { editDistance, likelyMeant, unexpectedInputs } from "../../provider/shared/unexpectedInputs";

const INPUTS = ["address", "names", "comment", "file", "adopt", "createToken", "timeouts"];

describe("unexpectedInputs", () => {
    it("guesses the input a misspelt property meant", () => {
        const cases: [string, string | undefined][] = [
            ["hostsFile", "file"], // holds the input's name
            ["filePath", "file"],
            ["adress", "address"], // a letter left out
            ["adderss", "address"], // two letters swapped
            ["name", "names"], // held in the input's name
            ["NAMES", "names"], // case
            ["createTokn", "createToken"],
            ["timeout", "timeouts"],
            ["fil", "file"], // one edit from a short name
            ["colour", undefined], // like nothing
            ["ip", undefined],
            ["fine", "file"],
            ["fines", undefined], // two edits from a 4-letter name is another word
        ];
        for (const [property, meant] of cases) assert.equal(likelyMeant(property, INPUTS), meant, property);
    });

    it("counts a swap of neighbours as one edit", () => {
        assert.equal(editDistance("adderss", "address"), 1);
        assert.equal(editDistance("kitten", "sitting"), 3);
        assert.equal(editDistance("", "abc"), 3);
    });

    it("fails only on set properties that are neither inputs nor state, leaving the SDK's own alone", () => {
        const failures = unexpectedInputs(
            "Thing",
            { file: "x", line: 3, __provider: "p", unset: undefined, extra: null, hostsFile: "y" },
            ["file"],
            ["line"],
        );
        assert.deepEqual(
            failures.map((failure) => failure.property),
            ["extra", "hostsFile"],
        );
        assert.equal(
            failures[1]?.reason,
            "Thing has no input `hostsFile`. Did you mean `file`? Its inputs are file; correct or remove `hostsFile`.",
        );
    });
});
