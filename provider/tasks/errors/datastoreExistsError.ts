import { LifecycleError } from "../../shared/errors/lifecycleError";
import type { DatastoreRecord } from "../protocol/wire";

/**
 * A datastore with the same natural key exists, and this resource did not create it (no create token, or another one). Says what exists and how to take it over.
 */
export class DatastoreExistsError extends LifecycleError {
    override readonly name = "DatastoreExistsError";

    constructor(
        readonly datastore: string,
        readonly existing: DatastoreRecord,
        readonly hasToken: boolean,
    ) {
        const createdBy = hasToken
            ? "none of the creates of this resource's createToken made it"
            : "this resource has no createToken, so it cannot be told apart from one made by someone else";
        const adoptable =
            existing.state === "ERROR"
                ? "; in state ERROR it is taken over tainted, and the next `pulumi up` replaces it"
                : existing.state === "OK"
                  ? " (its size and type must match the program)"
                  : ` (its size and type must match the program, once it is OK instead of ${existing.state})`;
        super(
            `${datastore} already exists (id ${existing.id}, ${existing.state}, ${existing.capacityInBytes} bytes ${existing.datastoreType}): ${createdBy}. ` +
                `To manage it, set \`adopt: true\`${adoptable}` +
                (hasToken
                    ? ""
                    : ", or, if an interrupted `pulumi up` of this program created it, give the resource the createToken it used") +
                "; otherwise choose another name.",
        );
    }
}
