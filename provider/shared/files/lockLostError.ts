/**
 * A writer found, just before replacing the file, that its lock was no longer its own (it was stopped or
 * hung long enough for a writer on another host to judge it abandoned). Nothing was written.
 */
export class LockLostError extends Error {
    override readonly name = "LockLostError";
    readonly code = "ELOCKLOST";

    constructor(readonly lockFile: string) {
        super(`the lock ${lockFile} was taken over by another writer; nothing was written`);
    }
}
