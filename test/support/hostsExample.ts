// The hosts file the examples/hosts program (and the root program, which runs it) is tested against, and
// the lines it writes there; shared by its harness and real-CLI suites.

import { strict as assert } from "node:assert";
import { readFile } from "node:fs/promises";

/** What the file holds before the program runs; every byte of it must survive. */
export const BASE = "127.0.0.1\tlocalhost\n# kept as it is\n";
export const WEB = "10.0.0.5\tweb.internal web # frontend\n";
export const API = (address: string) => `${address}\tapi.internal api\n`;
export const API_IPV6 = "fd00::6\tapi.internal api # the same names, for IPv6\n";

/** Asserts the file is `BASE` followed by exactly `lines`, in the order the entries happened to be created. */
export async function assertEntries(file: string, lines: string[]): Promise<void> {
    const text = await readFile(file, "utf8");
    assert.ok(text.startsWith(BASE), "every byte before the entries is as it was");
    assert.deepEqual(
        text
            .slice(BASE.length)
            .split(/(?<=\n)/)
            .sort(),
        [...lines].sort(),
    );
}
