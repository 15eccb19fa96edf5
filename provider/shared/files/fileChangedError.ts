/**
 * The file changed after it was read and before our write replaced it: a writer that does not take our
 * lock got in between. Nothing was written; the caller redoes its edits on the new content.
 */
export class FileChangedError extends Error {
    override readonly name = "FileChangedError";
    readonly code = "ECHANGED";

    constructor(readonly file: string) {
        super(`${file} was changed by another writer while this one was writing it; nothing was written`);
    }
}
