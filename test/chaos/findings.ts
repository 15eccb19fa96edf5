// Findings of the chaos suite, kept: each file in findings/ is a shrunk plan (its hazards scripted to
// the requests they hit) that broke an invariant on the code it was found on. The CI suite replays every
// one, so a fix stays fixed; `soak.ts --plan findings/<file>` replays one with its whole trace.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { InvariantName } from "./invariants";
import type { Plan } from "./program";

/** One finding: what broke, where it was found, and the plan that breaks it. */
export interface Finding {
    /** What happens, in a sentence. */
    readonly title: string;
    /** The invariant it broke. */
    readonly invariant: InvariantName;
    /** The seed and the code it was found on. */
    readonly found: string;
    /** Where the cause was (for the record; the code may have moved since). */
    readonly cause: string;
    readonly plan: Plan;
}

export const FINDINGS_DIR = join(__dirname, "findings");

/** Every finding, by file name. */
export function loadFindings(dir = FINDINGS_DIR): { file: string; finding: Finding }[] {
    return readdirSync(dir)
        .filter((name) => name.endsWith(".json"))
        .sort()
        .map((name) => ({
            file: join(dir, name),
            finding: JSON.parse(readFileSync(join(dir, name), "utf8")) as Finding,
        }));
}
