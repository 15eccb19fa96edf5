// Where the tests' provider processes record their creates and deletes in flight (sentCreates.ts): a
// directory of this test process's own, removed when it exits. The default, this user's private
// directory, outlives every run, and a record left there by an earlier run whose server had the same
// port (the kernel reuses them) would be followed by a later test as its own.

import { makeProcessTempDir } from "./projects";

let directory: string | undefined;

/** This test process's directory of records in flight. */
export function recordsDirectory(): string {
    directory ??= makeProcessTempDir("pulumi-lifecycle-test-records-");
    return directory;
}
