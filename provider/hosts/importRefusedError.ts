/** `hosts import --stack` would make the stack's state wrong; nothing was imported. Says what to do. */
export class ImportRefusedError extends Error {
    override readonly name = "ImportRefusedError";
}
