import { LifecycleError } from "../shared/errors/lifecycleError";
import { quote } from "../shared/text";

/** A `filter` query parameter that does not follow the grammar; the server answers it 400. */
export class FilterSyntaxError extends LifecycleError {
    override readonly name = "FilterSyntaxError";

    constructor(
        /** 1-based position of the offending character in the filter. */
        readonly position: number,
        /** What the grammar allows there, e.g. `"eq"`. */
        readonly expected: string,
        /** What is there instead; undefined at the end of the filter. */
        readonly found: string | undefined,
        /** Advice appended to the message. */
        hint?: string,
    ) {
        const what = found === undefined ? "the end of the filter" : quote(found);
        super(`filter: expected ${expected} at position ${position}, found ${what}${hint ? `; ${hint}` : ""}`);
    }
}
