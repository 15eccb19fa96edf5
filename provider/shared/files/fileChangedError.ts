/**
 * The file changed after it was read and before our write replaced it: a writer that does not take our
 * lock got in between. Nothing of ours is left in the file; the caller redoes its edits on the new content.
 */
export class FileChangedError extends Error {
    override readonly name = "FileChangedError";
    readonly code = "ECHANGED";

    /**
     * @param shown whether our content was in place for a moment before it was undone (a tool had written
     *   into the file our rename replaced, and its content was put back): a tool that read the file then
     *   may have copied our lines, and a retry may meet them again.
     */
    constructor(
        readonly file: string,
        readonly shown = false,
    ) {
        super(
            shown
                ? `${file} was written into by another writer while this one replaced it; its content was put back, and nothing of this writer's is left`
                : `${file} was changed by another writer while this one was writing it; nothing was written`,
        );
    }
}
